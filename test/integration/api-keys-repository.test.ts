/** The API-keys repository against the real DynamoDB Local: only hashes are stored; keys can be revoked. */
import { DeleteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, inject, it } from 'vitest';
import {
  apiKeysRepository,
  KeyStateError,
  keyState,
  LAST_USE_RESOLUTION_MS,
  type ApiKeysRepository,
} from '../../shared/api-keys-repository';
import { generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import { createDocumentClient, DatabaseUnavailable } from '../../shared/dynamodb';
import { freePort } from '../../tools/dynamodb-local';
import { putConsoleKey } from '../support/console-keys';
import { createTestTables, type TestTables } from '../support/tables';

let tables: TestTables;
let keys: ApiKeysRepository;

beforeEach(async () => {
  tables = await createTestTables();
  keys = apiKeysRepository({ client: tables.client, tableName: tables.apiKeys });
});

const rawItems = async () => (await tables.client.send(new ScanCommand({ TableName: tables.apiKeys }))).Items ?? [];

describe('register', () => {
  it('stores the scopes it is given as a String Set, and reads them back', async () => {
    const key = generateApiKey();
    const record = await keys.register(key, 'reader', { scopes: ['orders:read', 'pets:read'] });
    expect(record.scopes).toEqual(['pets:read', 'orders:read']);
    expect((await rawItems())[0]?.scopes).toEqual(new Set(['pets:read', 'orders:read']));
    expect((await keys.findActive(key))?.scopes).toEqual(['pets:read', 'orders:read']);
  });

  it('refuses a key with no scope, which a String Set cannot hold, and stores nothing', async () => {
    await expect(keys.register(generateApiKey(), 'none', { scopes: [] })).rejects.toThrow(/at least one scope/);
    expect(await rawItems()).toEqual([]);
  });

  it('stores only the hash, the id, the name, the scopes and the creation time: never the key', async () => {
    const key = generateApiKey();
    const record = await keys.register(key, 'ci');

    const items = await rawItems();
    expect(items).toEqual([
      {
        keyHash: hashApiKey(key),
        keyId: keyIdOf(hashApiKey(key)),
        name: 'ci',
        scopes: new Set(['pets:read', 'pets:write', 'orders:read']),
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/),
      },
    ]);
    expect(record).toEqual({ ...items[0], scopes: ['pets:read', 'pets:write', 'orders:read'] });
    const stored = JSON.stringify(items);
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(key.slice('petstore_'.length));
  });

  it('is idempotent: registering a key again keeps the first record', async () => {
    const key = generateApiKey();
    const first = await keys.register(key, 'ci');
    const second = await keys.register(key, 'another name');

    expect(second).toEqual(first);
    expect(await rawItems()).toEqual([{ ...first, scopes: new Set(first.scopes) }]);
  });

  it('does not bring a revoked key back to life', async () => {
    const key = generateApiKey();
    const { keyId } = await keys.register(key, 'ci');
    await keys.revoke(keyId);

    const again = await keys.register(key, 'ci');

    expect(again.revokedAt).toEqual(expect.any(String));
    expect(await keys.findActive(key)).toBeUndefined();
  });
});

describe('findActive', () => {
  it('finds a registered key', async () => {
    const key = generateApiKey();
    const record = await keys.register(key, 'ci');
    expect(await keys.findActive(key)).toEqual(record);
  });

  it('finds nothing for an unknown key, or a registered key with a changed character or case', async () => {
    const key = generateApiKey();
    await keys.register(key, 'ci');
    expect(await keys.findActive(generateApiKey())).toBeUndefined();
    expect(await keys.findActive(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`)).toBeUndefined();
    expect(await keys.findActive(key.toUpperCase())).toBeUndefined();
    expect(await keys.findActive('')).toBeUndefined();
  });
});

describe('list and revoke', () => {
  it('lists every key, oldest first, revoked ones included', async () => {
    const first = await keys.register(generateApiKey(), 'first');
    const second = await keys.register(generateApiKey(), 'second');
    await keys.revoke(first.keyId);

    const listed = await keys.list();

    const createdAts = listed.map((record) => record.createdAt);
    expect(createdAts).toEqual([...createdAts].sort());
    expect(listed).toHaveLength(2);
    expect(listed).toEqual(expect.arrayContaining([{ ...first, revokedAt: expect.any(String) }, second]));
  });

  it('revokes by key id: the key stops working and the listing shows when', async () => {
    const key = generateApiKey();
    const other = generateApiKey();
    const record = await keys.register(key, 'ci');
    await keys.register(other, 'other');

    expect((await keys.revoke(record.keyId))?.revokedAt).toMatch(/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/);

    expect(await keys.findActive(key)).toBeUndefined();
    expect(await keys.findActive(other)).toBeDefined();
    const revoked = (await keys.list()).find((candidate) => candidate.keyId === record.keyId);
    expect(revoked?.revokedAt).toMatch(/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/);
  });

  it('keeps the first revocation time when revoked twice', async () => {
    const record = await keys.register(generateApiKey(), 'ci');
    await keys.revoke(record.keyId);
    const [first] = await keys.list();
    await new Promise((resolve) => setTimeout(resolve, 5));

    expect((await keys.revoke(record.keyId))?.revokedAt).toBe(first?.revokedAt);

    const [second] = await keys.list();
    expect(second?.revokedAt).toBe(first?.revokedAt);
  });

  it('answers undefined for a key id that does not exist, and changes nothing', async () => {
    const record = await keys.register(generateApiKey(), 'ci');
    expect(await keys.revoke('000000000000')).toBeUndefined();
    expect(await keys.revoke('')).toBeUndefined();
    expect(await keys.list()).toEqual([record]);
  });
});

describe('revokeOthersNamed', () => {
  it('revokes the active keys of that name but the one kept, and leaves other names alone', async () => {
    const [older, old, kept, other] = [generateApiKey(), generateApiKey(), generateApiKey(), generateApiKey()];
    const olderRecord = await keys.register(older, 'local');
    await keys.revoke(olderRecord.keyId);
    const oldRecord = await keys.register(old, 'local');
    const keptRecord = await keys.register(kept, 'local');
    await keys.register(other, 'ci');

    expect(await keys.revokeOthersNamed('local', keptRecord.keyId)).toEqual([oldRecord.keyId]);

    expect(await keys.findActive(old)).toBeUndefined();
    expect(await keys.findActive(kept)).toBeDefined();
    expect(await keys.findActive(other)).toBeDefined();
    expect(await keys.revokeOthersNamed('local', keptRecord.keyId)).toEqual([]);
  });
});

const HOUR = 3_600_000;
const at = (offsetMs: number, from = Date.now()) => new Date(from + offsetMs);
const itemOfId = async (keyId: string) => (await rawItems()).find((item) => item.keyId === keyId);

describe('expiry', () => {
  it('stores an expiry as given, and findActive refuses the key from that moment on', async () => {
    const key = generateApiKey();
    const now = Date.now();
    const expiresAt = at(HOUR, now).toISOString();
    const record = await keys.register(key, 'ci', { expiresAt });

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
    expect(keyState({ expiresAt: at(HOUR, now.getTime()).toISOString(), revokedAt: '' }, now)).toBe('revoked');
  });
});

describe('recordUse', () => {
  it('writes lastUsedAt on first use, then not again within the hour, then again after it', async () => {
    const key = generateApiKey();
    await keys.register(key, 'ci');
    const first = new Date();

    expect(await keys.recordUse((await keys.findActive(key))!, first)).toBe(true);
    const used = (await keys.findActive(key))!;
    expect(used.lastUsedAt).toBe(first.toISOString());

    expect(await keys.recordUse(used, at(LAST_USE_RESOLUTION_MS - 1, first.getTime()))).toBe(false);
    expect((await keys.findActive(key))?.lastUsedAt).toBe(first.toISOString());

    const later = at(LAST_USE_RESOLUTION_MS, first.getTime());
    expect(await keys.recordUse(used, later)).toBe(true);
    expect((await keys.findActive(key, later))?.lastUsedAt).toBe(later.toISOString());
  });

  it('lets one of two callers that read the same lastUsedAt write it', async () => {
    const key = generateApiKey();
    await keys.register(key, 'ci');
    const read = (await keys.findActive(key))!;

    const results = await Promise.all([keys.recordUse(read, at(0)), keys.recordUse(read, at(1))]);

    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('never brings a deleted key back as an item holding only lastUsedAt', async () => {
    const record = await keys.register(generateApiKey(), 'ci');
    await tables.client.send(new DeleteCommand({ TableName: tables.apiKeys, Key: { keyHash: record.keyHash } }));

    expect(await keys.recordUse(record)).toBe(false);
    expect(await rawItems()).toEqual([]);
  });
});

describe('roll', () => {
  it('makes a new key with the same name and scopes, and gives the old one an expiry a grace from now', async () => {
    const [oldKey, newKey] = [generateApiKey(), generateApiKey()];
    const old = await keys.register(oldKey, 'partner', { scopes: ['pets:read'] });
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
    const old = await keys.register(oldKey, 'leaked');
    await keys.roll(old.keyId, generateApiKey(), { graceMs: 0 });
    expect(await keys.findActive(oldKey)).toBeUndefined();
  });

  it('keeps an earlier expiry the old key already had', async () => {
    const expiresAt = at(HOUR).toISOString();
    const old = await keys.register(generateApiKey(), 'ci', { expiresAt });
    const { previous } = await keys.roll(old.keyId, generateApiKey(), { graceMs: 24 * HOUR });
    expect(previous.expiresAt).toBe(expiresAt);
    expect((await itemOfId(old.keyId))?.expiresAt).toBe(expiresAt);
  });

  it('refuses an unknown, revoked or expired key, and writes nothing', async () => {
    const revoked = await keys.register(generateApiKey(), 'revoked');
    await keys.revoke(revoked.keyId);
    const expired = await keys.register(generateApiKey(), 'expired', { expiresAt: at(-1).toISOString() });
    const before = await rawItems();

    for (const [keyId, state] of [
      ['000000000000', 'missing'],
      [revoked.keyId, 'revoked'],
      [expired.keyId, 'expired'],
    ] as const) {
      const refusal = keys.roll(keyId, generateApiKey(), { graceMs: HOUR });
      await expect(refusal).rejects.toBeInstanceOf(KeyStateError);
      await expect(refusal).rejects.toMatchObject({ keyId, state });
    }
    expect(await rawItems()).toHaveLength(before.length);
  });

  it('tries again when DynamoDB cancels the transaction for a conflict with another change of the key', async () => {
    const client = createDocumentClient({ endpoint: inject('dynamodbEndpoint') });
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
    const conflicted = apiKeysRepository({ client, tableName: tables.apiKeys });
    const old = await keys.register(generateApiKey(), 'ci');

    const { next } = await conflicted.roll(old.keyId, generateApiKey(), { graceMs: HOUR });

    expect(conflicts).toBe(-1);
    expect(await itemOfId(old.keyId)).toMatchObject({ replacedBy: next.keyId });
    client.destroy();
  });

  it('refuses to roll a key rolled already: its successor is the one to roll', async () => {
    const old = await keys.register(generateApiKey(), 'ci');
    const { next } = await keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR });

    await expect(keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR })).rejects.toMatchObject({ keyId: old.keyId, state: 'rolled' });
    await expect(keys.roll(next.keyId, generateApiKey(), { graceMs: HOUR })).resolves.toMatchObject({ previous: { keyId: next.keyId } });
  });

  it('is one transaction: of rolls of the same key at once, one succeeds, the others are told it was rolled', async () => {
    for (let round = 0; round < 5; round += 1) {
      const old = await keys.register(generateApiKey(), `ci ${round}`);

      const results = await Promise.allSettled([
        keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR }),
        keys.roll(old.keyId, generateApiKey(), { graceMs: 2 * HOUR }),
        keys.roll(old.keyId, generateApiKey(), { graceMs: 3 * HOUR }),
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
    const record = await keys.register(generateApiKey(), 'partner', { plan: 'partner', usage: usage(1) });
    expect(record).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', usageKey: usage(1).usageKey });
    expect(await itemOfId(record.keyId)).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', usageKey: usage(1).usageKey });
  });

  it('roll keeps the plan and the usage key, so that the quota already used carries over', async () => {
    const old = await keys.register(generateApiKey(), 'partner', { plan: 'partner', usage: usage(1) });
    const { next } = await keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR });
    expect(next).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', usageKey: usage(1).usageKey });
    expect(await itemOfId(next.keyId)).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', usageKey: usage(1).usageKey });
  });

  it('roll of a key from before plans gives its successor no usage key: both stay on the shared one', async () => {
    const old = await keys.register(generateApiKey(), 'legacy');
    const { next } = await keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR });
    const item = await itemOfId(next.keyId);
    expect(item).not.toHaveProperty('plan');
    expect(item).not.toHaveProperty('usageKeyId');
    expect(item).not.toHaveProperty('usageKey');
  });

  it('setPlan moves a key to another plan, keeping its usage key, and records who', async () => {
    const record = await keys.register(generateApiKey(), 'app', { plan: 'default', usage: usage(1) });
    const moved = await keys.setPlan(record.keyId, 'partner', { changedBy: 'local:alice' });
    expect(moved).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', usageKey: usage(1).usageKey, changedBy: 'local:alice' });
    expect(await itemOfId(record.keyId)).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', changedBy: 'local:alice' });
  });

  it('setPlan pairs a key from before plans with the usage key given', async () => {
    const record = await keys.register(generateApiKey(), 'legacy');
    expect(await keys.setPlan(record.keyId, 'partner', { usage: usage(2) })).toMatchObject({ plan: 'partner', ...usage(2) });
  });

  it('setPlan refuses a second usage key for a key that has one (it would be orphaned), and writes nothing', async () => {
    const record = await keys.register(generateApiKey(), 'app', { plan: 'default', usage: usage(1) });
    await expect(keys.setPlan(record.keyId, 'partner', { usage: usage(2) })).rejects.toMatchObject({ state: 'changed' });
    expect(await itemOfId(record.keyId)).toMatchObject({ plan: 'default', usageKeyId: 'ak-1' });
  });

  it('setPlan refuses a missing or revoked key with KeyStateError, and writes nothing', async () => {
    await expect(keys.setPlan('ffffffffffff', 'partner')).rejects.toEqual(new KeyStateError('ffffffffffff', 'missing'));
    const record = await keys.register(generateApiKey(), 'app');
    await keys.revoke(record.keyId);
    await expect(keys.setPlan(record.keyId, 'partner')).rejects.toEqual(new KeyStateError(record.keyId, 'revoked'));
    expect(await itemOfId(record.keyId)).not.toHaveProperty('plan');
    expect(await rawItems()).toHaveLength(1);
  });

  it('othersSharingUsageKey names the other end of a roll while it is active, and no one for a key from before plans', async () => {
    const old = await keys.register(generateApiKey(), 'app', { plan: 'partner', usage: usage(1) });
    await keys.register(generateApiKey(), 'other', { plan: 'partner', usage: usage(2) });
    const now = new Date();
    const { previous, next } = await keys.roll(old.keyId, generateApiKey(), { graceMs: HOUR, now });

    expect((await keys.othersSharingUsageKey(previous, now)).map((record) => record.keyId)).toEqual([next.keyId]);
    expect((await keys.othersSharingUsageKey(next, now)).map((record) => record.keyId)).toEqual([old.keyId]);
    // Once the old key's grace is over, the successor is the only key on the usage key.
    expect(await keys.othersSharingUsageKey(next, at(HOUR, now.getTime()))).toEqual([]);
    await keys.revoke(next.keyId);
    expect(await keys.othersSharingUsageKey(previous, now)).toEqual([]);

    const legacy = await keys.register(generateApiKey(), 'legacy');
    await keys.register(generateApiKey(), 'legacy too');
    expect(await keys.othersSharingUsageKey(legacy)).toEqual([]);
  });
});

describe('revoke', () => {
  it('records who revoked the key, and keeps the first revoker when revoked twice', async () => {
    const record = await keys.register(generateApiKey(), 'ci');
    await keys.revoke(record.keyId, 'local:alice');
    await keys.revoke(record.keyId, 'local:bob');
    expect(await itemOfId(record.keyId)).toMatchObject({ changedBy: 'local:alice', revokedAt: expect.any(String) });
  });
});

describe('markExpired', () => {
  it('marks each expiry reached once, leaving active and revoked keys alone', async () => {
    const now = new Date();
    const expired = await keys.register(generateApiKey(), 'expired', { expiresAt: at(-1, now.getTime()).toISOString() });
    await keys.register(generateApiKey(), 'active', { expiresAt: at(HOUR, now.getTime()).toISOString() });
    const revoked = await keys.register(generateApiKey(), 'revoked', { expiresAt: at(-1, now.getTime()).toISOString() });
    await keys.revoke(revoked.keyId);

    expect((await keys.markExpired(now, 'system:key-expiry')).map((record) => record.keyId)).toEqual([expired.keyId]);
    expect(await itemOfId(expired.keyId)).toMatchObject({ expiredAt: expired.expiresAt, changedBy: 'system:key-expiry' });
    expect(await keys.markExpired(now)).toEqual([]);
  });

  it('marks an expiry written in the console, as a plain string', async () => {
    const expiresAt = at(-HOUR).toISOString();
    await putConsoleKey(tables.client, tables.apiKeys, { extra: { expiresAt: { S: expiresAt } } });
    const marked = await keys.markExpired();
    expect(marked.map((record) => record.expiredAt)).toEqual([expiresAt]);
  });
});

describe('an unreachable database', () => {
  it('makes findActive reject with DatabaseUnavailable', async () => {
    const client = createDocumentClient({ endpoint: `http://127.0.0.1:${await freePort()}`, maxAttempts: 2 });
    const unreachable = apiKeysRepository({ client, tableName: 'api-keys' });
    await expect(unreachable.findActive(generateApiKey())).rejects.toBeInstanceOf(DatabaseUnavailable);
    await expect(unreachable.list()).rejects.toBeInstanceOf(DatabaseUnavailable);
  });
});
