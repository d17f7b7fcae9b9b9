/** GET /pets/{petId} over HTTP: the deprecated operation, its headers, its errors and its sunset. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeOf } from '../../shared/routes';
import { expectCommonHeaders, expectError, startLocalApi, type LocalApi } from '../support/local-api';

const SUNSET = 'Thu, 05 Dec 2030 00:00:00 GMT';
const sunsetAt = new Date(SUNSET).getTime();

let api: LocalApi;
let pet: { id: number };
beforeAll(async () => {
  api = await startLocalApi();
  pet = await api.petStore.pets.create({ name: 'Rex', categoryId: 1 });
});
afterAll(() => api.close());

const expectDeprecationHeaders = (response: Response) => {
  const deprecation = response.headers.get('deprecation') ?? '';
  expect(deprecation).toMatch(/^@\d+$/);
  expect(Number(deprecation.slice(1)) * 1000).toBeLessThanOrEqual(sunsetAt);
  expect(response.headers.get('sunset')).toBe(SUNSET);
  expect(response.headers.get('link')).toBe(`<${api.url}/pets>; rel="successor-version"`);
};

describe('GET /pets/{petId}', () => {
  it('answers the pet, with Deprecation, Sunset and a successor-version link', async () => {
    const response = await api.call(`/pets/${pet.id}`);
    expect(response.status).toBe(200);
    expectCommonHeaders(response);
    expectDeprecationHeaders(response);
    expect(await response.json()).toEqual({ id: pet.id, name: 'Rex', categoryId: 1, status: 'available' });
  });

  it('answers 404 not_found for an id no pet has, still with the deprecation headers', async () => {
    const response = await api.call('/pets/123456789');
    expectDeprecationHeaders(response);
    expect((await expectError(response, 404, 'not_found')).message).toContain('123456789');
  });

  it.each(['abc', '0', '-1', '1.5', '007', '9007199254740992', '1e3', '%20'])(
    'answers 400 validation_failed for petId %s',
    async (petId) => {
      const body = await expectError(await api.call(`/pets/${petId}`), 400, 'validation_failed');
      expect(body.message).toContain("'petId'");
    },
  );

  it('accepts the largest id there is (and finds no pet)', async () => {
    await expectError(await api.call(`/pets/${Number.MAX_SAFE_INTEGER}`), 404, 'not_found');
  });

  it('uses one constant Deprecation date no later than the route table’s sunset', () => {
    const deprecated = routeOf('getPet').deprecated;
    expect(deprecated?.sunsetAt.toUTCString()).toBe(SUNSET);
    expect(deprecated && deprecated.deprecatedAt <= deprecated.sunsetAt).toBe(true);
  });
});

describe('GET /pets/{petId} around its sunset (injected clock)', () => {
  let clock: number;
  let late: LocalApi;
  beforeAll(async () => {
    clock = sunsetAt - 1;
    late = await startLocalApi({ now: () => new Date(clock) });
  });
  afterAll(() => late.close());

  it('still answers one millisecond before the sunset, and 410 gone from the sunset on', async () => {
    clock = sunsetAt - 1;
    await expectError(await late.call('/pets/1'), 404, 'not_found');
    clock = sunsetAt;
    const response = await late.call('/pets/1');
    expect(response.headers.get('sunset')).toBe(SUNSET);
    expect((await expectError(response, 410, 'gone')).message).toContain('GET /pets');
    clock = sunsetAt + 365 * 24 * 3600 * 1000;
    await expectError(await late.call('/pets/abc'), 410, 'gone');
  });

  it('leaves the other operations working after the sunset', async () => {
    clock = sunsetAt + 1;
    expect((await late.petStore.pets.list()).pets).toEqual([]);
  });
});
