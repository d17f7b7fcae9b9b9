/**
 * The key goes only to baseUrl's origin, below its path: a request path that would name another
 * host, port or user, or climb out of the base path, is refused with a PetStoreUrlError before
 * anything is sent; a next link on another origin gives only its query. Real servers on this
 * machine, with the global fetch, where a leak would be one; the scripted fetch, which records
 * every request, for the forms no local server can take.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PetStore, PetStoreUrlError } from '../../../client/src/index';
import { scriptedFetch } from '../../support/fake-fetch';
import { fixturePath } from '../../support/fixture-names';
import { startStrayServer, stopStrayServers } from '../../support/stray-servers';

const API_KEY = 'petstore_unit-test-key-0123456789abcdef';
const JSON_ARRAY = { status: 200, headers: { 'content-type': 'application/json' }, body: '[]' };

afterEach(stopStrayServers);

/** What a call came to: the error it threw, or 'answered'. */
const outcomeOf = (call: Promise<unknown>) =>
  call.then(
    () => 'answered',
    (error: unknown) => error,
  );

describe('a request path that would leave baseUrl', () => {
  it('":<port>/pets" on a baseUrl without a path is refused: the server on that port receives nothing', async () => {
    const other = await startStrayServer(() => JSON_ARRAY);
    // Nothing listens on port 80 here; the store must not need it to refuse.
    const store = new PetStore({ baseUrl: 'http://127.0.0.1', apiKey: API_KEY, maxRetries: 0 });

    const outcome = await outcomeOf(store.raw({ path: `:${other.port}/pets` }));

    expect(other.received).toEqual([]);
    expect(outcome).toBeInstanceOf(PetStoreUrlError);
    expect(outcome).toMatchObject({ path: `:${other.port}/pets`, mayHaveReachedServer: false });
    expect(String((outcome as Error).message)).not.toContain(API_KEY);
  });

  it("digits that would lengthen baseUrl's port are refused: the server on the longer port receives nothing", async () => {
    const other = await startStrayServer(() => JSON_ARRAY);
    const [first, rest] = [String(other.port).slice(0, 1), String(other.port).slice(1)];
    const store = new PetStore({ baseUrl: `http://127.0.0.1:${first}`, apiKey: API_KEY, maxRetries: 0 });

    const outcome = await outcomeOf(store.raw({ path: `${rest}/pets` }));

    expect(other.received).toEqual([]);
    expect(outcome).toBeInstanceOf(PetStoreUrlError);
  });

  const withoutPath = 'https://api.example.test';
  const withPath = 'https://api.example.test/v1';
  it.each([
    [withoutPath, ':8443/pets'],
    [withoutPath, '.evil.example/pets'],
    [withoutPath, '@evil.example/pets'],
    [withoutPath, '//evil.example/pets'],
    [withoutPath, '/\\evil.example/pets'],
    [withoutPath, '\\\\evil.example/pets'],
    [withoutPath, 'https://evil.example/pets'],
    [withoutPath, 'pets'],
    [withPath, ':8443/pets'],
    [withPath, '@evil.example/pets'],
    [withPath, '//evil.example/pets'],
    [withPath, 'https://evil.example/pets'],
    [withPath, '/../admin'],
    [withPath, '/pets/../../admin'],
    [withPath, '/%2e%2e/admin'],
    [withPath, '/pets\\..\\..\\admin'],
    [withPath, '/..'],
    [`${withPath}/`, '/../v2/pets'],
  ])('on %s, %s is refused before anything is sent', async (baseUrl, path) => {
    const { fetch, sent } = scriptedFetch({ status: 200, body: [] });
    const store = new PetStore({ baseUrl, apiKey: API_KEY, fetch });

    await expect(store.raw({ path, operation: 'listPets' })).rejects.toMatchObject({
      name: 'PetStoreUrlError',
      path,
      operation: 'listPets',
    });
    expect(sent).toEqual([]);
  });

  it.each([
    [withoutPath, '/pets', `${withoutPath}/pets`],
    [withoutPath, `/pets/..${fixturePath('orders')}`, `${withoutPath}${fixturePath('orders')}`],
    [withPath, '/pets/42?fields=name', `${withPath}/pets/42?fields=name`],
    [`${withPath}/`, `/pets/..${fixturePath('orders')}`, `${withPath}${fixturePath('orders')}`],
    [withPath, '', withPath],
    [withPath, '?limit=1', `${withPath}?limit=1`],
  ])('on %s, %s is sent to %s with the key', async (baseUrl, path, url) => {
    const { fetch, sent } = scriptedFetch({ status: 200, body: [] });
    await new PetStore({ baseUrl, apiKey: API_KEY, fetch }).raw({ path });
    expect(sent.map((request) => [request.url.href, request.headers.get('authorization')])).toEqual([[url, `Bearer ${API_KEY}`]]);
  });

  it.each(['not a url', 'ftp://api.example.test/v1', 'https://user:secret@api.example.test/v1', 'https://api.example.test/v1?x=1'])(
    'a baseUrl of %s is refused when the client is made',
    (baseUrl) => {
      expect(() => new PetStore({ baseUrl, apiKey: API_KEY })).toThrow(TypeError);
    },
  );
});

describe('a next link on another origin', () => {
  it('gives the next page its query only: the key and the request go to baseUrl, the other server receives nothing', async () => {
    const other = await startStrayServer(() => JSON_ARRAY);
    const api = await startStrayServer((request) =>
      new URL(request.url ?? '', 'http://x').searchParams.has('cursor')
        ? { ...JSON_ARRAY, body: '[{"id":2,"name":"b","categoryId":1,"status":"sold"}]' }
        : {
            ...JSON_ARRAY,
            headers: { ...JSON_ARRAY.headers, link: `<${other.origin}/v1/pets?cursor=c2>; rel="next"` },
            body: '[{"id":1,"name":"a","categoryId":1,"status":"sold"}]',
          },
    );
    const store = new PetStore({ baseUrl: `${api.origin}/v1`, apiKey: API_KEY, maxRetries: 0 });

    const ids: number[] = [];
    for await (const { id } of store.pets.all()) ids.push(id);

    expect(ids).toEqual([1, 2]);
    expect(other.received).toEqual([]);
    expect(api.received).toEqual([
      { method: 'GET', url: '/v1/pets', authorization: `Bearer ${API_KEY}` },
      { method: 'GET', url: '/v1/pets?cursor=c2', authorization: `Bearer ${API_KEY}` },
    ]);
  });
});
