/** Bearer authentication over HTTP: every way a key can be missing, malformed, unknown or revoked. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../shared/api-keys';
import { keyIdOf, hashApiKey } from '../../shared/api-keys';
import { expectCommonHeaders, expectError, startLocalApi, type LocalApi } from '../support/local-api';

/** Who this file's changes to keys are made by. */
const ACTOR = 'local:test';

const operations = [
  ['GET', '/pets'],
  ['POST', '/pets'],
  ['GET', '/pets/1'],
  ['GET', '/store/orders'],
] as const;

let api: LocalApi;
beforeAll(async () => {
  api = await startLocalApi();
});
afterAll(() => api.close());

const withAuthorization = (value: string, path = '/pets') => api.call(path, { auth: false, headers: { Authorization: value } });

const expectUnauthorized = async (response: Response) => {
  expectCommonHeaders(response);
  expect(response.headers.get('www-authenticate')).toBe('Bearer realm="pet-store"');
  await expectError(response, 401, 'unauthorized');
};

describe('authentication', () => {
  it.each(operations)('refuses %s %s without an Authorization header', async (method, path) => {
    await expectUnauthorized(await api.call(path, { method, auth: false }));
  });

  it.each([
    ['another scheme', (key: string) => `Basic ${key}`],
    ['the scheme alone', () => 'Bearer'],
    ['the scheme and a space', () => 'Bearer '],
    ['no space after the scheme', (key: string) => `Bearer${key}`],
    ['the key alone', (key: string) => key],
    ['an unknown key', () => `Bearer ${generateApiKey()}`],
    ['a key with a character changed', (key: string) => `Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`],
    ['the key in another case', (key: string) => `Bearer ${key.toUpperCase()}`],
    ['characters a token cannot have', (key: string) => `Bearer ${key}!`],
  ])('refuses %s', async (_, authorization) => {
    await expectUnauthorized(await withAuthorization(authorization(api.key)));
  });

  it.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])('accepts the scheme written %s (RFC 7235: case-insensitive)', async (scheme) => {
    expect((await withAuthorization(`${scheme} ${api.key}`)).status).toBe(200);
  });

  it.each(['api_key', 'key', 'access_token', 'token'])('never accepts the key in the query string (?%s=)', async (name) => {
    await expectUnauthorized(await api.call(`/pets?${name}=${api.key}`, { auth: false }));
    // With a valid header as well, the parameter is still not a key: it is an unknown parameter.
    await expectError(await api.call(`/pets?${name}=${api.key}`), 400, 'validation_failed');
  });

  it('answers GET /store/orders with 501 not_implemented once authenticated', async () => {
    const response = await api.call('/store/orders');
    expectCommonHeaders(response);
    await expectError(response, 501, 'not_implemented');
  });

  it('never echoes the key in an answer', async () => {
    const wrong = `${api.key}x`;
    for (const response of [await withAuthorization(`Bearer ${wrong}`), await api.call(`/pets?api_key=${api.key}`)]) {
      const text = await response.text();
      expect(text).not.toContain(api.key);
      expect([...response.headers.values()].join(' ')).not.toContain(api.key);
    }
  });
});

describe('revoked keys', () => {
  it('stop working at once when the authorizer cache is off', async () => {
    const uncached = await startLocalApi({ authCacheTtlSeconds: 0 });
    try {
      expect((await uncached.call('/pets')).status).toBe(200);
      expect(await uncached.keys.revoke(keyIdOf(hashApiKey(uncached.key)), ACTOR)).toMatchObject({ revokedAt: expect.any(String) });
      await expectUnauthorized(await uncached.call('/pets'));
    } finally {
      await uncached.close();
    }
  });

  it('stop working once the authorizer cache TTL has passed (injected clock)', async () => {
    let clock = Date.UTC(2027, 0, 1);
    const cached = await startLocalApi({ authCacheTtlSeconds: 300, now: () => new Date(clock) });
    try {
      expect((await cached.call('/pets')).status).toBe(200);
      await cached.keys.revoke(keyIdOf(hashApiKey(cached.key)), ACTOR);
      clock += 299_000;
      // Like API Gateway: the cached allow holds for the rest of the TTL, for every route.
      expect((await cached.call('/pets')).status).toBe(200);
      expect((await cached.call('/pets/1')).status).toBe(404);
      clock += 2_000;
      await expectUnauthorized(await cached.call('/pets'));
    } finally {
      await cached.close();
    }
  });
});
