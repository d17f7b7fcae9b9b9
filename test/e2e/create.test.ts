/** POST /pets over HTTP: the 201, every way a body can be refused, and concurrent creates. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../shared/http/json-body';
import type { Pet } from '../../client/src/index';
import {
  allPets,
  createPetAnswer,
  expectCommonHeaders,
  expectError,
  inParallel,
  postJson,
  startLocalApi,
  type LocalApi,
} from '../support/local-api';

let api: LocalApi;
beforeAll(async () => {
  api = await startLocalApi();
});
afterAll(() => api.close());

const post = (body: string | undefined, headers: Record<string, string> = { 'Content-Type': 'application/json' }) =>
  api.call('/pets', { method: 'POST', headers, ...(body === undefined ? {} : { body }) });

const countPets = async () => (await allPets(api, { pageSize: 100 })).length;

describe('POST /pets', () => {
  it('creates a pet, answers 201 with it and its Location, and starts it as available', async () => {
    const { response, body } = await createPetAnswer(api.petStore, { name: 'Rex', categoryId: 7 });
    expect(response.status).toBe(201);
    expectCommonHeaders(response);
    const pet = body as Pet;
    expect(pet).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 7, status: 'available' });
    expect(Number.isSafeInteger(pet.id) && pet.id > 0).toBe(true);
    expect(response.headers.get('location')).toBe(`${api.url}/pets/${pet.id}`);

    // Read back at that URL (GET /pets/{id}), the pet is the one answered.
    expect(await api.petStore.pets.get(pet.id)).toEqual(pet);
  });

  it('keeps a given status, and accepts a JSON content type with parameters', async () => {
    const response = await post(JSON.stringify({ name: 'Tom', categoryId: 2, status: 'sold' }), {
      'Content-Type': 'application/json; charset=utf-8',
    });
    expect(response.status).toBe(201);
    expect(((await response.json()) as { status: string }).status).toBe('sold');
  });

  it.each([
    'Application/JSON',
    'application/vnd.petstore+json',
    'APPLICATION/JSON; CHARSET=UTF-8',
    'application/json ; charset=utf-8',
    'application/json;',
  ])('accepts the JSON media type written %s (any case, spaces around the parameters, RFC 9110)', async (contentType) => {
    expect((await post(JSON.stringify({ name: 'Tom', categoryId: 2 }), { 'Content-Type': contentType })).status).toBe(201);
  });

  it('accepts the largest ids and names there are', async () => {
    const name = 'n'.repeat(256);
    const { response, body } = await createPetAnswer(api.petStore, { name, categoryId: Number.MAX_SAFE_INTEGER });
    expect(response.status).toBe(201);
    expect(body).toMatchObject({ name, categoryId: Number.MAX_SAFE_INTEGER });
  });

  it.each([
    ['an empty body', ''],
    ['no body at all', undefined],
    ['text that is not JSON', 'name=Rex'],
    ['truncated JSON', '{"name":"Rex"'],
  ])('refuses %s with 400 invalid_json', async (_, body) => {
    await expectError(await post(body), 400, 'invalid_json');
  });

  it.each([
    ['no Content-Type', {}],
    ['text/plain', { 'Content-Type': 'text/plain' }],
    ['form encoding', { 'Content-Type': 'application/x-www-form-urlencoded' }],
  ])('refuses a body with %s with 400 unsupported_media_type', async (_, headers) => {
    await expectError(await post('{"name":"Rex","categoryId":1}', headers), 400, 'unsupported_media_type');
  });

  it.each([
    [{ categoryId: 1 }, 'name'],
    [{ name: 'Rex' }, 'categoryId'],
    [{ name: '', categoryId: 1 }, 'name'],
    [{ name: '   ', categoryId: 1 }, 'name'],
    [{ name: 'x'.repeat(257), categoryId: 1 }, 'name'],
    [{ name: 42, categoryId: 1 }, 'name'],
    [{ name: 'Rex', categoryId: '1' }, 'categoryId'],
    [{ name: 'Rex', categoryId: 1.5 }, 'categoryId'],
    [{ name: 'Rex', categoryId: 0 }, 'categoryId'],
    [{ name: 'Rex', categoryId: -3 }, 'categoryId'],
    [{ name: 'Rex', categoryId: 2 ** 53 }, 'categoryId'],
    [{ name: 'Rex', categoryId: null }, 'categoryId'],
    [{ name: 'Rex', categoryId: 1, status: 'Sold' }, 'status'],
    [{ name: 'Rex', categoryId: 1, status: 'lost' }, 'status'],
    [{ name: 'Rex', categoryId: 1, id: 5 }, 'id'],
    [{ name: 'Rex', categoryId: 1, colour: 'red' }, 'colour'],
  ])('refuses %j with 400 validation_failed naming %s', async (pet, field) => {
    const body = await expectError(await postJson(api, pet), 400, 'validation_failed');
    expect(body.message).toContain(`'${field}'`);
  });

  it.each([['[]'], ['null'], ['"Rex"'], ['42']])('refuses the JSON value %s as a body', async (body) => {
    const error = await expectError(await post(body), 400, 'validation_failed');
    expect(error.message).toMatch(/JSON object/);
  });

  it(`refuses a body over ${MAX_BODY_BYTES} bytes with 413 payload_too_large`, async () => {
    const body = JSON.stringify({ name: 'Rex', categoryId: 1, padding: 'x'.repeat(MAX_BODY_BYTES) });
    const error = await expectError(await post(body), 413, 'payload_too_large');
    expect(error.message).toContain(String(MAX_BODY_BYTES));
  });

  it('refuses a body over API Gateway’s 10 MB with 413 payload_too_large', async () => {
    await expectError(await post('x'.repeat(10 * 1024 * 1024 + 1)), 413, 'payload_too_large');
  }, 60_000);

  it('writes nothing for a refused request', async () => {
    const before = await countPets();
    await postJson(api, { name: 'Rex', categoryId: 1, id: 99 });
    await postJson(api, { name: 'Rex', categoryId: 'one' });
    await post('{"name":"Rex","categoryId":1}', { 'Content-Type': 'text/plain' });
    await post('{"name":');
    expect(await countPets()).toBe(before);
  });

  it('gives 50 concurrent creates 50 unique ids, and lists all of them', async () => {
    // Each with its own Idempotency-Key, as the client sends them: a 503 from a busy machine is retried, not stored twice.
    const answers = await inParallel(50, 50, (index) =>
      createPetAnswer(api.petStore, { name: `burst ${index}`, categoryId: 3, status: 'pending' }, randomUUID()),
    );
    expect(answers.map(({ response }) => response.status)).toEqual(new Array(50).fill(201));
    const ids = answers.map(({ body }) => (body as Pet).id);
    expect(new Set(ids).size).toBe(50);

    const listed = (await allPets(api, { status: 'pending', pageSize: 100 })).map((pet) => pet.id);
    expect(listed.filter((id) => ids.includes(id)).sort()).toEqual([...ids].sort());
    const everything = (await allPets(api, { pageSize: 100 })).map((pet) => pet.id);
    expect(ids.every((id) => everything.includes(id))).toBe(true);
  });
});
