/**
 * The audit trail of key changes, locally: the local stack runs the key-audit function on the
 * keys table's DynamoDB Local stream and the expiry sweep; `npm run keys -- audit` reads the
 * local audit log. Changes are made as each writer makes them: the repository with an actor (the
 * key tool's path), raw attribute values without one (the DynamoDB console), the authorizer's use.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
  UpdateItemCommand,
  waitUntilTableExists,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { stageSettings } from '../../infra/stages';
import { generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import { apiKeysRepository, type ApiKeyRecord } from '../../shared/api-keys-repository';
import {
  AUDIT_STREAM_RETRY_ATTEMPTS,
  MAX_AUDIT_ENTRY_BYTES,
  TRUNCATED_TEXT_LENGTH,
  TRUNCATION_MARK,
  type KeyAuditEntry,
} from '../../shared/key-audit';
import { apiKeysTable, createTableInput } from '../../shared/tables';
import { UsageError } from '../../tools/cli';
import { startDynamoDBLocal } from '../../tools/dynamodb-local';
import { runKeysCommand } from '../../tools/keys/cli';
import { startLocalKeyAudit } from '../../tools/local-server/key-audit-stream';
import { startLocalStack } from '../../tools/local-server/local-stack';
import { localUsageKey } from '../../tools/local-server/usage-plans';
import { startLocalApi, type LocalApi } from '../support/local-api';
import { putConsoleKey } from '../support/console-keys';
import { FIXTURE_PREFIX } from '../support/fixture-names';
import { createTestTables, freshTableNames, keyTablesEnv } from '../support/tables';
import { READ_ORDERS, READ_PETS, WRITE_PETS } from '../support/vocabulary';
import { databaseClient } from '../support/database';

const ACTOR = 'local:auditor';

let api: LocalApi;
/** A client of the test's own, as the console is another writer. */
let testClient: DynamoDBDocumentClient;

beforeAll(async () => {
  testClient = databaseClient({ endpoint: inject('dynamodbEndpoint') });
  // The stream is read when a test asks (poll), and on a timer too slow to race it.
  api = await startLocalApi({ keyAudit: { pollIntervalMs: 60_000, expirySweepIntervalMs: 3_600_000 } });
});
afterAll(async () => {
  await api?.close();
  testClient?.destroy();
});

/** `npm run keys -- audit …` on this stack's keys table; returns the exit status and the lines printed. */
const audit = async (...argv: string[]) => {
  const lines: string[] = [];
  const status = await runKeysCommand(['audit', ...argv], {
    env: {
      DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
      API_KEYS_TABLE_NAME: api.tables.apiKeys,
      API_KEY_LAST_USE_TABLE_NAME: api.tables.apiKeyLastUse,
    },
    print: (line) => lines.push(line),
  });
  return { status, lines };
};

/** The audit entries of one key, after the stream has been read up to now. */
const entriesOf = async (keyId: string): Promise<KeyAuditEntry[]> => {
  await api.keyAudit?.poll();
  const { status, lines } = await audit(keyId, '--json');
  expect(status).toBe(0);
  return lines.map((line) => JSON.parse(line) as KeyAuditEntry);
};

/** Writes attributes as the DynamoDB console does: raw types, no changedBy or changedAt. `#name` stands for `name`, a reserved word. */
const consoleEdit = async (record: ApiKeyRecord, attributes: string, values: Record<string, AttributeValue>) => {
  await testClient.send(
    new UpdateItemCommand({
      TableName: api.tables.apiKeys,
      Key: { keyHash: { S: record.keyHash } },
      UpdateExpression: `SET ${attributes}`,
      ...(attributes.includes('#name') ? { ExpressionAttributeNames: { '#name': 'name' } } : {}),
      ExpressionAttributeValues: values,
    }),
  );
};

/** Removes an attribute as the DynamoDB console does. */
const consoleRemove = async (record: ApiKeyRecord, attribute: string) => {
  await testClient.send(
    new UpdateItemCommand({
      TableName: api.tables.apiKeys,
      Key: { keyHash: { S: record.keyHash } },
      UpdateExpression: `REMOVE ${attribute}`,
    }),
  );
};

/**
 * The authorizer's record of a use (recordUse), which the key now has. Tried again when a busy
 * machine outran its one attempt's deadline (LAST_USE_DEADLINE_MS): an attempt that wrote before
 * it was cut off leaves the next one nothing to write.
 */
const useOnce = async (record: ApiKeyRecord) => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await api.keys.recordUse(record);
      break;
    } catch (error) {
      if (attempt >= 5 || (error as Error).name !== 'AbortError') throw error;
    }
  }
  expect((await api.keys.findById(record.keyId, { withLastUse: true }))?.lastUsedAt).toMatch(/^\d{4}-/);
};

/** A key's item as stored, read strongly consistent. */
const keyItemOf = async (keyHash: string) =>
  (await testClient.send(new GetItemCommand({ TableName: api.tables.apiKeys, Key: { keyHash: { S: keyHash } }, ConsistentRead: true })))
    .Item;

const register = (name: string, options: { expiresAt?: string } = {}) =>
  api.keys.register(generateApiKey(), name, { usage: localUsageKey(), scopes: [READ_PETS, WRITE_PETS], changedBy: ACTOR, ...options });

describe('the local audit trail', () => {
  it('records a key created, with who and when, and nothing for its use by the authorizer', async () => {
    const record = await register('ci');
    await useOnce(record);

    expect(await entriesOf(record.keyId)).toEqual([
      {
        at: record.createdAt,
        keyId: record.keyId,
        name: 'ci',
        action: 'created',
        by: ACTOR,
        // Where it was written: the region the local stack stands for, its client's.
        region: await testClient.config.region(),
        changes: {
          createdAt: { from: null, to: record.createdAt },
          keyId: { from: null, to: record.keyId },
          name: { from: null, to: 'ci' },
          scopes: { from: null, to: [READ_PETS, WRITE_PETS], grants: { from: [], to: [READ_PETS, WRITE_PETS] } },
          // Its plan and its usage key's id; the usage key's value and its binding (a digest) by fingerprint only.
          plan: { from: null, to: 'default' },
          usageKeyId: { from: null, to: record.usageKeyId },
          usageKey: { from: null, to: expect.stringMatching(/^sha256:[0-9a-f]{8}$/) },
          usageKeyBinding: { from: null, to: expect.stringMatching(/^\[secret sha256:[0-9a-f]{8}\]$/) },
        },
        streamAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/),
        eventId: expect.any(String),
        sequenceNumber: expect.stringMatching(/^\d+$/),
      },
    ]);
  });

  it('records a revocation by its revoker', async () => {
    const record = await register('to-revoke');
    const revoked = await api.keys.revoke(record.keyId, ACTOR);

    expect((await entriesOf(record.keyId)).map(({ action, by, at }) => ({ action, by, at }))).toEqual([
      { action: 'created', by: ACTOR, at: record.createdAt },
      { action: 'revoked', by: ACTOR, at: revoked?.revokedAt },
    ]);
  });

  it('records scopes narrowed and an expiry set in the console as by an unknown person', async () => {
    const record = await register('console-edited');
    await consoleEdit(record, 'scopes = :scopes', { ':scopes': { SS: [READ_PETS] } });
    await consoleEdit(record, 'expiresAt = :expiresAt', { ':expiresAt': { S: '2099-01-01T00:00:00.000Z' } });

    const [, narrowed, expiring] = await entriesOf(record.keyId);
    expect(narrowed).toMatchObject({
      action: 'scopes_changed',
      by: 'unknown',
      changes: { scopes: { from: [READ_PETS, WRITE_PETS], to: [READ_PETS] } },
    });
    expect(expiring).toMatchObject({
      action: 'expiry_set',
      by: 'unknown',
      changes: { expiresAt: { from: null, to: '2099-01-01T00:00:00.000Z' } },
    });
    // The console's changes are dated by the stream (DynamoDB Local rounds down to the minute).
    expect(Date.parse(narrowed?.at ?? '')).toBeGreaterThan(Date.parse(record.createdAt) - 60_000);
  });

  it('records scopes removed in the console as none, in the text and the JSON', async () => {
    const record = await api.keys.register(generateApiKey(), 'emptied', {
      usage: localUsageKey(),
      scopes: [READ_PETS],
      changedBy: ACTOR,
    });
    await consoleRemove(record, 'scopes');
    await api.keyAudit?.poll();

    const [, emptied] = await entriesOf(record.keyId);
    expect(emptied).toMatchObject({
      action: 'scopes_changed',
      by: 'unknown',
      changes: { scopes: { from: [READ_PETS], to: null, grants: { from: [READ_PETS], to: [] } } },
    });
    const { lines } = await audit(record.keyId);
    expect(lines[2]).toMatch(/\tscopes_changed\tunknown\tscopes pets:read -> none \(no scopes attribute\)$/);
  });

  it('records a NULL revokedAt written in the console as revoked, and its removal as unrevoked', async () => {
    const record = await register('null-revoked');
    await consoleEdit(record, 'revokedAt = :null', { ':null': { NULL: true } });
    await consoleRemove(record, 'revokedAt');

    const entries = await entriesOf(record.keyId);
    expect(entries.map(({ action, by, changes }) => ({ action, by, revokedAt: changes.revokedAt }))).toEqual([
      { action: 'created', by: ACTOR, revokedAt: undefined },
      { action: 'revoked', by: 'unknown', revokedAt: { from: null, to: { NULL: true } } },
      { action: 'unrevoked', by: 'unknown', revokedAt: { from: { NULL: true }, to: null } },
    ]);
    expect(new Set(entries.map(({ eventId }) => eventId)).size).toBe(3);
  });

  it('records a roll on both keys, and the old key reaching its expiry through the sweep', async () => {
    const record = await register('rolled');
    const now = new Date();
    const { next, previous } = await api.keys.roll(record.keyId, generateApiKey(), { graceMs: 0, changedBy: ACTOR, now });
    await api.keyAudit?.sweep();

    expect(await entriesOf(next.keyId)).toMatchObject([
      { action: 'rolled', by: ACTOR, name: 'rolled', changes: { replaces: { from: null, to: record.keyId } } },
    ]);
    expect(await entriesOf(record.keyId)).toMatchObject([
      { action: 'created' },
      {
        action: 'expiry_set',
        by: ACTOR,
        at: now.toISOString(),
        changes: { expiresAt: { to: previous.expiresAt }, replacedBy: { to: next.keyId } },
      },
      { action: 'expired', by: 'system:key-expiry', changes: { expiredAt: { from: null, to: previous.expiresAt } } },
    ]);
  });

  it('prints one line per change with the tool: at, id, name, action, by and what changed; never a key or its hash', async () => {
    const key = generateApiKey();
    const record = await api.keys.register(key, 'printed', { usage: localUsageKey(), scopes: [READ_PETS], changedBy: ACTOR });
    await consoleEdit(record, 'scopes = :scopes', { ':scopes': { SS: [READ_PETS, READ_ORDERS] } });
    const revoked = await api.keys.revoke(record.keyId, ACTOR);
    await api.keyAudit?.poll();

    const { status, lines } = await audit(record.keyId);

    expect(status).toBe(0);
    expect(lines).toEqual([
      'at\tid\tname\taction\tby\tchanges',
      `${record.createdAt}\t${record.keyId}\tprinted\tcreated\t${ACTOR}\tscopes pets:read`,
      expect.stringMatching(
        new RegExp(`^\\S+\\t${record.keyId}\\tprinted\\tscopes_changed\\tunknown\\tscopes ${READ_PETS} -> ${READ_ORDERS},${READ_PETS}$`),
      ),
      `${revoked?.revokedAt}\t${record.keyId}\tprinted\trevoked\t${ACTOR}\trevokedAt none -> ${revoked?.revokedAt}`,
    ]);
    const everything = (await audit()).lines.join('\n') + (await audit('--json')).lines.join('\n');
    expect(everything).toContain(record.keyId);
    expect(everything).not.toContain(key);
    expect(everything).not.toContain(hashApiKey(key));
  });

  it('records the changes the key tool makes as by the OS user who ran it', async () => {
    const tool = async (...argv: string[]) => {
      const lines: string[] = [];
      const status = await runKeysCommand([...argv, '--json'], {
        env: {
          DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
          API_KEYS_TABLE_NAME: api.tables.apiKeys,
          API_KEY_LAST_USE_TABLE_NAME: api.tables.apiKeyLastUse,
        },
        print: (line) => lines.push(line),
      });
      expect(status).toBe(0);
      return lines.map((line) => JSON.parse(line) as { id: string; key?: string });
    };
    const [created] = await tool('create', '--name', 'by-the-tool', '--scopes', READ_PETS);
    const [successor] = await tool('roll', created!.id, '--grace', '1h');
    // The old key alone: its successor, sharing its usage key, keeps it.
    await tool('revoke', created!.id, '--only-this-key');
    const me = `local:${userInfo().username}`;

    expect((await entriesOf(created!.id)).map(({ action, by }) => ({ action, by }))).toEqual([
      { action: 'created', by: me },
      { action: 'expiry_set', by: me },
      { action: 'revoked', by: me },
    ]);
    expect(await entriesOf(successor!.id)).toMatchObject([{ action: 'rolled', by: me, name: 'by-the-tool' }]);
    const lines = (await audit('--json')).lines.join('\n');
    expect(lines).not.toContain(created!.key);
    expect(lines).not.toContain(successor!.key);
  });

  it('records a usage key copied from another key in the console, and one removed, by fingerprint: never the value', async () => {
    const victimUsage = localUsageKey();
    const victim = await api.keys.register(generateApiKey(), 'victim', { changedBy: ACTOR, plan: 'default', usage: victimUsage });
    const ownUsage = localUsageKey();
    const thief = await api.keys.register(generateApiKey(), 'thief', { changedBy: ACTOR, plan: 'default', usage: ownUsage });
    // Would spend the victim's quota, were it admitted (the authorizer refuses it: the binding does not match).
    await consoleEdit(thief, 'usageKey = :usageKey', { ':usageKey': { S: victimUsage.usageKey } });
    // Then removed: the authorizer refuses a key without a usage key too.
    await consoleRemove(thief, 'usageKey');

    const [victimCreated] = await entriesOf(victim.keyId);
    const [thiefCreated, copied, removed] = await entriesOf(thief.keyId);
    const victimsFingerprint = victimCreated?.changes.usageKey?.to;
    expect(victimsFingerprint).toMatch(/^sha256:[0-9a-f]{8}$/);
    expect(thiefCreated?.changes.usageKey?.to).not.toBe(victimsFingerprint);
    expect(copied).toMatchObject({
      action: 'changed',
      by: 'unknown',
      changes: { usageKey: { from: thiefCreated?.changes.usageKey?.to, to: victimsFingerprint } },
    });
    expect(Object.keys(copied?.changes ?? {})).toEqual(['usageKey']);
    expect(removed).toMatchObject({ action: 'changed', by: 'unknown', changes: { usageKey: { from: victimsFingerprint, to: null } } });

    const { lines } = await audit(thief.keyId);
    expect(lines.slice(2)).toEqual([
      expect.stringMatching(new RegExp(`\\tchanged\\tunknown\\tusageKey ${thiefCreated?.changes.usageKey?.to} -> ${victimsFingerprint}$`)),
      expect.stringMatching(new RegExp(`\\tchanged\\tunknown\\tusageKey ${victimsFingerprint} -> none$`)),
    ]);
    const everything = (await audit()).lines.join('\n') + (await audit('--json')).lines.join('\n');
    expect(everything).not.toContain(victimUsage.usageKey);
    expect(everything).not.toContain(ownUsage.usageKey);
  });

  it("writes no line for the authorizer's record of a use, which leaves the key's item as it was; records a lastUsedAt the console puts there", async () => {
    const record = await register('last-used');
    const asRegistered = await keyItemOf(record.keyHash);
    await useOnce(record);
    expect(await keyItemOf(record.keyHash)).toEqual(asRegistered);
    await consoleEdit(record, 'lastUsedAt = :lastUsedAt', { ':lastUsedAt': { S: '2020-01-01T00:00:00.000Z' } });

    const entries = await entriesOf(record.keyId);
    expect(entries.map(({ action, by }) => `${action} ${by}`)).toEqual([`created ${ACTOR}`, 'changed unknown']);
    expect(entries[1]?.changes).toEqual({ lastUsedAt: { from: null, to: '2020-01-01T00:00:00.000Z' } });
  });

  it('prints a name with line breaks, tabs and terminal escapes escaped, so that it forges no line; --json keeps it exact', async () => {
    const record = await register('plain');
    const forged = `x\n2030-01-01T00:00:00.000Z\t${record.keyId}\tplain\trevoked\tlocal:alice\trevokedAt none -> 2030\u001b[2K\u0085\u202e`;
    await consoleEdit(record, '#name = :name', { ':name': { S: forged } });
    await api.keyAudit?.poll();

    const { lines } = await audit(record.keyId);

    expect(lines).toHaveLength(3);
    expect(lines.filter((line) => line.includes('\trevoked\t'))).toEqual([]);
    expect(lines.join('')).not.toMatch(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202e]/);
    const shown = `x\\n2030-01-01T00:00:00.000Z\\t${record.keyId}\\tplain\\trevoked\\tlocal:alice\\trevokedAt none -> 2030\\x1b[2K\\u0085\\u202e`;
    expect(lines[2]).toBe(`${lines[2]?.split('\t')[0]}\t${record.keyId}\t${shown}\trenamed\tunknown\tname plain -> ${shown}`);
    const [, renamed] = (await audit(record.keyId, '--json')).lines.map((line) => JSON.parse(line) as KeyAuditEntry);
    expect(renamed?.name).toBe(forged);
  });

  it("lists every key's changes without an id, the local key of the stack included", async () => {
    const { lines } = await audit('--json');
    const entries = lines.map((line) => JSON.parse(line) as KeyAuditEntry);
    expect(entries.find(({ name }) => name === 'test')).toMatchObject({ action: 'created', by: expect.stringMatching(/^local:/) });
  });

  it('refuses an id no line names in one line (exit status 2), and a key in place of an id without printing it', async () => {
    await expect(audit('ffffffffffff')).rejects.toMatchObject({
      name: 'Error',
      message:
        'No audit entry names the key ffffffffffff (npm run keys -- list shows the ids): ' +
        'the trail starts at the deploy that added it, so a key made before and not changed since has none.',
    });
    await expect(audit('ffffffffffff')).rejects.toBeInstanceOf(UsageError);
    const key = generateApiKey();
    const refusal = await audit(key).then(
      () => '',
      (error: Error) => error.message,
    );
    expect(refusal).toContain('a key id, not the key itself');
    expect(refusal).not.toContain(key);
  });

  it('reads the stream on its own, about once per poll interval', async () => {
    const polled = await startLocalApi({ keyAudit: { pollIntervalMs: 100, expirySweepIntervalMs: 3_600_000 } });
    try {
      const record = await polled.keys.register(generateApiKey(), 'polled', { usage: localUsageKey(), changedBy: ACTOR });
      await expect
        .poll(
          async () => {
            const lines: string[] = [];
            await runKeysCommand(['audit', record.keyId], {
              env: {
                DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
                API_KEYS_TABLE_NAME: polled.tables.apiKeys,
                API_KEY_LAST_USE_TABLE_NAME: polled.tables.apiKeyLastUse,
              },
              print: (line) => lines.push(line),
            });
            return lines.length;
          },
          { timeout: 10_000, interval: 100 },
        )
        .toBe(2);
    } finally {
      await polled.close();
    }
  });
});

describe('a change whose audit line is long, or cannot be written', () => {
  it('records a 250 KB name written in the console, truncated and marked so, and every change after it', async () => {
    const own = await startLocalApi({ keyAudit: { pollIntervalMs: 60_000, expirySweepIntervalMs: 3_600_000 } });
    try {
      const record = await own.keys.register(generateApiKey(), 'ci', { usage: localUsageKey(), changedBy: ACTOR });
      const huge = 'n'.repeat(250_000);
      await testClient.send(
        new UpdateItemCommand({
          TableName: own.tables.apiKeys,
          Key: { keyHash: { S: record.keyHash } },
          UpdateExpression: 'SET #name = :name',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: { ':name': { S: huge } },
        }),
      );
      await own.keys.revoke(record.keyId, ACTOR);
      await own.keyAudit?.poll();

      const lines: string[] = [];
      await runKeysCommand(['audit', record.keyId, '--json'], {
        env: {
          DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
          API_KEYS_TABLE_NAME: own.tables.apiKeys,
          API_KEY_LAST_USE_TABLE_NAME: own.tables.apiKeyLastUse,
        },
        print: (line) => lines.push(line),
      });
      const entries = lines.map((line) => JSON.parse(line) as KeyAuditEntry);
      expect(entries.map(({ action, by, truncated }) => ({ action, by, truncated }))).toEqual([
        { action: 'created', by: ACTOR, truncated: undefined },
        { action: 'renamed', by: 'unknown', truncated: true },
        // One copy of the name fits in a log event: written whole.
        { action: 'revoked', by: ACTOR, truncated: undefined },
      ]);
      const cut = `${'n'.repeat(TRUNCATED_TEXT_LENGTH)}${TRUNCATION_MARK}`;
      expect(entries[1]).toMatchObject({ keyId: record.keyId, name: cut, changes: { name: { from: 'ci', to: cut } } });
      for (const line of lines) expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(MAX_AUDIT_ENTRY_BYTES);
      const text: string[] = [];
      await runKeysCommand(['audit', record.keyId], {
        env: {
          DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
          API_KEYS_TABLE_NAME: own.tables.apiKeys,
          API_KEY_LAST_USE_TABLE_NAME: own.tables.apiKeyLastUse,
        },
        print: (line) => text.push(line),
      });
      expect(text[2]?.endsWith(`\trenamed\tunknown\tname ci -> ${cut}; line truncated`)).toBe(true);
    } finally {
      await own.close();
    }
  });

  it(
    'sets a record aside after the retries the deployed mapping makes, records the changes after it, and says which is missing',
    { timeout: 60_000 },
    async () => {
      const tables = await createTestTables();
      const keys = apiKeysRepository({ client: tables.client, tables });
      // The audit's own client, on which DynamoDB refuses one key's audit lines, as it refused a line over 400 KB.
      const refused: { keyId?: string; attempts: number } = { attempts: 0 };
      const client = databaseClient({ endpoint: tables.endpoint });
      client.middlewareStack.add(
        (next, { commandName }) =>
          async (args) => {
            const { TableName, Item = {} } = args.input as { TableName?: string; Item?: Record<string, unknown> };
            const text = (value: unknown) => (typeof value === 'string' ? value : (value as { S?: string } | undefined)?.S);
            if (/^Put(Item)?Command$/.test(String(commandName)) && TableName === `${tables.apiKeys}-audit-log`) {
              if (text(Item.line) !== undefined && text(Item.keyId) === refused.keyId) {
                refused.attempts += 1;
                throw Object.assign(new Error('Item size has exceeded the maximum allowed size'), { name: 'ValidationException' });
              }
            }
            return next(args);
          },
        { step: 'initialize', name: 'refuseOneKeysLines' },
      );
      const trail = await startLocalKeyAudit(
        { client, keysTableName: tables.apiKeys, keys },
        { pollIntervalMs: 3_600_000, expirySweepIntervalMs: 3_600_000 },
      );
      const auditHere = async (...argv: string[]) => {
        const lines: string[] = [];
        const outcome = await runKeysCommand(['audit', ...argv], {
          env: {
            DYNAMODB_ENDPOINT: tables.endpoint,
            API_KEYS_TABLE_NAME: tables.apiKeys,
            API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
          },
          print: (line) => lines.push(line),
        }).then(
          (status) => ({ status, error: undefined }),
          (error: unknown) => ({ status: undefined, error: error as Error }),
        );
        return { lines, ...outcome };
      };
      try {
        const unwritable = await keys.register(generateApiKey(), 'unwritable-secret-name', { usage: localUsageKey(), changedBy: ACTOR });
        refused.keyId = unwritable.keyId;
        const after = await keys.register(generateApiKey(), 'after', { usage: localUsageKey(), changedBy: ACTOR });

        // Tried, then tried again at each read up to the retries: the changes after it wait.
        for (let read = 1; read <= AUDIT_STREAM_RETRY_ATTEMPTS; read += 1) await trail.poll();
        expect(refused.attempts).toBe(AUDIT_STREAM_RETRY_ATTEMPTS);
        expect((await auditHere('--json')).lines).toEqual([]);

        await trail.poll();
        expect(refused.attempts).toBe(AUDIT_STREAM_RETRY_ATTEMPTS + 1);
        await keys.revoke(after.keyId, ACTOR);
        await trail.poll();
        expect(refused.attempts).toBe(AUDIT_STREAM_RETRY_ATTEMPTS + 1);

        const all = await auditHere('--json');
        expect(all.lines.map((line) => JSON.parse(line) as KeyAuditEntry).map(({ name, action }) => `${name} ${action}`)).toEqual([
          'after created',
          'after revoked',
        ]);
        // After the lines, one line names the record set aside, never its content.
        expect(all.error).toBeInstanceOf(Error);
        expect(all.error).not.toBeInstanceOf(UsageError);
        const message = all.error?.message ?? '';
        expect(message).toMatch(
          new RegExp(
            `^1 change\\(s\\) missing from the local audit trail: npm start could not write their lines in ${AUDIT_STREAM_RETRY_ATTEMPTS + 1} attempts ` +
              `and set them aside: stream record \\d+ \\(key ${unwritable.keyId}, \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\); `,
          ),
        );
        expect(message).not.toContain('\n');
        expect(message).not.toContain('unwritable-secret-name');
        // Of the key set aside, that is the news; another key's trail is whole.
        await expect(auditHere(unwritable.keyId)).resolves.toMatchObject({ error: { message } });
        await expect(auditHere(after.keyId)).resolves.toMatchObject({ status: 0, error: undefined });
      } finally {
        await trail.stop();
        client.destroy();
        tables.client.destroy();
      }
    },
  );
});

describe('the keys table in DynamoDB Local', () => {
  it('is created with its stream, from the shared definition, before any audit runs', async () => {
    const tables = await createTestTables();
    try {
      const { Table } = await tables.client.send(new DescribeTableCommand({ TableName: tables.apiKeys }));
      expect(Table?.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' });
    } finally {
      tables.client.destroy();
    }
  });
});

describe('a keys table made before the audit trail', () => {
  it('gets its stream turned on, and its changes recorded from then on', async () => {
    const tables = freshTableNames();
    const { StreamSpecification: _, ...withoutStream } = createTableInput(apiKeysTable, tables.apiKeys);
    await testClient.send(new CreateTableCommand(withoutStream));
    await waitUntilTableExists({ client: testClient, maxWaitTime: 60 }, { TableName: tables.apiKeys });

    const stack = await startLocalStack({
      dynamodbEndpoint: inject('dynamodbEndpoint'),
      tables,
      keyName: 'old-table',
      server: { port: 0 },
      keyAudit: { pollIntervalMs: 60_000, expirySweepIntervalMs: 3_600_000 },
    });
    try {
      await stack.keyAudit?.poll();
      const lines: string[] = [];
      await runKeysCommand(['audit', stack.keyId, '--json'], {
        env: {
          DYNAMODB_ENDPOINT: stack.dynamodbEndpoint,
          API_KEYS_TABLE_NAME: tables.apiKeys,
          API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
        },
        print: (line) => lines.push(line),
      });
      expect(lines.map((line) => (JSON.parse(line) as KeyAuditEntry).action)).toEqual(['created']);
    } finally {
      await stack.stop();
    }
  });
});

describe('a DynamoDB Local without -sharedDb (one database per access key and region)', { timeout: 90_000 }, () => {
  it('has its changes recorded, in the region of AWS_REGION: the stream is read as the table is', async () => {
    const database = await startDynamoDBLocal({ port: 0, sharedDb: false });
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    try {
      const tables = freshTableNames();
      const stack = await startLocalStack({
        dynamodbEndpoint: database.endpoint,
        tables,
        keyName: 'own-database',
        server: { port: 0 },
        keyAudit: { pollIntervalMs: 60_000, expirySweepIntervalMs: 3_600_000 },
      });
      try {
        // The database this test is about: another region sees none of its tables.
        const elsewhere = databaseClient({ endpoint: database.endpoint, region: 'us-west-2' });
        expect((await elsewhere.send(new ListTablesCommand({}))).TableNames).toEqual([]);
        elsewhere.destroy();
        const record = await stack.keys.register(generateApiKey(), 'regional', { usage: localUsageKey(), changedBy: ACTOR });
        await stack.keys.revoke(record.keyId, ACTOR);
        await stack.keyAudit?.poll();
        const lines: string[] = [];
        await runKeysCommand(['audit', '--json'], {
          env: {
            DYNAMODB_ENDPOINT: database.endpoint,
            API_KEYS_TABLE_NAME: tables.apiKeys,
            API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
          },
          print: (line) => lines.push(line),
        });
        expect(lines.map((line) => JSON.parse(line) as KeyAuditEntry).map(({ name, action }) => `${name} ${action}`)).toEqual([
          'own-database created',
          'regional created',
          'regional revoked',
        ]);
      } finally {
        await stack.stop();
      }
    } finally {
      vi.unstubAllEnvs();
      await database.stop();
    }
  });
});

describe('the local audit trails of a stage in several regions', () => {
  const regions = stageSettings('global').regions ?? [];
  const [home = '', second = ''] = regions;
  /** What a hand-written stamp may name: a region the stage does not run in. */
  const NO_REGION_OF_THE_STAGE = `${FIXTURE_PREFIX}-region-1`;
  const quiet = { pollIntervalMs: 60_000, expirySweepIntervalMs: 3_600_000 };

  /** Each region: its replica of the keys table, a repository writing in it, and its trail. */
  const startRegions = async () =>
    Promise.all(
      regions.map(async (region) => {
        const tables = await createTestTables();
        const keys = apiKeysRepository({ client: tables.client, tables, region });
        const trail = await startLocalKeyAudit(
          { client: tables.client, keysTableName: tables.apiKeys, keys, region, homeRegion: home, stageRegions: regions },
          quiet,
        );
        return { region, tables, keys, trail };
      }),
    );
  type Region = Awaited<ReturnType<typeof startRegions>>[number];

  /** The item of `keyHash` copied whole from `from`'s replica into every other one, as replication writes it. */
  const replicate = async (all: readonly Region[], from: Region, keyHash: string) => {
    const { Item } = await from.tables.client.send(
      new GetItemCommand({ TableName: from.tables.apiKeys, Key: { keyHash: { S: keyHash } }, ConsistentRead: true }),
    );
    for (const to of all.filter((other) => other !== from)) {
      await to.tables.client.send(new PutItemCommand({ TableName: to.tables.apiKeys, Item: Item! }));
    }
  };

  /** Each line every region's trail recorded, as [region, key id, action]. */
  const linesOf = async (all: readonly Region[]) => {
    const lines: Array<[string, string, string]> = [];
    for (const { region, tables, trail } of all) {
      await trail.poll();
      const printed: string[] = [];
      await runKeysCommand(['audit', '--json'], {
        env: keyTablesEnv(tables.endpoint, tables),
        print: (line) => printed.push(line),
      });
      for (const line of printed) {
        const { keyId, action } = JSON.parse(line) as KeyAuditEntry;
        lines.push([region, keyId, action]);
      }
    }
    return lines;
  };

  it('record each change once, in the region that made it; one no region stamped (the console) in the home region', async () => {
    expect(regions.length).toBeGreaterThan(1);
    const all = await startRegions();
    try {
      const homeRegion = all[0]!;
      const secondRegion = all[1]!;
      const created = await homeRegion.keys.register(generateApiKey(), 'travelling', { usage: localUsageKey(), changedBy: ACTOR });
      await replicate(all, homeRegion, created.keyHash);
      await secondRegion.keys.revoke(created.keyId, ACTOR);
      await replicate(all, secondRegion, created.keyHash);
      const consoleKey = hashApiKey(await putConsoleKey(secondRegion.tables.client, secondRegion.tables.apiKeys, { name: 'by-hand' }));
      await replicate(all, secondRegion, consoleKey);

      expect(await linesOf(all)).toEqual([
        [home, created.keyId, 'created'],
        [home, keyIdOf(consoleKey), 'created'],
        [second, created.keyId, 'revoked'],
      ]);
    } finally {
      for (const { trail, tables } of all) {
        await trail.stop();
        tables.client.destroy();
      }
    }
  });

  it('record a console edit stamped with a region the stage does not run in once, in the home region', async () => {
    const all = await startRegions();
    try {
      const homeRegion = all[0]!;
      const secondRegion = all[1]!;
      const created = await homeRegion.keys.register(generateApiKey(), 'narrow', {
        usage: localUsageKey(),
        scopes: [READ_PETS],
        changedBy: ACTOR,
      });
      await replicate(all, homeRegion, created.keyHash);
      // Its scopes widened by hand in the second region's console, the stamp set to a region of no stage here.
      await secondRegion.tables.client.send(
        new UpdateItemCommand({
          TableName: secondRegion.tables.apiKeys,
          Key: { keyHash: { S: created.keyHash } },
          UpdateExpression: 'SET scopes = :scopes, changedInRegion = :nowhere',
          ExpressionAttributeValues: { ':scopes': { SS: [READ_PETS, WRITE_PETS] }, ':nowhere': { S: NO_REGION_OF_THE_STAGE } },
        }),
      );
      await replicate(all, secondRegion, created.keyHash);

      expect(await linesOf(all)).toEqual([
        [home, created.keyId, 'created'],
        [home, created.keyId, 'scopes_changed'],
      ]);
    } finally {
      for (const { trail, tables } of all) {
        await trail.stop();
        tables.client.destroy();
      }
    }
  });
});
