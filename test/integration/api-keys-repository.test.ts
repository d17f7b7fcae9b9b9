/** The API-keys repository against the real DynamoDB Local: only hashes are stored; keys can be revoked. */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { apiKeysRepository, type ApiKeysRepository } from '../../shared/api-keys-repository';
import { generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import { createDocumentClient, DatabaseUnavailable } from '../../shared/dynamodb';
import { freePort } from '../../tools/dynamodb-local';
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

describe('an unreachable database', () => {
  it('makes findActive reject with DatabaseUnavailable', async () => {
    const client = createDocumentClient({ endpoint: `http://127.0.0.1:${await freePort()}`, maxAttempts: 2 });
    const unreachable = apiKeysRepository({ client, tableName: 'api-keys' });
    await expect(unreachable.findActive(generateApiKey())).rejects.toBeInstanceOf(DatabaseUnavailable);
    await expect(unreachable.list()).rejects.toBeInstanceOf(DatabaseUnavailable);
  });
});
