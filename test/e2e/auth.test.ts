/**
 * Bearer authentication over HTTP: every way a key can be missing, malformed, unknown or revoked;
 * a revoked key is refused within seconds even with the authorizer cache on.
 */
import { GetItemCommand, PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApiKey } from '../../shared/api-keys';
import { keyIdOf, hashApiKey } from '../../shared/api-keys';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CHANGE_HOLDS_WITHIN_MS,
  expectCommonHeaders,
  expectError,
  registerKeyOnPlan,
  startLocalApi,
  type LocalApi,
} from '../support/local-api';
import { recordingClient } from '../support/recording-client';
import { requestsToEveryKeyedOperation } from '../support/operations';
import { databaseClient } from '../support/database';

/** Who this file's changes to keys are made by. */
const ACTOR = 'local:test';

const operations = requestsToEveryKeyedOperation;

let api: LocalApi;
beforeAll(async () => {
  api = await startLocalApi();
});
afterAll(() => api.close());

const withAuthorization = (value: string, path = '/pets') => api.call(path, { auth: false, headers: { Authorization: value } });

/** How soon a change to a key must hold, the authorizer cache on: the bound, far above the local server's stream reads. */

/** Asks until the answer is no 200 (each 200 read and dropped), and returns that answer; fails past the deadline. */
const firstRefused = async (ask: () => Promise<Response>, deadline: number): Promise<Response> => {
  for (;;) {
    const response = await ask();
    if (response.status !== 200) return response;
    await response.arrayBuffer();
    if (Date.now() > deadline) throw new Error('still answered 200 past the deadline');
    await sleep(50);
  }
};

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

  it('stop working with the authorizer cache on (TTL 300 s): the gateway drops the cached answers of a changed key', async () => {
    const cached = await startLocalApi({ authCacheTtlSeconds: 300 });
    try {
      // Cached for every route: API Gateway caches one policy per key.
      expect((await cached.call('/pets')).status).toBe(200);
      const revokedAt = Date.now();
      await cached.keys.revoke(keyIdOf(hashApiKey(cached.key)), ACTOR);

      const refused = await firstRefused(() => cached.call('/pets'), revokedAt + CHANGE_HOLDS_WITHIN_MS);

      await expectUnauthorized(refused);
      await expectUnauthorized(await cached.call('/pets/1'));
    } finally {
      await cached.close();
    }
  });

  it('stop working with the cache on when the revoke arrives from another region: the whole item put by replication', async () => {
    const cached = await startLocalApi({ authCacheTtlSeconds: 300 });
    const replication = databaseClient({ endpoint: inject('dynamodbEndpoint') });
    try {
      expect((await cached.call('/pets')).status).toBe(200);
      // Another region's revoke, as a global table replicates it: the item as that region wrote
      // it, put whole into this replica by a writer that is neither the key tool nor this server.
      const Key = { keyHash: { S: hashApiKey(cached.key) } };
      const { Item } = await replication.send(new GetItemCommand({ TableName: cached.tables.apiKeys, Key, ConsistentRead: true }));
      const revokedAt = new Date();
      const elsewhere: Record<string, AttributeValue> = {
        ...Item,
        revokedAt: { S: revokedAt.toISOString() },
        changedBy: { S: ACTOR },
        changedAt: { S: revokedAt.toISOString() },
        changedInRegion: { S: 'fixture-region-elsewhere' },
      };
      await replication.send(new PutItemCommand({ TableName: cached.tables.apiKeys, Item: elsewhere }));

      await expectUnauthorized(await firstRefused(() => cached.call('/pets'), revokedAt.getTime() + CHANGE_HOLDS_WITHIN_MS));
    } finally {
      await cached.close();
      replication.destroy();
    }
  });

  it('leave the cached answers of the keys that did not change: a busy key is not read again', async () => {
    const { client, sent } = recordingClient(inject('dynamodbEndpoint'));
    const cached = await startLocalApi({ authCacheTtlSeconds: 300, client });
    try {
      const other = await registerKeyOnPlan(cached, 'default', 'other');
      const withOther = () => cached.call('/pets', { auth: false, headers: { Authorization: `Bearer ${other}` } });
      expect((await cached.call('/pets')).status).toBe(200);
      expect((await withOther()).status).toBe(200);
      const keyReads = () => sent.filter(({ command, tableName }) => command === 'GetItem' && tableName === cached.tables.apiKeys).length;
      expect(keyReads()).toBe(2);

      await cached.keys.revoke(keyIdOf(hashApiKey(other)), ACTOR);
      await expectUnauthorized(await firstRefused(withOther, Date.now() + CHANGE_HOLDS_WITHIN_MS));

      // The first key's answer is still cached: its lastUsedAt stamp, written on its first request, changed nothing it says.
      const before = keyReads();
      expect((await cached.call('/pets')).status).toBe(200);
      expect(keyReads()).toBe(before);
    } finally {
      await cached.close();
      client.destroy();
    }
  });
});
