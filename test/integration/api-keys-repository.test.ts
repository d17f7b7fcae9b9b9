/** The API-keys repository against the real DynamoDB Local: only hashes are stored; keys can be revoked. */
import { PutItemCommand, UpdateItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, inject, it, vi } from 'vitest';
import {
  apiKeysRepository,
  KeysNotMarked,
  KeyStateError,
  LAST_USE_RESOLUTION_MS,
  type ApiKeysRepository,
} from '../../shared/api-keys-repository';
import { InvalidKeyName, KEY_NAME_MAX_LENGTH } from '../../shared/key-names';
import { keyState } from '../../shared/key-state';
import { usageKeyBinding } from '../../shared/plan-policy';
import { releaseUsageKeys } from '../../shared/usage-key-release';
import { generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import { createDocumentClient, DatabaseUnavailable } from '../../shared/dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { freePort } from '../../tools/dynamodb-local';
import { putConsoleKey } from '../support/console-keys';
import { recordingClient } from '../support/recording-client';
import { createTestTables, type TestTables } from '../support/tables';
import { localUsageKey } from '../../tools/local-server/usage-plans';
import { fixtureScope } from '../support/fixture-names';
import { DEFAULT_PLAN } from '../../shared/plans';
import { SCOPES } from '../../shared/scopes';
import { READ_ORDERS, READ_PETS } from '../support/vocabulary';
import { databaseClient } from '../support/database';

/** Who this file's changes to keys are made by. */
const ACTOR = 'local:test';

let tables: TestTables;
let keys: ApiKeysRepository;

beforeEach(async () => {
  tables = await createTestTables();
  // A deadline a busy machine cannot outrun: these tests are about what is written, not how fast.
  keys = apiKeysRepository({ client: tables.client, tables, lastUseDeadlineMs: 10_000 });
});

const rawItems = async () => (await tables.client.send(new ScanCommand({ TableName: tables.apiKeys }))).Items ?? [];

describe('register', () => {
  it('stores the scopes it is given as a String Set, and reads them back', async () => {
    const key = generateApiKey();
    const record = await keys.register(key, 'reader', { usage: localUsageKey(), scopes: [READ_ORDERS, READ_PETS], changedBy: ACTOR });
    expect(record.scopes).toEqual([READ_PETS, READ_ORDERS]);
    expect((await rawItems())[0]?.scopes).toEqual(new Set([READ_PETS, READ_ORDERS]));
    expect((await keys.findActive(key))?.scopes).toEqual([READ_PETS, READ_ORDERS]);
  });

  it('refuses a key with no scope, which a String Set cannot hold, and stores nothing', async () => {
    await expect(keys.register(generateApiKey(), 'none', { usage: localUsageKey(), scopes: [], changedBy: ACTOR })).rejects.toThrow(
      /at least one scope/,
    );
    expect(await rawItems()).toEqual([]);
  });

  it('refuses a name the shared rule refuses (empty, over 128 characters, control characters), and stores nothing', async () => {
    for (const name of ['', 'n'.repeat(KEY_NAME_MAX_LENGTH + 1), 'ci\nrevoked', 'ci\u001b[31m', 'ci\u0085']) {
      const refused = await keys.register(generateApiKey(), name, { usage: localUsageKey(), changedBy: ACTOR }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused, JSON.stringify(name)).toBeInstanceOf(InvalidKeyName);
    }
    expect(await rawItems()).toEqual([]);
    expect(
      (await keys.register(generateApiKey(), 'é'.repeat(KEY_NAME_MAX_LENGTH), { usage: localUsageKey(), changedBy: ACTOR })).name,
    ).toHaveLength(KEY_NAME_MAX_LENGTH);
  });

  it('refuses to roll a key whose stored name the rule refuses (a console edit): its successor would take it', async () => {
    const key = await putConsoleKey(tables.client, tables.apiKeys, {
      name: 'ci\n\tforged',
      metered: true,
      extra: { scopes: { SS: ['pets:read'] } },
    });
    await expect(keys.roll(keyIdOf(hashApiKey(key)), generateApiKey(), { graceMs: 0, changedBy: ACTOR })).rejects.toBeInstanceOf(
      InvalidKeyName,
    );
    expect(await rawItems()).toHaveLength(1);
  });

  it('stores the hash, the id, the name, the scopes, the creation time, who made it, the plan and the usage key: never the key', async () => {
    const key = generateApiKey();
    const usage = localUsageKey();
    const record = await keys.register(key, 'ci', { usage, changedBy: ACTOR });

    const items = await rawItems();
    expect(items).toEqual([
      {
        keyHash: hashApiKey(key),
        keyId: keyIdOf(hashApiKey(key)),
        name: 'ci',
        scopes: new Set(SCOPES),
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/),
        changedBy: ACTOR,
        changedAt: record.createdAt,
        // The region it was written in: the client's.
        changedInRegion: await tables.client.config.region(),
        // Every key has a plan (`default` unless given) and a usage key of its own, bound to it.
        plan: 'default',
        usageKeyId: usage.usageKeyId,
        usageKey: usage.usageKey,
        usageKeyBinding: usageKeyBinding(hashApiKey(key), usage.usageKeyId, usage.usageKey),
      },
    ]);
    expect(record).toEqual({ ...items[0], scopes: [...SCOPES] });
    const stored = JSON.stringify(items);
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(key.slice('petstore_'.length));
  });

  it('is idempotent: registering a key again keeps the first record', async () => {
    const key = generateApiKey();
    const first = await keys.register(key, 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    const second = await keys.register(key, 'another name', { usage: localUsageKey(), changedBy: ACTOR });

    expect(second).toEqual(first);
    expect(await rawItems()).toEqual([{ ...first, scopes: new Set(first.scopes) }]);
  });

  it('does not bring a revoked key back to life', async () => {
    const key = generateApiKey();
    const { keyId } = await keys.register(key, 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.revoke(keyId, ACTOR);

    const again = await keys.register(key, 'ci', { usage: localUsageKey(), changedBy: ACTOR });

    expect(again.revokedAt).toEqual(expect.any(String));
    expect(await keys.findActive(key)).toBeUndefined();
  });
});

describe('findActive', () => {
  it('finds a registered key', async () => {
    const key = generateApiKey();
    const record = await keys.register(key, 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    expect(await keys.findActive(key)).toEqual(record);
  });

  it('finds nothing for an unknown key, or a registered key with a changed character or case', async () => {
    const key = generateApiKey();
    await keys.register(key, 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    expect(await keys.findActive(generateApiKey())).toBeUndefined();
    expect(await keys.findActive(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).toBeUndefined();
    expect(await keys.findActive(key.toUpperCase())).toBeUndefined();
    expect(await keys.findActive('')).toBeUndefined();
  });
});

describe('list and revoke', () => {
  it('lists every key, oldest first, revoked ones included', async () => {
    const first = await keys.register(generateApiKey(), 'first', { usage: localUsageKey(), changedBy: ACTOR });
    const second = await keys.register(generateApiKey(), 'second', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.revoke(first.keyId, ACTOR);

    const listed = await keys.list();

    const createdAts = listed.map((record) => record.createdAt);
    expect(createdAts).toEqual([...createdAts].sort());
    expect(listed).toHaveLength(2);
    expect(listed).toEqual(expect.arrayContaining([{ ...first, revokedAt: expect.any(String), changedAt: expect.any(String) }, second]));
  });

  it('revokes by key id: the key stops working and the listing shows when', async () => {
    const key = generateApiKey();
    const other = generateApiKey();
    const record = await keys.register(key, 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.register(other, 'other', { usage: localUsageKey(), changedBy: ACTOR });

    expect((await keys.revoke(record.keyId, ACTOR))?.revokedAt).toMatch(/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/);

    expect(await keys.findActive(key)).toBeUndefined();
    expect(await keys.findActive(other)).toBeDefined();
    const revoked = (await keys.list()).find((candidate) => candidate.keyId === record.keyId);
    expect(revoked?.revokedAt).toMatch(/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/);
  });

  it('keeps the first revocation time when revoked twice', async () => {
    const record = await keys.register(generateApiKey(), 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.revoke(record.keyId, ACTOR);
    const [first] = await keys.list();
    await new Promise((resolve) => setTimeout(resolve, 5));

    expect((await keys.revoke(record.keyId, ACTOR))?.revokedAt).toBe(first?.revokedAt);

    const [second] = await keys.list();
    expect(second?.revokedAt).toBe(first?.revokedAt);
  });

  it('answers undefined for a key id that does not exist, and changes nothing', async () => {
    const record = await keys.register(generateApiKey(), 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    expect(await keys.revoke('000000000000', ACTOR)).toBeUndefined();
    expect(await keys.revoke('', ACTOR)).toBeUndefined();
    expect(await keys.list()).toEqual([record]);
  });
});

describe('revokeOthersNamed', () => {
  it('revokes the active keys of that name but the one kept, and leaves other names alone', async () => {
    const [older, old, kept, other] = [generateApiKey(), generateApiKey(), generateApiKey(), generateApiKey()];
    const olderRecord = await keys.register(older, 'local', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.revoke(olderRecord.keyId, ACTOR);
    const oldRecord = await keys.register(old, 'local', { usage: localUsageKey(), changedBy: ACTOR });
    const keptRecord = await keys.register(kept, 'local', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.register(other, 'ci', { usage: localUsageKey(), changedBy: ACTOR });

    expect(await keys.revokeOthersNamed('local', keptRecord.keyId, ACTOR)).toEqual([oldRecord.keyId]);

    expect(await keys.findActive(old)).toBeUndefined();
    expect(await keys.findActive(kept)).toBeDefined();
    expect(await keys.findActive(other)).toBeDefined();
    expect(await keys.revokeOthersNamed('local', keptRecord.keyId, ACTOR)).toEqual([]);
  });
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const at = (offsetMs: number, from = Date.now()) => new Date(from + offsetMs);
const itemOfId = async (keyId: string) => (await rawItems()).find((item) => item.keyId === keyId);

describe('expiry', () => {
  it('stores an expiry as given, and findActive refuses the key from that moment on', async () => {
    const key = generateApiKey();
    const now = Date.now();
    const expiresAt = at(HOUR, now).toISOString();
    const record = await keys.register(key, 'ci', { usage: localUsageKey(), expiresAt, changedBy: ACTOR });

    expect((await itemOfId(record.keyId))?.expiresAt).toBe(expiresAt);
    expect(await keys.findActive(key, at(HOUR - 1, now))).toBeDefined();
    expect(await keys.findActive(key, at(HOUR, now))).toBeUndefined();
  });

  it('reads a key state as active, expired or revoked; an expiry that is no timestamp fails closed', () => {
    const now = new Date();
    expect(keyState({}, now)).toBe('active');
    expect(keyState({ expiresAt: at(1, now.getTime()).toISOString() }, now)).toBe('active');
    expect(keyState({ expiresAt: now.toISOString() }, now)).toBe('expired');
    expect(keyState({ expiresAt: 'next tuesday' }, now)).toBe('expired');
    // Date.parse reads these in the machine's zone, or at all: an instant needs ISO 8601 and its zone.
    expect(keyState({ expiresAt: '2999-01-31 12:00' }, now)).toBe('expired');
    expect(keyState({ expiresAt: '1/2/2999' }, now)).toBe('expired');
    expect(keyState({ expiresAt: '2999-01-31T12:00:00' }, now)).toBe('expired');
    expect(keyState({ expiresAt: '2999-01-31T12:00:00+02:00' }, now)).toBe('active');
    expect(keyState({ expiresAt: '2999-01-31T12:00:00+99:00' }, now)).toBe('expired'); // an offset no zone has
    expect(keyState({ expiresAt: '2999-01-31' }, now)).toBe('active');
    expect(keyState({ expiresAt: at(HOUR, now.getTime()).toISOString(), revokedAt: '' }, now)).toBe('revoked');
  });
});

describe('recordUse', () => {
  const keyItem = async (keyHash: string) =>
    (await tables.client.send(new GetCommand({ TableName: tables.apiKeys, Key: { keyHash }, ConsistentRead: true }))).Item;

  it("writes lastUsedAt on first use, then not again within the hour, then again after it: in the last-use table, never the key's item", async () => {
    const key = generateApiKey();
    const { keyId, keyHash } = await keys.register(key, 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    const asRegistered = await keyItem(keyHash);
    const first = new Date();

    expect(await keys.recordUse((await keys.findById(keyId, { withLastUse: true }))!, first)).toBe(true);
    const used = (await keys.findById(keyId, { withLastUse: true }))!;
    expect(used.lastUsedAt).toBe(first.toISOString());
    expect(await keys.lastUseOf(key)).toBe(first.toISOString());

    expect(await keys.recordUse(used, at(LAST_USE_RESOLUTION_MS - 1, first.getTime()))).toBe(false);
    expect((await keys.findById(keyId, { withLastUse: true }))?.lastUsedAt).toBe(first.toISOString());

    const later = at(LAST_USE_RESOLUTION_MS, first.getTime());
    expect(await keys.recordUse(used, later)).toBe(true);
    expect((await keys.findById(keyId, { withLastUse: true }))?.lastUsedAt).toBe(later.toISOString());
    expect((await keys.list()).find((record) => record.keyId === keyId)?.lastUsedAt).toBe(later.toISOString());
    expect(await keyItem(keyHash)).toEqual(asRegistered);
  });

  it('takes a lastUsedAt in the future (a console typo, a skewed clock) as stale, and writes over it', async () => {
    const key = generateApiKey();
    const record = await keys.register(key, 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    const future = { ...record, lastUsedAt: at(10 * 60_000).toISOString() };
    await tables.client.send(
      new PutCommand({ TableName: tables.apiKeyLastUse, Item: { keyHash: record.keyHash, lastUsedAt: future.lastUsedAt } }),
    );
    const now = new Date();
    expect(await keys.recordUse(future, now)).toBe(true);
    expect(await keys.lastUseOf(key)).toBe(now.toISOString());
  });

  it('lets one of two callers that read the same lastUsedAt write it', async () => {
    const key = generateApiKey();
    const { keyId } = await keys.register(key, 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    const read = (await keys.findById(keyId))!;

    const results = await Promise.all([keys.recordUse(read, at(0)), keys.recordUse(read, at(1))]);

    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it("leaves a key revoked after it was read (a revoke in another region, meanwhile): the key's item is as the revoke left it", async () => {
    const key = generateApiKey();
    const { keyId, keyHash } = await keys.register(key, 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    const readBeforeTheRevoke = { ...(await keys.find(key))!, lastUsedAt: await keys.lastUseOf(key) };
    await keys.revoke(keyId, ACTOR);
    const asRevoked = await keyItem(keyHash);

    expect(await keys.recordUse(readBeforeTheRevoke)).toBe(true);

    expect(asRevoked?.revokedAt).toEqual(expect.any(String));
    expect(await keyItem(keyHash)).toEqual(asRevoked);
  });

  it('never brings a deleted key back: a use recorded as it is deleted leaves the keys table without it', async () => {
    const record = await keys.register(generateApiKey(), 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    await tables.client.send(new DeleteCommand({ TableName: tables.apiKeys, Key: { keyHash: record.keyHash } }));

    await keys.recordUse(record);
    expect(await rawItems()).toEqual([]);
    expect(await keys.list()).toEqual([]);
    expect(await keys.findById(record.keyId)).toBeUndefined();
  });
});

describe('roll', () => {
  it('makes a new key with the same name and scopes, and gives the old one an expiry a grace from now', async () => {
    const [oldKey, newKey] = [generateApiKey(), generateApiKey()];
    const old = await keys.register(oldKey, 'partner', { usage: localUsageKey(), scopes: ['pets:read'], changedBy: ACTOR });
    const now = new Date();

    const { previous, next } = await keys.roll(old.keyId, newKey, { graceMs: HOUR, changedBy: 'local:alice', now });

    expect(next).toMatchObject({ keyId: keyIdOf(hashApiKey(newKey)), name: 'partner', scopes: ['pets:read'], replaces: old.keyId });
    expect(next.expiresAt).toBeUndefined();
    expect(previous).toMatchObject({ keyId: old.keyId, expiresAt: at(HOUR, now.getTime()).toISOString(), replacedBy: next.keyId });
    expect(await itemOfId(old.keyId)).toMatchObject({
      expiresAt: previous.expiresAt,
      replacedBy: next.keyId,
      changedBy: 'local:alice',
      changedAt: now.toISOString(),
    });
    expect(await keys.findActive(oldKey, at(HOUR - 1, now.getTime()))).toBeDefined();
    expect(await keys.findActive(oldKey, at(HOUR, now.getTime()))).toBeUndefined();
    expect(await keys.findActive(newKey, at(HOUR, now.getTime()))).toBeDefined();
  });

  it('with no grace ends the old key at once', async () => {
    const oldKey = generateApiKey();
    const old = await keys.register(oldKey, 'leaked', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.roll(old.keyId, generateApiKey(), { graceMs: 0, changedBy: ACTOR });
    expect(await keys.findActive(oldKey)).toBeUndefined();
  });

  it('keeps an earlier expiry the old key already had', async () => {
    const expiresAt = at(HOUR).toISOString();
    const old = await keys.register(generateApiKey(), 'ci', { usage: localUsageKey(), expiresAt, changedBy: ACTOR });
    const { previous } = await keys.roll(old.keyId, generateApiKey(), { graceMs: 24 * HOUR, changedBy: ACTOR });
    expect(previous.expiresAt).toBe(expiresAt);
    expect((await itemOfId(old.keyId))?.expiresAt).toBe(expiresAt);
  });

  it('refuses an unknown, revoked or expired key, and writes nothing', async () => {
    const revoked = await keys.register(generateApiKey(), 'revoked', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.revoke(revoked.keyId, ACTOR);
    const expired = await keys.register(generateApiKey(), 'expired', {
      usage: localUsageKey(),
      expiresAt: at(-1).toISOString(),
      changedBy: ACTOR,
    });
    const before = await rawItems();

    for (const [keyId, state] of [
      ['000000000000', 'missing'],
      [revoked.keyId, 'revoked'],
      [expired.keyId, 'expired'],
    ] as const) {
      const refusal = keys.roll(keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR });
      await expect(refusal).rejects.toBeInstanceOf(KeyStateError);
      await expect(refusal).rejects.toMatchObject({ keyId, state });
    }
    expect(await rawItems()).toHaveLength(before.length);
  });

  it('tries again when DynamoDB cancels the transaction for a conflict with another change of the key', async () => {
    const client = databaseClient({ endpoint: inject('dynamodbEndpoint') });
    let conflicts = 1;
    // DynamoDB answers TransactionConflict when another transaction holds the item; DynamoDB Local
    // serializes instead, so the first transaction here is answered as DynamoDB would.
    client.middlewareStack.add(
      (next, { commandName }) =>
        async (args) => {
          if (commandName === 'TransactWriteItemsCommand' && conflicts-- > 0) {
            throw Object.assign(new Error('Transaction cancelled'), {
              name: 'TransactionCanceledException',
              CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
            });
          }
          return next(args);
        },
      { step: 'initialize' },
    );
    const conflicted = apiKeysRepository({ client, tables });
    const old = await keys.register(generateApiKey(), 'ci', { usage: localUsageKey(), changedBy: ACTOR });

    const { next } = await conflicted.roll(old.keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR });

    expect(conflicts).toBe(-1);
    expect(await itemOfId(old.keyId)).toMatchObject({ replacedBy: next.keyId });
    client.destroy();
  });

  /** A repository whose first roll transaction is sent only once `meanwhile` has run: between the roll's read and its write. */
  const rollRacedBy = (meanwhile: () => Promise<unknown>) => {
    const client = databaseClient({ endpoint: tables.endpoint });
    const race = { ran: false };
    client.middlewareStack.add(
      (next, { commandName }) =>
        async (args) => {
          if (commandName === 'TransactWriteItemsCommand' && !race.ran) {
            race.ran = true;
            await meanwhile();
          }
          return next(args);
        },
      { step: 'initialize' },
    );
    return { keys: apiKeysRepository({ client, tables }), client, race };
  };

  it('refuses, writing nothing, when the expiry sweep marks the key expired and deletes its usage key between its read and its write', async () => {
    const now = new Date();
    const old = await keys.register(generateApiKey(), 'ci', {
      usage: localUsageKey(),
      expiresAt: at(HOUR, now.getTime()).toISOString(),
      changedBy: ACTOR,
    });
    const deleted: string[] = [];
    // The sweep with a clock past the expiry (its clock, or the time the roll took): it marks the key and releases its usage key.
    const sweepAt = at(2 * HOUR, now.getTime());
    const raced = rollRacedBy(async () => {
      await keys.markExpired(sweepAt, 'system:key-expiry');
      await releaseUsageKeys(keys, async (usageKeyId) => void deleted.push(usageKeyId), 'system:key-expiry', sweepAt);
    });

    const refusal = raced.keys.roll(old.keyId, generateApiKey(), { graceMs: DAY, changedBy: ACTOR, now });

    await expect(refusal).rejects.toMatchObject({ name: 'KeyStateError', keyId: old.keyId, state: 'expired' });
    expect(raced.race.ran).toBe(true);
    expect(deleted).toEqual([old.usageKeyId]);
    // No successor holds the usage key the sweep deleted: there is none.
    expect((await rawItems()).filter((item) => item.usageKeyId === old.usageKeyId).map((item) => item.keyId)).toEqual([old.keyId]);
    expect(await itemOfId(old.keyId)).not.toHaveProperty('replacedBy');
    raced.client.destroy();
  });

  it('refuses, writing nothing, a key whose expiry passes between its read and its write, before any sweep', async () => {
    const old = await keys.register(generateApiKey(), 'ci', {
      usage: localUsageKey(),
      expiresAt: at(HOUR).toISOString(),
      changedBy: ACTOR,
    });
    // The roll's first read of the key answers, then the clock moves past its expiry before the write is made.
    const client = databaseClient({ endpoint: tables.endpoint });
    vi.useFakeTimers({ toFake: ['Date'], now: new Date() });
    client.middlewareStack.add(
      (next, { commandName }) =>
        async (args) => {
          const result = await next(args);
          if (commandName === 'GetItemCommand') vi.setSystemTime(at(2 * HOUR));
          return result;
        },
      { step: 'initialize' },
    );
    try {
      const refusal = apiKeysRepository({ client, tables }).roll(old.keyId, generateApiKey(), { graceMs: DAY, changedBy: ACTOR });

      await expect(refusal).rejects.toMatchObject({ name: 'KeyStateError', keyId: old.keyId, state: 'expired' });
      expect((await rawItems()).filter((item) => item.replaces === old.keyId)).toEqual([]);
    } finally {
      vi.useRealTimers();
      client.destroy();
    }
  });

  it('refuses to roll a key rolled already: its successor is the one to roll', async () => {
    const old = await keys.register(generateApiKey(), 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    const { next } = await keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR });

    await expect(keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR })).rejects.toMatchObject({
      keyId: old.keyId,
      state: 'rolled',
    });
    await expect(keys.roll(next.keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR })).resolves.toMatchObject({
      previous: { keyId: next.keyId },
    });
  });

  it('is one transaction: of rolls of the same key at once, one succeeds, the others are told it was rolled', async () => {
    for (let round = 0; round < 5; round += 1) {
      const old = await keys.register(generateApiKey(), `ci ${round}`, { usage: localUsageKey(), changedBy: ACTOR });

      const results = await Promise.allSettled([
        keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR }),
        keys.roll(old.keyId, generateApiKey(), { graceMs: 2 * HOUR, changedBy: ACTOR }),
        keys.roll(old.keyId, generateApiKey(), { graceMs: 3 * HOUR, changedBy: ACTOR }),
      ]);

      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'rejected') expect(result.reason).toMatchObject({ name: 'KeyStateError', state: 'rolled' });
      }
      expect((await rawItems()).filter((item) => item.replaces === old.keyId)).toHaveLength(1);
    }
  });
});

describe('plans', () => {
  const usage = (n: number) => ({ usageKeyId: `ak-${n}`, usageKey: `${n}`.repeat(40) });

  it('stores the plan and the usage key a key is registered with, as plain strings', async () => {
    const record = await keys.register(generateApiKey(), 'partner', { plan: 'partner', usage: usage(1), changedBy: ACTOR });
    expect(record).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', usageKey: usage(1).usageKey });
    expect(await itemOfId(record.keyId)).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', usageKey: usage(1).usageKey });
  });

  it('roll keeps the plan and the usage key, so that the quota already used carries over, bound to the new key', async () => {
    const old = await keys.register(generateApiKey(), 'partner', { plan: 'partner', usage: usage(1), changedBy: ACTOR });
    const newKey = generateApiKey();
    const { next } = await keys.roll(old.keyId, newKey, { graceMs: HOUR, changedBy: ACTOR });
    const binding = usageKeyBinding(hashApiKey(newKey), 'ak-1', usage(1).usageKey);
    expect(next).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', usageKey: usage(1).usageKey, usageKeyBinding: binding });
    expect(await itemOfId(next.keyId)).toMatchObject({
      plan: 'partner',
      usageKeyId: 'ak-1',
      usageKey: usage(1).usageKey,
      usageKeyBinding: binding,
    });
  });

  it('setPlan moves a key to another plan, keeping its usage key, and records who', async () => {
    const record = await keys.register(generateApiKey(), 'app', { plan: 'default', usage: usage(1), changedBy: ACTOR });
    const moved = await keys.setPlan(record.keyId, 'partner', { changedBy: 'local:alice' });
    expect(moved).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', usageKey: usage(1).usageKey, changedBy: 'local:alice' });
    expect(await itemOfId(record.keyId)).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', changedBy: 'local:alice' });
  });

  it('setPlan refuses a missing or revoked key with KeyStateError, and writes nothing', async () => {
    await expect(keys.setPlan('ffffffffffff', 'partner', { changedBy: ACTOR })).rejects.toEqual(
      new KeyStateError('ffffffffffff', 'missing'),
    );
    const record = await keys.register(generateApiKey(), 'app', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.revoke(record.keyId, ACTOR);
    await expect(keys.setPlan(record.keyId, 'partner', { changedBy: ACTOR })).rejects.toEqual(new KeyStateError(record.keyId, 'revoked'));
    expect(await itemOfId(record.keyId)).toMatchObject({ plan: 'default' });
    expect(await rawItems()).toHaveLength(1);
  });

  /**
   * A repository whose first roll transaction is sent only once `change` has been made: a change
   * that lands between the roll's read of the key and its write, as a set-plan at the same moment.
   */
  const racedBy = (change: () => Promise<unknown>) => {
    const client = databaseClient({ endpoint: tables.endpoint });
    let pending = true;
    client.middlewareStack.add(
      (next, { commandName }) =>
        async (args) => {
          if (commandName === 'TransactWriteItemsCommand' && pending) {
            pending = false;
            await change();
          }
          return next(args);
        },
      { step: 'initialize' },
    );
    return { keys: apiKeysRepository({ client, tables }), client };
  };

  it('roll racing setPlan: the roll reads the key again, so both keys end on the plan set', async () => {
    const old = await keys.register(generateApiKey(), 'partner', { plan: DEFAULT_PLAN, usage: usage(1), changedBy: ACTOR });
    const raced = racedBy(() => keys.setPlan(old.keyId, 'partner', { changedBy: ACTOR }));

    const { previous, next } = await raced.keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR });

    expect([previous.plan, next.plan]).toEqual(['partner', 'partner']);
    expect(await itemOfId(old.keyId)).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', replacedBy: next.keyId });
    expect(await itemOfId(next.keyId)).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', usageKey: usage(1).usageKey });
    raced.client.destroy();
  });

  it('othersSharingUsageKey names the other end of a roll while it is active, and no one for a key of its own', async () => {
    const old = await keys.register(generateApiKey(), 'app', { plan: 'partner', usage: usage(1), changedBy: ACTOR });
    await keys.register(generateApiKey(), 'other', { plan: 'partner', usage: usage(2), changedBy: ACTOR });
    const now = new Date();
    const { previous, next } = await keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR, now, changedBy: ACTOR });

    expect((await keys.othersSharingUsageKey(previous, now)).map((record) => record.keyId)).toEqual([next.keyId]);
    expect((await keys.othersSharingUsageKey(next, now)).map((record) => record.keyId)).toEqual([old.keyId]);
    // Once the old key's grace is over, the successor is the only key on the usage key.
    expect(await keys.othersSharingUsageKey(next, at(HOUR, now.getTime()))).toEqual([]);
    await keys.revoke(next.keyId, ACTOR);
    expect(await keys.othersSharingUsageKey(previous, now)).toEqual([]);

    const alone = await keys.register(generateApiKey(), 'alone', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.register(generateApiKey(), 'alone too', { usage: localUsageKey(), changedBy: ACTOR });
    expect(await keys.othersSharingUsageKey(alone)).toEqual([]);
  });

  it('othersSharingUsageKey follows the rolls both ways, through a key ended between, reading each by its hash, strongly consistent', async () => {
    const first = await keys.register(generateApiKey(), 'app', { plan: 'partner', usage: usage(1), changedBy: ACTOR });
    const now = new Date();
    const { next: second } = await keys.roll(first.keyId, generateApiKey(), { graceMs: DAY, now, changedBy: ACTOR });
    // Rolled with no grace: ended, yet the first key, in its day of grace, still shares the usage key with the third.
    const { previous: ended, next: third } = await keys.roll(second.keyId, generateApiKey(), { graceMs: 0, now, changedBy: ACTOR });
    const { client, sent } = recordingClient(tables.endpoint);
    const reading = apiKeysRepository({ client, tables });
    const later = at(1, now.getTime());

    expect((await reading.othersSharingUsageKey(third, later)).map((record) => record.keyId)).toEqual([first.keyId]);
    const firstNow = await keys.findById(first.keyId);
    expect((await reading.othersSharingUsageKey(firstNow ?? first, later)).map((record) => record.keyId)).toEqual([third.keyId]);
    expect(keyState(ended, later)).toBe('expired');
    expect(sent.map(({ command, consistentRead }) => [command, consistentRead])).toEqual(Array(4).fill(['GetItem', true]));
  });
});

describe('revoke', () => {
  it('records who revoked the key, and keeps the first revoker when revoked twice', async () => {
    const record = await keys.register(generateApiKey(), 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.revoke(record.keyId, 'local:alice');
    await keys.revoke(record.keyId, 'local:bob');
    expect(await itemOfId(record.keyId)).toMatchObject({ changedBy: 'local:alice', revokedAt: expect.any(String) });
  });
});

describe('revokeRollChain', () => {
  /**
   * A repository each of whose first `times` chain transactions is sent only once the chain's
   * newest key (`newest.keyId`) has been rolled again: a roll lengthening the chain between the
   * revocation's read and its write.
   */
  const lengthenedBeforeEachWrite = (newest: { keyId: string }, times: number) => {
    const client = databaseClient({ endpoint: tables.endpoint });
    const rolledMeanwhile: string[] = [];
    client.middlewareStack.add(
      (next, { commandName }) =>
        async (args) => {
          if (commandName === 'TransactWriteItemsCommand' && rolledMeanwhile.length < times) {
            const { next: rolled } = await keys.roll(newest.keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR });
            newest.keyId = rolled.keyId;
            rolledMeanwhile.push(rolled.keyId);
          }
          return next(args);
        },
      { step: 'initialize' },
    );
    return { keys: apiKeysRepository({ client, tables }), client, rolledMeanwhile };
  };

  it('reads the chain again when a roll lengthens it meanwhile, and revokes the longer chain', async () => {
    const old = await keys.register(generateApiKey(), 'app', { usage: localUsageKey(), changedBy: ACTOR });
    const { next } = await keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR });
    const raced = lengthenedBeforeEachWrite({ keyId: next.keyId }, 1);

    const chain = await raced.keys.revokeRollChain(old.keyId, 'local:alice');

    expect(raced.rolledMeanwhile).toHaveLength(1);
    expect([chain?.named.keyId, ...(chain?.others ?? []).map((record) => record.keyId)]).toEqual([
      old.keyId,
      next.keyId,
      ...raced.rolledMeanwhile,
    ]);
    for (const keyId of [old.keyId, next.keyId, ...raced.rolledMeanwhile]) {
      expect(await itemOfId(keyId)).toMatchObject({ revokedAt: chain?.named.revokedAt, changedBy: 'local:alice' });
    }
    raced.client.destroy();
  });

  it('is all or nothing: a chain that changes at every attempt is left with no key revoked, and the refusal says it kept changing', async () => {
    const old = await keys.register(generateApiKey(), 'app', { usage: localUsageKey(), changedBy: ACTOR });
    const { next } = await keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR });
    const raced = lengthenedBeforeEachWrite({ keyId: next.keyId }, Number.POSITIVE_INFINITY);

    await expect(raced.keys.revokeRollChain(old.keyId, 'local:alice')).rejects.toMatchObject({ name: 'KeyStateError', state: 'changing' });

    expect(raced.rolledMeanwhile.length).toBeGreaterThan(1);
    expect((await rawItems()).filter((item) => item.revokedAt !== undefined)).toEqual([]);
    raced.client.destroy();
  });

  it('answers undefined for an id no key has, revoking nothing', async () => {
    await keys.register(generateApiKey(), 'app', { usage: localUsageKey(), changedBy: ACTOR });
    expect(await keys.revokeRollChain('ffffffffffff', ACTOR)).toBeUndefined();
    expect((await rawItems()).filter((item) => item.revokedAt !== undefined)).toEqual([]);
  });
});

describe('markExpired', () => {
  it('marks each expiry reached once, leaving active and revoked keys alone', async () => {
    const now = new Date();
    const expired = await keys.register(generateApiKey(), 'expired', {
      usage: localUsageKey(),
      expiresAt: at(-1, now.getTime()).toISOString(),
      changedBy: ACTOR,
    });
    await keys.register(generateApiKey(), 'active', {
      usage: localUsageKey(),
      expiresAt: at(HOUR, now.getTime()).toISOString(),
      changedBy: ACTOR,
    });
    const revoked = await keys.register(generateApiKey(), 'revoked', {
      usage: localUsageKey(),
      expiresAt: at(-1, now.getTime()).toISOString(),
      changedBy: ACTOR,
    });
    await keys.revoke(revoked.keyId, ACTOR);

    expect((await keys.markExpired(now, 'system:key-expiry')).map((record) => record.keyId)).toEqual([expired.keyId]);
    expect(await itemOfId(expired.keyId)).toMatchObject({ expiredAt: expired.expiresAt, changedBy: 'system:key-expiry' });
    expect(await keys.markExpired(now, ACTOR)).toEqual([]);
  });

  it('marks an expiry the console rewrote in another zone, by its value as stored', async () => {
    const record = await keys.register(generateApiKey(), 'rewritten', {
      usage: localUsageKey(),
      expiresAt: at(-HOUR).toISOString(),
      changedBy: ACTOR,
    });
    const expiresAt = '2001-02-03T04:05:06+02:00';
    await editInConsole(record.keyHash, { expiresAt: { S: expiresAt } });
    const marked = await keys.markExpired(new Date(), ACTOR);
    expect(marked.map((marked) => marked.expiredAt)).toEqual([expiresAt]);
  });

  it('marks an expiry the console moved later once that comes, and not before', async () => {
    const now = new Date();
    const record = await keys.register(generateApiKey(), 'moved', {
      usage: localUsageKey(),
      expiresAt: at(-HOUR, now.getTime()).toISOString(),
      changedBy: ACTOR,
    });
    const later = at(HOUR, now.getTime()).toISOString();
    await editInConsole(record.keyHash, { expiresAt: { S: later } });

    expect(await keys.markExpired(now, ACTOR)).toEqual([]);
    expect((await keys.markExpired(at(2 * HOUR, now.getTime()), ACTOR)).map((marked) => marked.expiredAt)).toEqual([later]);
  });

  it('leaves out a key revoked, or whose expiry the console removed, and reads them no more', async () => {
    const now = new Date();
    const expiring = () =>
      keys.register(generateApiKey(), 'expiring', {
        usage: localUsageKey(),
        expiresAt: at(-HOUR, now.getTime()).toISOString(),
        changedBy: ACTOR,
      });
    const revoked = await expiring();
    await keys.revoke(revoked.keyId, ACTOR);
    const unexpiring = await expiring();
    await tables.client.send(
      new UpdateCommand({ TableName: tables.apiKeys, Key: { keyHash: unexpiring.keyHash }, UpdateExpression: 'REMOVE expiresAt' }),
    );

    expect(await keys.markExpired(now, ACTOR)).toEqual([]);
    const { reads } = await sweepReads(now);
    expect(reads).toBe(0);
  });

  it('leaves unmarked, and revoked, a key the key tool revokes between the sweep reading it and writing it', async () => {
    const now = new Date();
    const record = await keys.register(generateApiKey(), 'revoked meanwhile', {
      usage: localUsageKey(),
      expiresAt: at(-HOUR, now.getTime()).toISOString(),
      changedBy: ACTOR,
    });
    // The sweep's own client: the revoke lands just before its first write is sent.
    const client = databaseClient({ endpoint: tables.endpoint });
    let pending = true;
    client.middlewareStack.add(
      (next, { commandName }) =>
        async (args) => {
          if (commandName === 'UpdateItemCommand' && pending) {
            pending = false;
            await keys.revoke(record.keyId, ACTOR);
          }
          return next(args);
        },
      { step: 'initialize' },
    );

    expect(await apiKeysRepository({ client, tables }).markExpired(now, 'system:key-expiry')).toEqual([]);
    expect(pending).toBe(false);
    const item = await itemOfId(record.keyId);
    expect(item).toMatchObject({ revokedAt: expect.any(String), changedBy: ACTOR });
    expect(item).not.toHaveProperty('expiredAt');
    client.destroy();
  });

  it('reads only the keys that are due: 3 of 500', async () => {
    const now = new Date();
    const register = (name: string, expiresAt?: Date) =>
      keys.register(generateApiKey(), name, {
        usage: localUsageKey(),
        ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
        changedBy: ACTOR,
      });
    const due = await Promise.all([1, 2, 3].map((minutes) => register(`due ${minutes}`, at(-minutes * 60_000, now.getTime()))));
    // Half expire later (an expiry pending), half never; a few at a time, which a busy machine's DynamoDB Local keeps up with.
    for (let batch = 0; batch < 497; batch += 5) {
      await Promise.all(
        Array.from({ length: Math.min(5, 497 - batch) }, (_, index) =>
          register(`not due ${batch + index}`, (batch + index) % 2 === 0 ? at(DAY, now.getTime()) : undefined),
        ),
      );
    }

    const { reads, commands, marked } = await sweepReads(now);

    expect(marked.sort()).toEqual(due.map((record) => record.keyId).sort());
    expect(reads).toBe(due.length);
    expect(commands.filter((command) => command === 'Scan')).toEqual([]);
  }, 120_000);
});

/** The item of this hash changed as an operator changes it in the console: attributes written as they are, nothing else. */
const editInConsole = (keyHash: string, attributes: Record<string, AttributeValue>) =>
  tables.client.send(
    new UpdateItemCommand({
      TableName: tables.apiKeys,
      Key: { keyHash: { S: keyHash } },
      UpdateExpression: `SET ${Object.keys(attributes)
        .map((name) => `#${name} = :${name}`)
        .join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(Object.keys(attributes).map((name) => [`#${name}`, name])),
      ExpressionAttributeValues: Object.fromEntries(Object.entries(attributes).map(([name, value]) => [`:${name}`, value])),
    }),
  );

/**
 * A sweep at `now` on its own client, counting the items its reads went through as DynamoDB
 * reports them (a Query's or a Scan's ScannedCount, a GetItem's one item), and its commands.
 */
const sweepReads = async (now: Date) => {
  const client = databaseClient({ endpoint: tables.endpoint });
  const commands: string[] = [];
  let reads = 0;
  client.middlewareStack.add(
    (next, { commandName }) =>
      async (args) => {
        const result = await next(args);
        const command = String(commandName).replace(/Command$/, '');
        commands.push(command);
        const output = result.output as { ScannedCount?: number; Item?: unknown };
        reads += output.ScannedCount ?? (output.Item === undefined ? 0 : 1);
        return result;
      },
    { step: 'initialize', name: 'countReads' },
  );
  const marked = (await apiKeysRepository({ client, tables }).markExpired(now, 'system:key-expiry')).map((record) => record.keyId);
  return { reads, commands, marked };
};

/** Makes every UpdateItem on an item of these hashes fail with `fault`, as DynamoDB would answer it. */
const failingUpdatesOf = (client: DynamoDBDocumentClient, keyHashes: readonly string[], fault: Record<string, unknown>) =>
  client.middlewareStack.add(
    (next, { commandName }) =>
      async (args) => {
        // The key as given, or already in DynamoDB's form.
        const key = (args.input as { Key?: { keyHash?: string | { S?: string } } }).Key?.keyHash;
        const keyHash = typeof key === 'string' ? key : key?.S;
        if (commandName === 'UpdateItemCommand' && keyHashes.includes(keyHash ?? '')) {
          throw Object.assign(new Error(`Refused on ${tables.apiKeys} for ${keyHash}`), fault);
        }
        return next(args);
      },
    { step: 'initialize', name: 'failUpdates' },
  );

describe('items edited in the console with other types than documented', () => {
  /** One item of each odd shape, and a plain key expired an hour ago. */
  const putOddItems = async () => {
    const odd = {
      numberCreatedAt: await putConsoleKey(tables.client, tables.apiKeys, { name: 'n', extra: { createdAt: { N: '1700000000' } } }),
      hugeCreatedAt: await putConsoleKey(tables.client, tables.apiKeys, {
        name: 'huge',
        extra: { createdAt: { N: '123456789012345678901234567890' } },
      }),
      nullExpiry: await putConsoleKey(tables.client, tables.apiKeys, { name: 'null expiry', extra: { expiresAt: { NULL: true } } }),
      boolExpiry: await putConsoleKey(tables.client, tables.apiKeys, { name: 'bool expiry', extra: { expiresAt: { BOOL: true } } }),
    };
    const noCreatedAt = generateApiKey();
    await tables.client.send(
      new PutItemCommand({
        TableName: tables.apiKeys,
        Item: { keyHash: { S: hashApiKey(noCreatedAt) }, name: { S: 'no createdAt' } },
      }),
    );
    const expired = await keys.register(generateApiKey(), 'expired', {
      usage: localUsageKey(),
      expiresAt: at(-HOUR).toISOString(),
      changedBy: ACTOR,
    });
    return { ...odd, noCreatedAt, expired };
  };

  it('lists, finds and revokes every key all the same', async () => {
    const { noCreatedAt, expired } = await putOddItems();
    expect(await keys.list()).toHaveLength(6);
    expect((await keys.findById(expired.keyId))?.name).toBe('expired');
    expect(await keys.revoke(expired.keyId, ACTOR)).toMatchObject({ revokedAt: expect.any(String), revokedNow: true });
    expect((await keys.findById(keyIdOf(hashApiKey(noCreatedAt))))?.name).toBe('no createdAt');
  });

  it('lets the sweep mark every expired key, an expiry the console made NULL or a Boolean included (fail closed), once', async () => {
    const { expired } = await putOddItems();
    const expiring = (name: string) =>
      keys.register(generateApiKey(), name, { usage: localUsageKey(), expiresAt: at(-HOUR).toISOString(), changedBy: ACTOR });
    const nullExpiry = await expiring('null expiry');
    await editInConsole(nullExpiry.keyHash, { expiresAt: { NULL: true } });
    const boolExpiry = await expiring('bool expiry');
    await editInConsole(boolExpiry.keyHash, { expiresAt: { BOOL: true } });
    const now = new Date();

    const marked = await keys.markExpired(now, 'system:key-expiry');

    expect(marked.map((record) => record.keyId).sort()).toEqual([nullExpiry.keyId, boolExpiry.keyId, expired.keyId].sort());
    expect(await itemOfId(nullExpiry.keyId)).toMatchObject({ expiredAt: null, changedBy: 'system:key-expiry' });
    expect(await keys.markExpired(now, 'system:key-expiry')).toEqual([]);
  });

  it('refuses to roll a key whose plan and usage key the console gave other types, as unmetered, writing nothing', async () => {
    const odd = await putConsoleKey(tables.client, tables.apiKeys, {
      name: 'odd plan',
      extra: { scopes: { SS: ['pets:read'] }, plan: { NULL: true }, usageKeyId: { N: '7' }, usageKey: { BOOL: true } },
    });
    const before = await rawItems();
    await expect(keys.roll(keyIdOf(hashApiKey(odd)), generateApiKey(), { graceMs: HOUR, changedBy: ACTOR })).rejects.toMatchObject({
      name: 'KeyStateError',
      state: 'unmetered',
    });
    expect(await rawItems()).toEqual(before);
  });

  it('derives the id from the hash, not from a keyId attribute edited or removed', async () => {
    const edited = await putConsoleKey(tables.client, tables.apiKeys, { name: 'edited', extra: { keyId: { S: 'ffffffffffff' } } });
    const removed = generateApiKey();
    await tables.client.send(
      new PutItemCommand({
        TableName: tables.apiKeys,
        Item: { keyHash: { S: hashApiKey(removed) }, name: { S: 'no keyId' }, createdAt: { S: new Date().toISOString() } },
      }),
    );
    expect((await keys.find(edited))?.keyId).toBe(keyIdOf(hashApiKey(edited)));
    expect((await keys.find(removed))?.keyId).toBe(keyIdOf(hashApiKey(removed)));
    expect(await keys.findById('ffffffffffff')).toBeUndefined();
  });
});

describe('markExpired, when a key cannot be marked', () => {
  it('marks the others, then throws KeysNotMarked naming that key and the kind of failure only', async () => {
    const client = databaseClient({ endpoint: tables.endpoint, maxAttempts: 1 });
    const first = await keys.register(generateApiKey(), 'first', {
      usage: localUsageKey(),
      expiresAt: at(-2 * HOUR).toISOString(),
      changedBy: ACTOR,
    });
    const second = await keys.register(generateApiKey(), 'second', {
      usage: localUsageKey(),
      expiresAt: at(-HOUR).toISOString(),
      changedBy: ACTOR,
    });
    failingUpdatesOf(client, [first.keyHash], { name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } });

    const error = await apiKeysRepository({ client, tables })
      .markExpired(new Date(), 'system:key-expiry')
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );

    expect(error).toBeInstanceOf(KeysNotMarked);
    expect((error as KeysNotMarked).failures).toEqual([{ keyId: first.keyId, reason: 'AccessDeniedException' }]);
    expect((error as KeysNotMarked).marked.map((record) => record.keyId)).toEqual([second.keyId]);
    expect((error as Error).message).toBe(`1 expired key(s) not marked: ${first.keyId} (AccessDeniedException).`);
    expect(await itemOfId(second.keyId)).toMatchObject({ expiredAt: second.expiresAt });
    expect((await itemOfId(first.keyId))?.expiredAt).toBeUndefined();
    client.destroy();
  });
});

describe('revoke, as it reports whether it wrote', () => {
  it('says it revoked the key the first time, and not when a revokedAt of any form was there already', async () => {
    const record = await keys.register(generateApiKey(), 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    expect((await keys.revoke(record.keyId, ACTOR))?.revokedNow).toBe(true);
    expect((await keys.revoke(record.keyId, ACTOR))?.revokedNow).toBe(false);
    for (const revokedAt of [{ S: 'last tuesday' }, { NULL: true } as const, { N: '1' }]) {
      const console = await putConsoleKey(tables.client, tables.apiKeys, { extra: { revokedAt } });
      expect(await keys.revoke(keyIdOf(hashApiKey(console)), ACTOR)).toMatchObject({ revokedNow: false });
    }
  });
});

describe('roll refusals the key tool tells apart', () => {
  it('refuses a key whose stored scopes are all unknown ones as unscoped, writing nothing', async () => {
    const key = await putConsoleKey(tables.client, tables.apiKeys, { extra: { scopes: { SS: [fixtureScope('admin')] } } });
    const before = await rawItems();
    await expect(keys.roll(keyIdOf(hashApiKey(key)), generateApiKey(), { graceMs: HOUR, changedBy: ACTOR })).rejects.toMatchObject({
      name: 'KeyStateError',
      state: 'unscoped',
    });
    expect(await rawItems()).toEqual(before);
  });

  it.each([
    ['no usage key', 'usageKey'],
    ['no usage key id', 'usageKeyId'],
    ['no binding of its usage key', 'usageKeyBinding'],
    ['no plan', 'plan'],
  ])('refuses a key whose item has %s (removed by hand) as unmetered, writing nothing', async (_, attribute) => {
    const old = await keys.register(generateApiKey(), 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    await tables.client.send(
      new UpdateCommand({
        TableName: tables.apiKeys,
        Key: { keyHash: old.keyHash },
        UpdateExpression: 'REMOVE #attribute',
        ExpressionAttributeNames: { '#attribute': attribute },
      }),
    );
    const before = await rawItems();
    await expect(keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR })).rejects.toMatchObject({
      name: 'KeyStateError',
      state: 'unmetered',
    });
    expect(await rawItems()).toEqual(before);
  });

  it("refuses a key given another key's usage key by hand, rather than bind that usage key to its successor", async () => {
    const own = await keys.register(generateApiKey(), 'own', { usage: localUsageKey(), changedBy: ACTOR });
    const other = await keys.register(generateApiKey(), 'other', { plan: 'partner', usage: localUsageKey(), changedBy: ACTOR });
    // Copied whole: the value, its id and even its binding, which is the other key's.
    await tables.client.send(
      new UpdateCommand({
        TableName: tables.apiKeys,
        Key: { keyHash: own.keyHash },
        UpdateExpression: 'SET usageKey = :usageKey, usageKeyId = :usageKeyId, usageKeyBinding = :binding',
        ExpressionAttributeValues: { ':usageKey': other.usageKey, ':usageKeyId': other.usageKeyId, ':binding': other.usageKeyBinding },
      }),
    );
    const before = await rawItems();
    await expect(keys.roll(own.keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR })).rejects.toMatchObject({
      name: 'KeyStateError',
      state: 'unmetered',
    });
    expect(await rawItems()).toEqual(before);
  });

  it.each([
    ['a conflict', 'TransactionConflict'],
    ['a changed condition', 'ConditionalCheckFailed'],
  ])('gives up on a key that meets %s at every attempt as changing, not as the database down', async (_, code) => {
    const client = databaseClient({ endpoint: tables.endpoint });
    const old = await keys.register(generateApiKey(), 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    client.middlewareStack.add(
      (next, { commandName }) =>
        async (args) => {
          if (commandName === 'TransactWriteItemsCommand') {
            throw Object.assign(new Error('Transaction cancelled'), {
              name: 'TransactionCanceledException',
              CancellationReasons: [{ Code: 'None' }, { Code: code }],
            });
          }
          return next(args);
        },
      { step: 'initialize' },
    );
    const busy = apiKeysRepository({ client, tables });
    await expect(busy.roll(old.keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR })).rejects.toMatchObject({
      name: 'KeyStateError',
      state: 'changing',
    });
    client.destroy();
  });

  it('answers a throttled transaction as DatabaseUnavailable, never with the SDK text', async () => {
    const client = databaseClient({ endpoint: tables.endpoint });
    const old = await keys.register(generateApiKey(), 'ci', { usage: localUsageKey(), changedBy: ACTOR });
    client.middlewareStack.add(
      (next, { commandName }) =>
        async (args) => {
          if (commandName === 'TransactWriteItemsCommand') {
            throw Object.assign(new Error(`Transaction cancelled on ${tables.apiKeys}`), {
              name: 'TransactionCanceledException',
              CancellationReasons: [{ Code: 'ThrottlingError' }, { Code: 'None' }],
            });
          }
          return next(args);
        },
      { step: 'initialize' },
    );
    const throttled = apiKeysRepository({ client, tables });
    await expect(throttled.roll(old.keyId, generateApiKey(), { graceMs: HOUR, changedBy: ACTOR })).rejects.toEqual(
      new DatabaseUnavailable('transaction throttled'),
    );
    client.destroy();
  });
});

describe('an unreachable database', () => {
  it('makes findActive reject with DatabaseUnavailable', async () => {
    const client = createDocumentClient({ endpoint: `http://127.0.0.1:${await freePort()}`, maxAttempts: 2 });
    const unreachable = apiKeysRepository({ client, tables: { apiKeys: 'api-keys', apiKeyLastUse: 'api-key-last-use' } });
    await expect(unreachable.findActive(generateApiKey())).rejects.toBeInstanceOf(DatabaseUnavailable);
    await expect(unreachable.list()).rejects.toBeInstanceOf(DatabaseUnavailable);
  });
});

describe('the region of a change', () => {
  /** The stamp of the item of this id, as stored. */
  const regionOf = async (keyId: string) => (await itemOfId(keyId))?.changedInRegion as unknown;
  /** A repository writing in `region`, as the functions of that region or the key tool aimed at it do. */
  const writingIn = (region: string) => apiKeysRepository({ client: tables.client, tables, region });

  it('is stamped by every write that changes a key, as the region that repository writes in', async () => {
    const [first, second, third] = ['us-east-1', 'us-east-2', 'us-west-2'].map(writingIn);
    const now = new Date();
    const record = await first!.register(generateApiKey(), 'travelling', { usage: localUsageKey(), changedBy: ACTOR });
    expect(record.changedInRegion).toBe('us-east-1');
    expect(await regionOf(record.keyId)).toBe('us-east-1');

    await second!.setPlan(record.keyId, 'partner', { changedBy: ACTOR });
    expect(await regionOf(record.keyId)).toBe('us-east-2');

    const { previous, next } = await third!.roll(record.keyId, generateApiKey(), { graceMs: 0, changedBy: ACTOR, now });
    expect([await regionOf(previous.keyId), await regionOf(next.keyId)]).toEqual(['us-west-2', 'us-west-2']);

    await first!.revoke(next.keyId, ACTOR);
    expect(await regionOf(next.keyId)).toBe('us-east-1');
    await third!.recordUsageKeyDeleted((await keys.findById(next.keyId))!, ACTOR);
    expect(await itemOfId(next.keyId)).toMatchObject({ usageKeyDeletedAt: expect.any(String), changedInRegion: 'us-west-2' });

    // The old key of the roll expired at once: the sweep's mark is a change of its own.
    expect((await second!.markExpired(at(1, now.getTime()), 'system:key-expiry')).map(({ keyId }) => keyId)).toEqual([previous.keyId]);
    expect(await regionOf(previous.keyId)).toBe('us-east-2');
  });

  it("is by default the region of the repository's client (a function's AWS_REGION, the key tool's target region)", async () => {
    const record = await keys.register(generateApiKey(), 'here', { usage: localUsageKey(), changedBy: ACTOR });
    expect(await regionOf(record.keyId)).toBe(await tables.client.config.region());
  });
});
