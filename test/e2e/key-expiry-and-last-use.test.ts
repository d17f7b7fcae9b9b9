/**
 * Key expiry and last use over HTTP: a key past its expiry gets 401 like a revoked one (once the
 * authorizer cache TTL has passed, when its allow was cached), and the authorizer writes a key's
 * lastUsedAt at most once an hour, however often it runs.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import { putConsoleKey } from '../support/console-keys';
import { databaseClient, databaseTimeoutMs } from '../support/database';
import { expectCommonHeaders, expectError, inParallel, startLocalApi, type LocalApi } from '../support/local-api';
import { recordingClient } from '../support/recording-client';
import { localUsageKey } from '../../tools/local-server/usage-plans';

/** Who this file's changes to keys are made by. */
const ACTOR = 'local:test';

let api: LocalApi;
beforeAll(async () => {
  api = await startLocalApi();
});
afterAll(() => api.close());

const as = (on: LocalApi, key: string, path = '/pets') => on.call(path, { auth: false, headers: { Authorization: `Bearer ${key}` } });

const expectUnauthorized = async (response: Response) => {
  expectCommonHeaders(response);
  expect(response.headers.get('www-authenticate')).toBe('Bearer realm="pet-store"');
  await expectError(response, 401, 'unauthorized');
};

const MINUTE = 60_000;
/** A generous bound on a last-use write landing once its request is answered. */
const LAST_USE_LANDS_WITHIN_MS = 10_000;

describe('expired keys', () => {
  it('are refused with 401 unauthorized, whether the console or the key tool set the expiry', async () => {
    const past = new Date(Date.now() - MINUTE).toISOString();
    const client = databaseClient({ endpoint: inject('dynamodbEndpoint') });
    const fromConsole = await putConsoleKey(client, api.tables.apiKeys, { extra: { expiresAt: { S: past } } }).finally(() =>
      client.destroy(),
    );
    const fromRepository = generateApiKey();
    await api.keys.register(fromRepository, 'expired', { usage: localUsageKey(), expiresAt: past, changedBy: ACTOR });
    for (const key of [fromConsole, fromRepository]) {
      await expectUnauthorized(await as(api, key));
      await expectUnauthorized(await as(api, key, '/pets/1'));
    }
  });

  it('stop working once the authorizer cache TTL has passed after the expiry (injected clock)', async () => {
    let clock = Date.UTC(2027, 0, 1);
    const cached = await startLocalApi({ authCacheTtlSeconds: 300, now: () => new Date(clock) });
    try {
      const key = generateApiKey();
      await cached.keys.register(key, 'expiring', {
        usage: localUsageKey(),
        expiresAt: new Date(clock + MINUTE).toISOString(),
        changedBy: ACTOR,
      });
      expect((await as(cached, key)).status).toBe(200);
      clock += 2 * MINUTE;
      // Past its expiry, but the allow cached a minute before it holds for the rest of the TTL, as API Gateway's does.
      expect((await as(cached, key)).status).toBe(200);
      clock += 181_000; // 301 s after the allow was cached
      await expectUnauthorized(await as(cached, key));
    } finally {
      await cached.close();
    }
  });
});

describe('last use', () => {
  /**
   * A server without an authorizer cache, on a client that notes what it sends, and a clock the
   * test moves. Its authorizer waits for its last-use read and write as long as for any other call:
   * with the deployed quarter of a second, a busy machine's DynamoDB Local could leave the first
   * request's write undone (bookkeeping, given up on), and a later request would write it instead.
   */
  const watchedApi = async () => {
    const { client, sent } = recordingClient(inject('dynamodbEndpoint'));
    const clock = { now: Date.UTC(2027, 0, 1) };
    const watched = await startLocalApi({
      authCacheTtlSeconds: 0,
      client,
      now: () => new Date(clock.now),
      lastUseDeadlineMs: databaseTimeoutMs(),
    });
    const on = (table: 'apiKeys' | 'apiKeyLastUse', command: string) =>
      sent.filter((sentCommand) => sentCommand.command === command && sentCommand.tableName === watched.tables[table]);
    const readLastUse = async () => (await watched.keys.findById(keyIdOf(hashApiKey(watched.key)), { withLastUse: true }))?.lastUsedAt;
    /** The key's last use once it is `expected`: the write a request made may land after its answer. */
    const lastUsedAt = (expected: string | undefined) =>
      expect.poll(readLastUse, { timeout: LAST_USE_LANDS_WITHIN_MS, interval: 50 }).toBe(expected);
    const close = async () => {
      await watched.close();
      client.destroy();
    };
    return { api: watched, clock, on, lastUsedAt, close };
  };

  it('is written on the first request, then not again for the many that follow within the hour', async () => {
    const watched = await watchedApi();
    try {
      await watched.lastUsedAt(undefined);
      expect((await watched.api.petStore.pets.list()).pets).toEqual([]);
      await watched.lastUsedAt(new Date(watched.clock.now).toISOString());
      const pages = await inParallel(40, 8, () => watched.api.petStore.pets.list());
      expect(pages.every((page) => page.pets.length === 0)).toBe(true);
      // The authorizer ran for every request (no cache), and wrote once: its last use, never the key.
      expect(watched.on('apiKeys', 'GetItem')).toHaveLength(41);
      expect(watched.on('apiKeyLastUse', 'GetItem')).toHaveLength(41);
      expect(watched.on('apiKeyLastUse', 'UpdateItem')).toHaveLength(1);
      expect(watched.on('apiKeys', 'UpdateItem')).toEqual([]);
    } finally {
      await watched.close();
    }
  });

  it('is written again once an hour has passed since (injected clock)', async () => {
    const watched = await watchedApi();
    try {
      const start = watched.clock.now;
      expect((await watched.api.petStore.pets.list()).pets).toEqual([]);
      await watched.lastUsedAt(new Date(start).toISOString());
      watched.clock.now = start + 59 * MINUTE;
      expect((await watched.api.petStore.pets.list()).pets).toEqual([]);
      await watched.lastUsedAt(new Date(start).toISOString());
      watched.clock.now = start + 61 * MINUTE;
      expect((await watched.api.petStore.pets.list()).pets).toEqual([]);
      await watched.lastUsedAt(new Date(start + 61 * MINUTE).toISOString());
      expect(watched.on('apiKeyLastUse', 'UpdateItem')).toHaveLength(2);
      expect(watched.on('apiKeys', 'UpdateItem')).toEqual([]);
    } finally {
      await watched.close();
    }
  });
});
