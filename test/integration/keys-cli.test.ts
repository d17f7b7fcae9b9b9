/**
 * The key tool (`npm run keys`), against the real DynamoDB Local; a stage's table from a stubbed
 * CloudFormation, and the caller's identity on AWS from AWS STS mocked with aws-sdk-client-mock.
 * A stage's usage plans (its stack's outputs) and the API Gateway API keys that meter keys on them
 * are mocked with aws-sdk-client-mock too: there is no AWS account here.
 */
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanKeyCommand,
  FlushStageAuthorizersCacheCommand,
  UpdateApiKeyCommand,
} from '@aws-sdk/client-api-gateway';
import { CloudFormationClient, DescribeStacksCommand, type DescribeStacksCommandOutput } from '@aws-sdk/client-cloudformation';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { API_KEY_PREFIX, generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import { apiKeysRepository, type ApiKeyRecord, type ApiKeysRepository } from '../../shared/api-keys-repository';
import { keyState } from '../../shared/key-state';
import { runKeysCommand, stageKeysTable, USAGE } from '../../tools/keys/cli';
import { targetFailure } from '../../tools/keys/target';
import { UsageError } from '../../tools/cli';
import { expectOneLineFailure, npmRun, runCommandClosingOutput } from '../support/command';
import { putConsoleKey } from '../support/console-keys';
import { databaseTimeoutMs } from '../support/database';
import { fixtureScope } from '../support/fixture-names';
import { ALL_SCOPES_FIELD, ALL_SCOPES_SAID, literally, OTHER_PLAN, READ_ONLY_SCOPES } from '../support/vocabulary';
import { SCOPES } from '../../shared/scopes';
import { DEFAULT_PLAN } from '../../shared/plans';
import { createTestTables, type TestTables } from '../support/tables';
import { usageKeyBinding } from '../../shared/plan-policy';
import { freePort } from '../../tools/dynamodb-local';
import { localUsageKey } from '../../tools/local-server/usage-plans';

/** Who this file's changes to keys are made by. */
const ACTOR = 'local:test';

let tables: TestTables;
let keys: ApiKeysRepository;
let lines: string[];

beforeEach(async () => {
  // The key tool reads and writes the keys and last-use tables only.
  tables = await createTestTables(['apiKeys', 'apiKeyLastUse']);
  // Its record of a use waits as any other call does: a busy machine can outlast the deployed deadline.
  keys = apiKeysRepository({ client: tables.client, tables, lastUseDeadlineMs: databaseTimeoutMs() });
  lines = [];
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ALL_SCOPES = [...SCOPES];
/** Who the key tool records as making a change on a local DynamoDB. */
const LOCAL_ACTOR = `local:${userInfo().username}`;
const LIST_HEADER = 'id\tname\tscopes\tcreated\texpires\tlast used\tstate\tplan';
/** What a change that narrows a key's access says locally: the local server drops the key's cached answers. */
const TAKES_EFFECT_LOCALLY =
  'The change takes effect within seconds: the local server drops the cached answers of a key whose item changes.';

/** Runs the tool against this file's DynamoDB Local table, collecting what it prints. */
const run = (...argv: string[]) =>
  runKeysCommand(argv, {
    env: { DYNAMODB_ENDPOINT: tables.endpoint, API_KEYS_TABLE_NAME: tables.apiKeys, API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse },
    print: (line) => lines.push(line),
  });

/** The one line a refused command gives, checking that it is a UsageError (exit status 2) and that nothing was written. */
const refusal = async (...argv: string[]): Promise<string> => {
  const before = await keys.list();
  const error = await run(...argv).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(UsageError);
  const message = (error as Error).message;
  expect(message).not.toContain('\n');
  expect(await keys.list()).toEqual(before);
  return message;
};

const createKey = async (name: string, ...options: string[]) => {
  expect(await run('create', '--name', name, ...options)).toBe(0);
  const key = lines.find((line) => line.startsWith('petstore_'));
  if (key === undefined) throw new Error(`no key printed in ${JSON.stringify(lines)}`);
  const record = await keys.findActive(key);
  if (record === undefined) throw new Error('the printed key is not registered');
  lines = [];
  return { key, record };
};

const recordOf = async (keyId: string): Promise<ApiKeyRecord> => {
  const record = await keys.findById(keyId);
  if (!record) throw new Error(`no key ${keyId}`);
  return record;
};

/** Expects an ISO timestamp `ms` after a moment between `from` and `to`. */
const expectAfter = (iso: string | undefined, ms: number, from: number, to: number) => {
  expect(iso).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  const at = Date.parse(iso ?? '');
  expect(at).toBeGreaterThanOrEqual(from + ms);
  expect(at).toBeLessThanOrEqual(to + ms);
};

/** Times `call`, returning its result and the moments it ran between. */
const timed = async <T>(call: () => Promise<T>) => {
  const from = Date.now();
  const result = await call();
  return { result, from, to: Date.now() };
};

const parsedLines = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe('keys create', () => {
  it('registers a new key and prints it exactly once, with its id and name', async () => {
    expect(await run('create', '--name', 'ci')).toBe(0);

    const printedKeys = lines.filter((line) => /petstore_[A-Za-z0-9_-]{43,}/.test(line));
    expect(printedKeys).toHaveLength(1);
    const key = printedKeys[0] ?? '';
    expect(key).toMatch(/^petstore_[A-Za-z0-9_-]{43,}$/);
    const record = await keys.findActive(key);
    expect(record).toMatchObject({ name: 'ci' });
    expect(record?.expiresAt).toBeUndefined();
    expect(lines).toEqual([
      `Created key ${record?.keyId} (ci, scopes ${ALL_SCOPES_FIELD}) on plan ${DEFAULT_PLAN}. It is shown only this once:`,
      key,
    ]);
  });

  it('records who created the key: the local OS user, when the key was made', async () => {
    const { record } = await createKey('ci');
    expect(record.changedBy).toBe(LOCAL_ACTOR);
    expect(record.changedAt).toBe(record.createdAt);
  });

  it('gives a new key every scope unless --scopes narrows them', async () => {
    expect((await createKey('full')).record.scopes).toEqual(ALL_SCOPES);
    expect(await run('create', '--name', 'reader', '--scopes', READ_ONLY_SCOPES.join(', '))).toBe(0);
    const key = lines[1] ?? '';
    expect(lines[0]).toContain(`(reader, scopes ${READ_ONLY_SCOPES.join(',')})`);
    expect((await keys.findActive(key))?.scopes).toEqual([...READ_ONLY_SCOPES]);
  });

  it('stores the scopes as a String Set, as the DynamoDB console shows and edits them', async () => {
    expect(await run('create', '--name', 'writer', '--scopes', 'pets:write')).toBe(0);
    const [item] = (await keys.list()).map((record) => record.keyHash);
    const { Item } = await tables.client.send(new GetItemCommand({ TableName: tables.apiKeys, Key: { keyHash: { S: item ?? '' } } }));
    expect(Item?.scopes).toEqual({ SS: ['pets:write'] });
  });

  it.each([
    ['30d', 30 * DAY],
    ['36h', 36 * HOUR],
    ['90m', 90 * 60_000],
    ['45s', 45_000],
  ])('gives the key an expiry --expires-in %s from now, and says so', async (duration, ms) => {
    const { result: key, from, to } = await timed(async () => (await createKey('temp', '--expires-in', duration)).record);
    expectAfter(key.expiresAt, ms, from, to);
    expect(key.changedBy).toBe(LOCAL_ACTOR);
  });

  it('prints the expiry in the line that announces the key', async () => {
    expect(await run('create', '--name', 'temp', '--expires-at', '2100-01-31T12:00:00Z')).toBe(0);
    expect(lines[0]).toMatch(
      new RegExp(`^Created key [0-9a-f]{12} \\(temp, scopes ${literally(ALL_SCOPES_FIELD)}, expires 2100-01-31T12:00:00\\.000Z\\)`),
    );
  });

  it.each([
    ['2100-01-31T12:00:00Z', '2100-01-31T12:00:00.000Z'],
    ['2100-01-31T12:00:00.5+02:00', '2100-01-31T10:00:00.500Z'],
    ['2100-01-31T12:00-05:30', '2100-01-31T17:30:00.000Z'],
    ['2100-01-31', '2100-01-31T00:00:00.000Z'],
    // The farthest zones from UTC, both ways.
    ['2100-01-31T12:00:00+14:00', '2100-01-30T22:00:00.000Z'],
    ['2100-01-31T12:00:00-12:00', '2100-02-01T00:00:00.000Z'],
  ])('stores --expires-at %s as the UTC timestamp %s, as the console shows it', async (given, stored) => {
    expect((await createKey('dated', '--expires-at', given)).record.expiresAt).toBe(stored);
  });

  it.each([
    [
      'an --expires-at in the past',
      ['--expires-at', '2020-01-01T00:00:00Z'],
      /^--expires-at 2020-01-01T00:00:00\.000Z is not in the future/,
    ],
    ['an --expires-at of a day that does not exist', ['--expires-at', '2100-02-30'], /^--expires-at takes an ISO 8601 date/],
    ['an --expires-at without its time zone', ['--expires-at', '2100-01-31T12:00:00'], /^--expires-at takes an ISO 8601 date/],
    ['an --expires-at that is no date', ['--expires-at', 'tomorrow'], /^--expires-at takes an ISO 8601 date/],
    ['an --expires-at too far ahead', ['--expires-at', '9999-01-01'], /^--expires-at must be within 36500 days/],
    ...['+99:00', '+24:00', '+05:75', '+14:01', '-12:30', '-99:99'].map((offset): [string, string[], RegExp] => [
      `an --expires-at whose zone offset ${offset} no zone has`,
      ['--expires-at', `2100-01-31T12:00:00${offset}`],
      new RegExp(
        `^--expires-at has the zone offset \\${offset}, which no zone has: offsets run from -12:00 to \\+14:00 \\(Z is UTC\\)\\.$`,
      ),
    ]),
    ['--expires-in without a unit', ['--expires-in', '30'], /^--expires-in takes a duration: a whole number and a unit, s, m, h or d/],
    ['--expires-in in weeks', ['--expires-in', '2w'], /^--expires-in takes a duration/],
    ['a negative --expires-in', ['--expires-in=-1d'], /^--expires-in takes a duration/],
    [
      'a value starting with a dash, read as an option',
      ['--expires-in', '-1d'],
      /^option '--expires-in' needs a value; one starting with '-' is written --expires-in=-…: see npm run keys -- --help$/,
    ],
    ['a fractional --expires-in', ['--expires-in', '1.5h'], /^--expires-in takes a duration/],
    ['an --expires-in beyond 100 years', ['--expires-in', '36501d'], /^--expires-in takes a duration/],
    ['an --expires-in of 0', ['--expires-in', '0'], /^--expires-in must be more than 0/],
    [
      '--expires-in and --expires-at together',
      ['--expires-in', '1d', '--expires-at', '2100-01-01'],
      /^give --expires-in or --expires-at, not both/,
    ],
  ])('refuses %s in one line, exit status 2, and registers nothing', async (_, options, message) => {
    expect(await refusal('create', '--name', 'x', ...options)).toMatch(message);
    expect(await keys.list()).toEqual([]);
  });

  it.each([
    [
      'an unknown scope',
      `${SCOPES[0]},${fixtureScope('admin')}`,
      new RegExp(`^unknown scope '${literally(fixtureScope('admin'))}' in --scopes: the scopes are ${literally(ALL_SCOPES_SAID)}\\.$`),
    ],
    [
      'an empty list',
      '',
      new RegExp(`^--scopes needs one or more scopes separated by commas: the scopes are ${literally(ALL_SCOPES_SAID)}\\.$`),
    ],
    ['an empty entry', `${SCOPES[0]},,${SCOPES[1]}`, /^--scopes needs one or more scopes/],
  ])('refuses %s in --scopes in one line naming the valid scopes, and registers nothing', async (_, scopes, message) => {
    expect(await refusal('create', '--name', 'x', '--scopes', scopes)).toMatch(message);
    expect(await keys.list()).toEqual([]);
  });

  it('prints the new key as one JSON object with --json, the key included', async () => {
    expect(await run('create', '--name', 'ci', '--scopes', 'pets:read', '--expires-at', '2100-01-01', '--json')).toBe(0);
    expect(lines).toHaveLength(1);
    const [printed] = parsedLines();
    const record = await keys.findActive(String(printed?.key));
    expect(printed).toEqual({
      id: record?.keyId,
      name: 'ci',
      scopes: ['pets:read'],
      createdAt: record?.createdAt,
      expiresAt: '2100-01-01T00:00:00.000Z',
      revokedAt: null,
      lastUsedAt: null,
      plan: 'default',
      key: printed?.key,
    });
  });

  it('makes a different key each time', async () => {
    const first = await createKey('a');
    const second = await createKey('b');
    expect(first.key).not.toBe(second.key);
    expect((await keys.list()).map((record) => record.name).sort()).toEqual(['a', 'b']);
  });

  it('uses --endpoint over $DYNAMODB_ENDPOINT', async () => {
    const code = await runKeysCommand(['create', '--name', 'flag', '--endpoint', tables.endpoint], {
      env: {
        DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
        API_KEYS_TABLE_NAME: tables.apiKeys,
        API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
      },
      print: (line) => lines.push(line),
    });
    expect(code).toBe(0);
    expect((await keys.list()).map((record) => record.name)).toEqual(['flag']);
  });

  it('refuses a create without --name, and registers nothing', async () => {
    expect(await refusal('create')).toMatch(/--name/);
    expect(await keys.list()).toEqual([]);
  });

  it('refuses a name with a control character in one line (exit status 2), never echoing it, and registers nothing', async () => {
    for (const name of [
      'ci\n2030-01-01T00:00:00.000Z\tffffffffffff\tci\trevoked\tlocal:alice',
      'ci\ttab',
      'ci\u001b[31m',
      'ci\u007f',
      'ci\u0085',
    ]) {
      expect(await refusal('create', '--name', name)).toBe(
        '--name must not contain control characters (U+0000 to U+001F, U+007F to U+009F: line breaks, tabs, terminal escapes).',
      );
    }
    expect(await keys.list()).toEqual([]);
  });

  it('refuses a name with a bidirectional or line-separator character in one line (exit status 2), registering nothing', async () => {
    // A reversal would show another id than the one printed; a separator would break the line for some readers.
    for (const name of ['ci \u202effffffffffff', 'ci\u2066x\u2069', 'ci\u200f', 'ci\u2028revoked']) {
      expect(await refusal('create', '--name', name)).toBe(
        '--name must not contain bidirectional or line-separator characters (U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069, U+2028, U+2029).',
      );
    }
    expect(await keys.list()).toEqual([]);
  });

  it('takes a name of 1 to 128 characters, and refuses a longer or blank one', async () => {
    expect(await refusal('create', '--name', 'n'.repeat(129))).toBe('--name must be at most 128 characters.');
    expect(await refusal('create', '--name', '   ')).toBe('--name must not be blank.');
    const longest = '🐕'.repeat(128);
    expect((await createKey(longest)).record.name).toBe(longest);
    expect((await createKey('x')).record.name).toBe('x');
  });
});

describe('keys list', () => {
  it('prints a header and one line per key: id, name, scopes, created, expires, last used, state', async () => {
    const { record } = await createKey('ci');
    const dated = (await createKey('dated', '--expires-at', '2100-01-01')).record;
    const usedAt = new Date();
    await keys.recordUse(record, usedAt);

    expect(await run('list')).toBe(0);

    expect(lines).toEqual([
      LIST_HEADER,
      `${record.keyId}\tci\t${ALL_SCOPES_FIELD}\t${record.createdAt}\t-\t${usedAt.toISOString()}\tactive\tdefault`,
      `${dated.keyId}\tdated\t${ALL_SCOPES_FIELD}\t${dated.createdAt}\t2100-01-01T00:00:00.000Z\t-\tactive\tdefault`,
    ]);
  });

  it('shows each state: active, expired (also for an expiry the console wrote unreadable), revoked', async () => {
    const active = await keys.register(generateApiKey(), 'active', { usage: localUsageKey(), changedBy: ACTOR });
    const expired = await keys.register(generateApiKey(), 'expired', {
      usage: localUsageKey(),
      expiresAt: '2020-01-01T00:00:00.000Z',
      changedBy: ACTOR,
    });
    await putConsoleKey(tables.client, tables.apiKeys, { name: 'typo', extra: { expiresAt: { S: 'next tuesday' } } });
    const revoked = await keys.register(generateApiKey(), 'revoked', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.revoke(revoked.keyId, ACTOR);

    expect(await run('list')).toBe(0);

    const byName = Object.fromEntries(
      lines
        .slice(1)
        .map((line) => line.split('\t'))
        .map((cells) => [cells[1], [cells[4], cells[6]]]),
    );
    expect(byName).toEqual({
      active: ['-', 'active'],
      expired: ['2020-01-01T00:00:00.000Z', 'expired'],
      typo: ['next tuesday', 'expired'],
      revoked: ['-', 'revoked'],
    });
    expect(active.keyId).toMatch(/^[0-9a-f]{12}$/);
    expect(expired.keyId).toMatch(/^[0-9a-f]{12}$/);
  });

  it("shows each key's scopes: narrowed ones, and none for a key whose scopes were deleted by hand or are only unknown ones", async () => {
    expect(await run('create', '--name', 'reader', '--scopes', 'pets:read')).toBe(0);
    for (const [name, scopes] of [
      ['deleted', undefined],
      ['typo', [fixtureScope('admin')]],
    ] as const) {
      await putConsoleKey(tables.client, tables.apiKeys, { name, extra: scopes ? { scopes: { SS: [...scopes] } } : {} });
    }
    lines = [];

    expect(await run('list')).toBe(0);

    const scopesByName = Object.fromEntries(lines.slice(1).map((line) => [line.split('\t')[1], line.split('\t')[2]]));
    expect(scopesByName).toEqual({ reader: 'pets:read', deleted: '(none)', typo: '(none)' });

    lines = [];
    expect(await run('list', '--json')).toBe(0);
    expect(Object.fromEntries(parsedLines().map((key) => [key.name, key.scopes]))).toEqual({
      reader: ['pets:read'],
      deleted: [],
      typo: [],
    });
  });

  it('shows with --unused 90d only the active keys not used, or never used and not created, for 90 days', async () => {
    const now = Date.now();
    const ago = (days: number) => new Date(now - days * DAY);
    const usedLately = await keys.register(generateApiKey(), 'used lately', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.recordUse(usedLately, ago(89));
    const usedLongAgo = await keys.register(generateApiKey(), 'used long ago', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.recordUse(usedLongAgo, ago(91));
    await keys.register(generateApiKey(), 'new, never used', { usage: localUsageKey(), changedBy: ACTOR });
    const oldCreated = { S: ago(100).toISOString() };
    await putConsoleKey(tables.client, tables.apiKeys, { name: 'old, never used', extra: { createdAt: oldCreated } });
    await putConsoleKey(tables.client, tables.apiKeys, {
      name: 'old, revoked',
      extra: { createdAt: oldCreated, revokedAt: { S: ago(95).toISOString() } },
    });
    await putConsoleKey(tables.client, tables.apiKeys, {
      name: 'old, expired',
      extra: { createdAt: oldCreated, expiresAt: { S: ago(1).toISOString() } },
    });

    expect(await run('list', '--unused', '90d')).toBe(0);
    expect(lines[0]).toBe(LIST_HEADER);
    expect(lines.slice(1).map((line) => line.split('\t')[1])).toEqual(['old, never used', 'used long ago']);

    lines = [];
    expect(await run('list', '--unused', '90d', '--json')).toBe(0);
    expect(parsedLines().map((key) => key.name)).toEqual(['old, never used', 'used long ago']);

    lines = [];
    expect(await run('list', '--unused', '2160h')).toBe(0);
    expect(lines).toHaveLength(3);
  });

  it.each([['90'], ['90 days'], ['3mo'], ['']])('refuses --unused %j in one line naming --unused', async (duration) => {
    expect(await refusal('list', '--unused', duration)).toMatch(/^--unused takes a duration/);
  });

  it('prints one JSON object per key with --json, never a key', async () => {
    const { key, record } = await createKey('ci');
    await keys.revoke(record.keyId, ACTOR);
    const usedAt = new Date();
    await keys.recordUse(record, usedAt);

    expect(await run('list', '--json')).toBe(0);

    expect(parsedLines()).toEqual([
      {
        id: record.keyId,
        name: 'ci',
        scopes: ALL_SCOPES,
        createdAt: record.createdAt,
        expiresAt: null,
        revokedAt: expect.stringMatching(/^\d{4}-/),
        lastUsedAt: usedAt.toISOString(),
        plan: 'default',
      },
    ]);
    expect(lines.join('\n')).not.toContain(key);
  });

  it('never prints a key', async () => {
    const { key } = await createKey('ci');
    await run('list');
    expect(lines.join('\n')).not.toContain(key);
  });

  it('prints only the header when there are no keys', async () => {
    expect(await run('list')).toBe(0);
    expect(lines).toEqual([LIST_HEADER]);
  });
});

describe('keys show', () => {
  it('prints one key in full, every attribute but its hash, by the names the console shows', async () => {
    const { key, record } = await createKey('ci', '--scopes', 'pets:read');
    expect(await run('roll', record.keyId, '--grace', '1h')).toBe(0);
    const rolled = await recordOf(record.keyId);
    lines = [];

    expect(await run('show', record.keyId)).toBe(0);

    const shown = Object.fromEntries(lines.map((line) => /^(\S+)\s+(.*)$/.exec(line)?.slice(1) ?? []));
    expect(shown).toEqual({
      state: 'active',
      keyId: record.keyId,
      name: 'ci',
      scopes: 'pets:read',
      createdAt: record.createdAt,
      expiresAt: rolled.expiresAt,
      revokedAt: '-',
      lastUsedAt: '-',
      replaces: '-',
      replacedBy: rolled.replacedBy,
      changedBy: LOCAL_ACTOR,
      changedAt: rolled.changedAt,
      expiredAt: '-',
      plan: 'default',
      usageKeyId: rolled.usageKeyId,
    });
    expect(lines.join('\n')).not.toContain(record.keyHash);
    expect(lines.join('\n')).not.toContain(key);
  });

  it('prints every attribute as one JSON object with --json, absent ones as null, never the hash', async () => {
    const { record } = await createKey('ci');
    expect(await run('revoke', record.keyId)).toBe(0);
    const revoked = await recordOf(record.keyId);
    lines = [];

    expect(await run('show', record.keyId, '--json')).toBe(0);

    expect(parsedLines()).toEqual([
      {
        id: record.keyId,
        name: 'ci',
        scopes: ALL_SCOPES,
        createdAt: record.createdAt,
        expiresAt: null,
        revokedAt: revoked.revokedAt,
        lastUsedAt: null,
        plan: 'default',
        state: 'revoked',
        replaces: null,
        replacedBy: null,
        changedBy: LOCAL_ACTOR,
        changedAt: revoked.changedAt,
        expiredAt: null,
        usageKeyId: record.usageKeyId,
        regionUsageKeyIds: null,
      },
    ]);
    expect(lines[0]).not.toContain(record.keyHash);
  });

  it('refuses an id no key has in one line, exit status 2', async () => {
    await createKey('ci');
    expect(await refusal('show', 'ffffffffffff')).toBe('No key has the id ffffffffffff (npm run keys -- list shows them).');
  });
});

describe('keys roll', () => {
  it('makes a new key with the same name and scopes, printed once, and gives the old one 24 hours by default', async () => {
    const old = await createKey('partner', '--scopes', READ_ONLY_SCOPES.join(','));

    const { result: code, from, to } = await timed(() => run('roll', old.record.keyId));
    expect(code).toBe(0);

    const printedKeys = lines.filter((line) => line.includes('petstore_'));
    expect(printedKeys).toHaveLength(1);
    const newKey = printedKeys[0] ?? '';
    const next = await keys.findActive(newKey);
    const previous = await recordOf(old.record.keyId);
    expect(next).toMatchObject({
      name: 'partner',
      scopes: [...READ_ONLY_SCOPES],
      replaces: old.record.keyId,
      changedBy: LOCAL_ACTOR,
    });
    expect(next?.expiresAt).toBeUndefined();
    expect(previous).toMatchObject({ replacedBy: next?.keyId, changedBy: LOCAL_ACTOR });
    expectAfter(previous.expiresAt, DAY, from, to);
    expect(await keys.findActive(old.key)).toBeDefined();
    expect(lines).toEqual([
      `Rolled key ${old.record.keyId} to ${next?.keyId} (partner, scopes ${READ_ONLY_SCOPES.join(',')}) on plan ${DEFAULT_PLAN}. The new key is shown only this once:`,
      newKey,
      `The old key ${old.record.keyId} expires at ${previous.expiresAt}: both work until then.`,
    ]);
  });

  it('ends the old key at once with --grace 0, as for a leaked key', async () => {
    const old = await createKey('leaked');

    expect(await run('roll', old.record.keyId, '--grace', '0')).toBe(0);

    expect(await keys.findActive(old.key)).toBeUndefined();
    expect(await keys.findActive(lines[1] ?? '')).toBeDefined();
    const { expiresAt } = await recordOf(old.record.keyId);
    expect(lines.slice(2)).toEqual([
      `The old key ${old.record.keyId} expired at ${expiresAt}: callers still using it are refused.`,
      TAKES_EFFECT_LOCALLY,
    ]);
  });

  it('gives the old key the --grace asked for, and the new key the expiry asked for', async () => {
    const old = await createKey('partner');

    const { from, to } = await timed(() => run('roll', old.record.keyId, '--grace', '2h', '--expires-in', '30d'));

    expectAfter((await recordOf(old.record.keyId)).expiresAt, 2 * HOUR, from, to);
    expectAfter((await keys.findActive(lines[1] ?? ''))?.expiresAt, 30 * DAY, from, to);
    expect(lines[0]).toMatch(new RegExp(`\\(partner, scopes ${literally(ALL_SCOPES_FIELD)}, expires \\d{4}-`));
  });

  it('keeps an earlier expiry the console wrote with a time zone, and never lengthens one to the grace', async () => {
    const inZone = (at: number, zone: string, offsetMs: number) => new Date(at + offsetMs).toISOString().replace('Z', zone);
    const now = Date.now();
    // 3 hours from now, written as New York's wall time: its text sorts before the grace's end, its instant after.
    const later = inZone(now + 3 * HOUR, '-05:00', -5 * HOUR);
    const sooner = inZone(now + 30 * 60_000, '+02:00', 2 * HOUR);
    for (const [name, expiresAt] of [
      ['later', later],
      ['sooner', sooner],
    ] as const) {
      await putConsoleKey(tables.client, tables.apiKeys, {
        name,
        metered: true,
        extra: { scopes: { SS: ['pets:read'] }, expiresAt: { S: expiresAt } },
      });
    }
    const byName = async (name: string) => (await keys.list()).find((record) => record.name === name && record.replacedBy !== undefined);

    const { from, to } = await timed(async () => {
      for (const record of await keys.list()) expect(await run('roll', record.keyId, '--grace', '1h')).toBe(0);
    });

    expectAfter((await byName('later'))?.expiresAt, HOUR, from, to);
    expect((await byName('sooner'))?.expiresAt).toBe(sooner);
  });

  it('prints with --json the new key (its key included), then the old one with its new expiry', async () => {
    const old = await createKey('partner');

    expect(await run('roll', old.record.keyId, '--grace', '1h', '--expires-at', '2100-01-01', '--json')).toBe(0);

    const [next, previous] = parsedLines();
    const nextRecord = await keys.findActive(String(next?.key));
    const previousRecord = await recordOf(old.record.keyId);
    expect(lines).toHaveLength(2);
    expect(next).toEqual({
      id: nextRecord?.keyId,
      name: 'partner',
      scopes: ALL_SCOPES,
      createdAt: nextRecord?.createdAt,
      expiresAt: '2100-01-01T00:00:00.000Z',
      revokedAt: null,
      lastUsedAt: null,
      plan: 'default',
      key: next?.key,
    });
    expect(previous).toEqual({
      id: old.record.keyId,
      name: 'partner',
      scopes: ALL_SCOPES,
      createdAt: old.record.createdAt,
      expiresAt: previousRecord.expiresAt,
      revokedAt: null,
      lastUsedAt: null,
      plan: 'default',
    });
    expect(lines[1]).not.toContain(old.key);
  });

  it.each([
    ['revoked', async (keyId: string) => void (await keys.revoke(keyId, ACTOR)), 'is revoked: only an active key can be rolled.'],
    [
      'expired (rolled with --grace 0)',
      async (keyId: string) => void (await run('roll', keyId, '--grace', '0')),
      'is expired: only an active key can be rolled.',
    ],
    [
      'rolled already (and still in its grace)',
      async (keyId: string) => void (await run('roll', keyId)),
      `has been rolled already: roll its successor (npm run keys -- show <id> names it).`,
    ],
  ])('refuses to roll a key that is %s in one line, exit status 2, writing nothing', async (_, spoil, message) => {
    const { record } = await createKey('ci');
    await spoil(record.keyId);

    expect(await refusal('roll', record.keyId)).toBe(`Key ${record.keyId} ${message.replace('<id>', record.keyId)}`);
  });

  it('refuses an id no key has in one line, exit status 2, writing nothing', async () => {
    await createKey('ci');
    expect(await refusal('roll', 'ffffffffffff')).toBe('No key has the id ffffffffffff (npm run keys -- list shows them).');
  });

  it.each([['24'], ['1y'], ['-1h'], ['soon']])('refuses --grace %j in one line naming --grace, writing nothing', async (grace) => {
    const { record } = await createKey('ci');
    expect(await refusal('roll', record.keyId, `--grace=${grace}`)).toMatch(/^--grace takes a duration: a whole number and a unit/);
  });

  it('refuses a past expiry for the new key, writing nothing', async () => {
    const { record } = await createKey('ci');
    expect(await refusal('roll', record.keyId, '--expires-at', '2001-01-01')).toMatch(
      /^--expires-at 2001-01-01T00:00:00\.000Z is not in the future/,
    );
  });
});

/**
 * The DynamoDB commands `call` sends, through any client (the tool makes its own): each command's
 * name as IAM names the action, and whether it asked for a strongly consistent read.
 */
/** The document client's commands, by the action IAM names. */
const DOCUMENT_COMMANDS: Readonly<Record<string, string>> = { Get: 'GetItem', Update: 'UpdateItem', Put: 'PutItem' };

const dynamoDBCommandsOf = async (call: () => Promise<unknown>) => {
  const sent: Array<{ command: string; consistent: boolean }> = [];
  // Every SDK client's send is Smithy's Client's, which the DynamoDB clients extend.
  const smithyClient = Object.getPrototypeOf(DynamoDBClient.prototype) as { send: (...args: unknown[]) => unknown };
  const spy = vi.spyOn(smithyClient, 'send');
  try {
    await call();
    // Read before the spy is restored, which forgets its calls.
    for (const [index, args] of spy.mock.calls.entries()) {
      const command = args[0] as { constructor: { name: string }; input: { ConsistentRead?: boolean } };
      if ((spy.mock.contexts[index] as { config?: { serviceId?: string } }).config?.serviceId !== 'DynamoDB') continue;
      const name = command.constructor.name.replace(/Command$/, '');
      sent.push({ command: DOCUMENT_COMMANDS[name] ?? name, consistent: command.input.ConsistentRead === true });
    }
  } finally {
    spy.mockRestore();
  }
  return sent;
};

describe('keys revoke', () => {
  it('revoking --only-this-key a key a roll has just replaced names the successor, still active, having read it by its hash, strongly consistent, without a scan', async () => {
    const { record } = await createKey('ci', '--scopes', 'pets:read');
    expect(await run('roll', record.keyId, '--grace', '1h', '--json')).toBe(0);
    const successor = String(parsedLines()[0]?.id);
    lines = [];

    const sent = await dynamoDBCommandsOf(() => run('revoke', record.keyId, '--only-this-key'));

    expect(lines).toEqual([
      `Revoked key ${record.keyId}. Callers using it are refused.`,
      `Key ${successor}, of a roll of the same key (same name and scopes), stays active.`,
      TAKES_EFFECT_LOCALLY,
    ]);
    expect(sent.map(({ command }) => command)).not.toContain('Scan');
    // The revoked key, and its successor by its hash: no last use, which a revoke does not show.
    expect(sent.filter(({ command }) => command === 'GetItem')).toEqual([
      { command: 'GetItem', consistent: true },
      { command: 'GetItem', consistent: true },
    ]);
    const next = await recordOf(successor);
    expect(next).toMatchObject({ name: 'ci', scopes: ['pets:read'] });
    expect(next.revokedAt).toBeUndefined();
  });

  describe('of a key mid-roll: the whole roll chain, in one command', () => {
    /** A key rolled `rolls` times, each roll's old key working on for an hour: the chain's ids, oldest first, and the newest key. */
    const rolledChain = async (rolls: number) => {
      const { record } = await createKey('partner-app', '--scopes', READ_ONLY_SCOPES.join(','));
      const ids = [record.keyId];
      let newest = '';
      for (let roll = 0; roll < rolls; roll += 1) {
        expect(await run('roll', ids.at(-1) ?? '', '--grace', '1h', '--json')).toBe(0);
        const printed = parsedLines()[0];
        ids.push(String(printed?.id));
        newest = String(printed?.key);
        lines = [];
      }
      return { ids, newest };
    };

    it('revokes the new key and the old one it replaces, whichever is named, printing each key revoked', async () => {
      for (const named of ['new', 'old'] as const) {
        const { ids, newest } = await rolledChain(1);
        const [old = '', successor = ''] = ids;
        const [first, second] = named === 'new' ? [successor, old] : [old, successor];

        expect(await run('revoke', first)).toBe(0);

        expect(lines).toEqual([
          `Revoked key ${first}. Callers using it are refused.`,
          `Revoked key ${second}, of the same roll chain. Callers using it are refused.`,
          TAKES_EFFECT_LOCALLY,
        ]);
        expect(await keys.findActive(newest)).toBeUndefined();
        for (const keyId of ids) {
          // Each revoked by the caller, in one write: the same time on both; their one usage key deleted, and recorded on each.
          expect(await recordOf(keyId)).toMatchObject({
            revokedAt: (await recordOf(first)).revokedAt,
            changedBy: LOCAL_ACTOR,
            usageKeyDeletedAt: expect.any(String),
          });
        }
        lines = [];
      }
    });

    it('follows the chain both ways through every roll: three keys, the middle one named', async () => {
      const { ids } = await rolledChain(2);
      const [oldest = '', middle = '', newest = ''] = ids;

      expect(await run('revoke', middle, '--json')).toBe(0);

      expect(parsedLines().map(({ id, revokedAt }) => [id, typeof revokedAt])).toEqual([
        [middle, 'string'],
        [oldest, 'string'],
        [newest, 'string'],
      ]);
      for (const keyId of ids) expect(keyState(await recordOf(keyId), new Date())).toBe('revoked');
    });

    it('revokes the rest of the chain of a key revoked already, saying the named one was, and leaves an ended key as it is', async () => {
      const { ids } = await rolledChain(2);
      const [oldest = '', middle = '', newest = ''] = ids;
      expect(await run('revoke', oldest, '--only-this-key')).toBe(0);
      const { revokedAt } = await recordOf(oldest);
      // The middle key's grace over: it has ended, and is left so.
      await tables.client.send(
        new UpdateCommand({
          TableName: tables.apiKeys,
          Key: { keyHash: (await recordOf(middle)).keyHash },
          UpdateExpression: 'SET expiresAt = :past',
          ExpressionAttributeValues: { ':past': new Date(Date.now() - HOUR).toISOString() },
        }),
      );
      lines = [];

      expect(await run('revoke', oldest)).toBe(0);

      expect(lines).toEqual([
        `Key ${oldest} was already revoked at ${revokedAt}.`,
        `Revoked key ${newest}, of the same roll chain. Callers using it are refused.`,
        TAKES_EFFECT_LOCALLY,
      ]);
      expect((await recordOf(oldest)).revokedAt).toBe(revokedAt);
      expect(await recordOf(middle)).not.toHaveProperty('revokedAt');
      expect(keyState(await recordOf(newest), new Date())).toBe('revoked');
    });

    it('with --only-this-key revokes the key named alone: the other end of the roll keeps working', async () => {
      const { ids, newest } = await rolledChain(1);
      const [old = '', successor = ''] = ids;

      expect(await run('revoke', old, '--only-this-key')).toBe(0);

      expect(lines[0]).toBe(`Revoked key ${old}. Callers using it are refused.`);
      expect(await keys.findActive(newest)).toMatchObject({ keyId: successor });
    });
  });

  it('revokes a key by id, recording by whom: it stops working and the listing shows it revoked', async () => {
    const { key, record } = await createKey('ci');
    const other = await createKey('other');

    expect(await run('revoke', record.keyId)).toBe(0);
    expect(lines).toEqual([`Revoked key ${record.keyId}. Callers using it are refused.`, TAKES_EFFECT_LOCALLY]);

    expect(await keys.findActive(key)).toBeUndefined();
    expect(await keys.findActive(other.key)).toBeDefined();
    const revoked = await recordOf(record.keyId);
    // The revoke, then the deletion of its usage key, no live key using it: each by the same caller.
    expect(revoked).toMatchObject({ changedBy: LOCAL_ACTOR, changedAt: revoked.usageKeyDeletedAt });
    expect(String(revoked.revokedAt) <= String(revoked.usageKeyDeletedAt)).toBe(true);
    lines = [];
    await run('list');
    expect(lines).toContainEqual(`${record.keyId}\tci\t${ALL_SCOPES_FIELD}\t${record.createdAt}\t-\t-\trevoked\tdefault`);
    expect(lines).toContainEqual(`${other.record.keyId}\tother\t${ALL_SCOPES_FIELD}\t${other.record.createdAt}\t-\t-\tactive\tdefault`);
  });

  it('says so when the key was revoked already, keeping the first time', async () => {
    const { record } = await createKey('ci');
    await run('revoke', record.keyId);
    const { revokedAt } = await recordOf(record.keyId);
    lines = [];

    expect(await run('revoke', record.keyId)).toBe(0);

    expect(lines).toEqual([`Key ${record.keyId} was already revoked at ${revokedAt}.`, TAKES_EFFECT_LOCALLY]);
    expect((await recordOf(record.keyId)).revokedAt).toBe(revokedAt);
  });

  it('prints the revoked key as one JSON object with --json', async () => {
    const { record } = await createKey('ci');

    expect(await run('revoke', record.keyId, '--json')).toBe(0);

    const { revokedAt } = await recordOf(record.keyId);
    expect(parsedLines()).toEqual([
      {
        id: record.keyId,
        name: 'ci',
        scopes: ALL_SCOPES,
        createdAt: record.createdAt,
        expiresAt: null,
        revokedAt,
        lastUsedAt: null,
        plan: 'default',
      },
    ]);
  });

  it('refuses an id no key has in one line, exit status 2, revoking nothing', async () => {
    await createKey('ci');
    expect(await refusal('revoke', 'ffffffffffff')).toBe('No key has the id ffffffffffff (npm run keys -- list shows them).');
    expect((await keys.list()).every((record) => record.revokedAt === undefined)).toBe(true);
  });

  it.each(['revoke', 'show', 'roll'])('%s refuses without a key id', async (command) => {
    expect(await refusal(command)).toBe(`${command} needs a key id (see: npm run keys -- list).`);
  });

  it.each(['revoke', 'show', 'roll'])(
    '%s refuses a whole key in place of its id without printing it, and names the id to use',
    async (command) => {
      const { key, record } = await createKey('ci');
      const refused = await refusal(command, key);
      expect(refused).toContain('a key id, not the key itself');
      expect(refused).toContain(record.keyId);
      expect(refused).not.toContain(key);
      expect(lines.join('\n')).not.toContain(key);
      expect(await keys.findActive(key)).toBeDefined();
    },
  );
});

describe('keys and plans, locally', () => {
  /** A plans file as PLANS_FILE names it, with a `small` plan and no `partner`. */
  let plansFile: string;
  beforeEach(() => {
    const folder = mkdtempSync(join(tmpdir(), 'plans-'));
    plansFile = join(folder, 'plans.json');
    writeFileSync(
      plansFile,
      JSON.stringify({
        plans: { default: { rateLimit: 10, burstLimit: 20 }, small: { rateLimit: 1, burstLimit: 1, quota: { limit: 5, period: 'DAY' } } },
      }),
    );
    return () => rmSync(folder, { recursive: true, force: true });
  });
  const withPlansFile = (...argv: string[]) =>
    runKeysCommand(argv, {
      env: {
        DYNAMODB_ENDPOINT: tables.endpoint,
        API_KEYS_TABLE_NAME: tables.apiKeys,
        API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
        PLANS_FILE: plansFile,
      },
      print: (line) => lines.push(line),
    });

  it('puts a key created with --plan on that plan, with a random usage key of its own that is not the key', async () => {
    const { key, record } = await createKey('partner-app', '--plan', 'partner');

    expect(record).toMatchObject({ plan: 'partner', usageKeyId: expect.stringMatching(/^local-[0-9a-f]{12}$/) });
    expect(record.usageKey).toMatch(/^[0-9a-f]{40}$/);
    expect(key).not.toContain(record.usageKey);
    const other = await createKey('other', '--plan', 'partner');
    expect(other.record.usageKey).not.toBe(record.usageKey);
    expect(other.record.usageKeyId).not.toBe(record.usageKeyId);
  });

  it('says the plan when it creates a key, and puts a key created without --plan on default, with a usage key of its own', async () => {
    expect(await run('create', '--name', 'plain')).toBe(0);
    expect(lines[0]).toMatch(
      new RegExp(`^Created key [0-9a-f]{12} \\(plain, scopes ${literally(ALL_SCOPES_FIELD)}\\) on plan default\\. `),
    );
    const [record] = await keys.list();
    expect(record).toMatchObject({ plan: 'default', usageKeyId: expect.stringMatching(/^local-/), usageKey: expect.any(String) });

    lines = [];
    expect(await run('create', '--name', 'partner-app', '--plan', 'partner', '--json')).toBe(0);
    expect(parsedLines()[0]).toMatchObject({ name: 'partner-app', plan: 'partner' });
  });

  it("lists each key's plan, in the list's last column and --json's plan: none for an item whose plan was removed by hand", async () => {
    const partner = (await createKey('partner-app', '--plan', 'partner')).record;
    // The authorizer refuses such a key: nothing is assumed for a plan that is not there.
    await putConsoleKey(tables.client, tables.apiKeys, { name: 'no plan' });

    expect(await run('list')).toBe(0);
    expect(lines[0]).toBe(LIST_HEADER);
    expect(lines).toContainEqual(`${partner.keyId}\tpartner-app\t${ALL_SCOPES_FIELD}\t${partner.createdAt}\t-\t-\tactive\tpartner`);
    const planByName = (rows: string[]) => Object.fromEntries(rows.map((row) => row.split('\t')).map((cells) => [cells[1], cells[7]]));
    expect(planByName(lines.slice(1))).toEqual({ 'partner-app': 'partner', 'no plan': '-' });

    lines = [];
    expect(await run('list', '--json')).toBe(0);
    expect(Object.fromEntries(parsedLines().map((key) => [key.name, key.plan]))).toEqual({ 'partner-app': 'partner', 'no plan': null });
  });

  it('shows the plan and the usage key id, never its value nor its binding; none for an item without them', async () => {
    const { record } = await createKey('partner-app', '--plan', 'partner');
    await putConsoleKey(tables.client, tables.apiKeys, { name: 'no plan' });
    const bare = (await keys.list()).find((key) => key.name === 'no plan');

    expect(await run('show', record.keyId)).toBe(0);
    const shown = (printed: string[]) => Object.fromEntries(printed.map((line) => /^(\S+)\s+(.*)$/.exec(line)?.slice(1) ?? []));
    expect(shown(lines)).toMatchObject({ plan: 'partner', usageKeyId: record.usageKeyId });
    expect(lines.join('\n')).not.toContain(record.usageKey);
    expect(lines.join('\n')).not.toContain(record.usageKeyBinding);

    lines = [];
    expect(await run('show', bare?.keyId ?? '')).toBe(0);
    expect(shown(lines)).toMatchObject({ plan: '-', usageKeyId: '-' });

    lines = [];
    expect(await run('show', bare?.keyId ?? '', '--json')).toBe(0);
    expect(parsedLines()[0]).toMatchObject({ plan: null, usageKeyId: null });
  });

  it('checks --plan against PLANS_FILE when it is set', async () => {
    expect(await withPlansFile('create', '--name', 'tiny', '--plan', 'small')).toBe(0);
    expect((await keys.list())[0]).toMatchObject({ name: 'tiny', plan: 'small' });
    const before = await keys.list();

    await expect(withPlansFile('create', '--name', 'x', '--plan', 'partner')).rejects.toThrow(
      new UsageError("unknown plan 'partner': the plans in force are default, small."),
    );
    expect(await keys.list()).toEqual(before);
  });

  it('refuses a PLANS_FILE it cannot read in one line naming it, exit status 2, writing nothing', async () => {
    const missing = `${plansFile}.missing`;
    const error = await runKeysCommand(['create', '--name', 'x', '--plan', 'small'], {
      env: {
        DYNAMODB_ENDPOINT: tables.endpoint,
        API_KEYS_TABLE_NAME: tables.apiKeys,
        API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
        PLANS_FILE: missing,
      },
      print: () => undefined,
    }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(`PLANS_FILE: cannot read ${missing}.`);
    expect(await keys.list()).toEqual([]);
  });

  it.each([
    ['a plan no one defined', 'gold', "unknown plan 'gold': the plans in force are default, partner."],
    [
      'a name no plan can have',
      'Gold Plan!',
      'a plan name is 1-32 lower-case letters, digits or hyphens: the plans in force are default, partner.',
    ],
  ])('refuses --plan naming %s in one line, exit status 2, writing nothing', async (_, plan, message) => {
    expect(await refusal('create', '--name', 'x', '--plan', plan)).toBe(message);
    expect(await keys.list()).toEqual([]);
  });

  it('keeps the plan and the usage key on a roll, so that the quota already used carries over', async () => {
    const old = await createKey('partner-app', '--plan', 'partner');

    expect(await run('roll', old.record.keyId)).toBe(0);

    expect(lines[0]).toMatch(new RegExp(`\\(partner-app, scopes ${literally(ALL_SCOPES_FIELD)}\\) on plan partner\\. `));
    const next = await keys.findActive(lines[1] ?? '');
    expect(next).toMatchObject({ plan: 'partner', usageKeyId: old.record.usageKeyId, usageKey: old.record.usageKey });
  });
});

describe('keys set-plan, locally', () => {
  it('moves a key to another plan, keeping its usage key, recording who, and says so', async () => {
    const { record } = await createKey('app');

    expect(await run('set-plan', record.keyId, 'partner')).toBe(0);

    expect(lines).toEqual([`Moved key ${record.keyId} from plan default to plan partner.`, TAKES_EFFECT_LOCALLY]);
    const moved = await recordOf(record.keyId);
    expect(moved).toMatchObject({ plan: 'partner', usageKeyId: record.usageKeyId, usageKey: record.usageKey, changedBy: LOCAL_ACTOR });
    expect(moved.changedAt).not.toBe(record.changedAt);
  });

  it('prints the moved key as one JSON object with --json', async () => {
    const { record } = await createKey('app', '--plan', 'partner');

    expect(await run('set-plan', record.keyId, 'default', '--json')).toBe(0);

    expect(parsedLines()).toEqual([
      {
        id: record.keyId,
        name: 'app',
        scopes: ALL_SCOPES,
        createdAt: record.createdAt,
        expiresAt: null,
        revokedAt: null,
        lastUsedAt: null,
        plan: 'default',
      },
    ]);
  });

  it.each([
    ['no usage key of its own', 'REMOVE usageKey', {}, 'names no usage key of its own'],
    ["another key's usage key", 'SET usageKey = :other', { ':other': 'f'.repeat(40) }, 'holds a usage key that was not written for it'],
    ['no plan', 'REMOVE #plan', {}, 'names no plan'],
  ])(
    'refuses to set the plan, or roll, a key whose item has %s (changed by hand) in one line, exit status 2, writing nothing',
    async (_, expression, values, what) => {
      const { record } = await createKey('app');
      await tables.client.send(
        new UpdateCommand({
          TableName: tables.apiKeys,
          Key: { keyHash: record.keyHash },
          UpdateExpression: expression,
          ...(expression.includes('#plan') ? { ExpressionAttributeNames: { '#plan': 'plan' } } : {}),
          ...(Object.keys(values).length > 0 ? { ExpressionAttributeValues: values } : {}),
        }),
      );
      const before = await keys.list();

      for (const [command, ...rest] of [
        ['set-plan', record.keyId, 'partner'],
        ['roll', record.keyId],
      ]) {
        const verb = command === 'roll' ? 'be rolled' : 'be put on another plan';
        expect(await refusal(command ?? '', ...rest)).toBe(
          `Key ${record.keyId} ${what} (its item was changed by hand), so the authorizer refuses it and it cannot ${verb}: revoke it and create a new key.`,
        );
      }
      expect(await keys.list()).toEqual(before);
    },
  );

  it('leaves a key on the plan it is on already as it is', async () => {
    const { record } = await createKey('app', '--plan', 'partner');

    expect(await run('set-plan', record.keyId, 'partner')).toBe(0);

    expect(lines).toEqual([`Key ${record.keyId} is on plan partner already.`]);
    expect(await recordOf(record.keyId)).toEqual(record);
  });

  it('moves the other end of a roll in its grace along, as both share one usage key', async () => {
    const old = await createKey('app');
    expect(await run('roll', old.record.keyId, '--grace', '1h')).toBe(0);
    const next = await keys.findActive(lines[1] ?? '');
    lines = [];

    expect(await run('set-plan', next?.keyId ?? '', 'partner')).toBe(0);

    expect(lines[0]).toContain(`Key ${old.record.keyId}, which shares its usage key, moved with it.`);
    expect((await recordOf(old.record.keyId)).plan).toBe('partner');
    expect((await recordOf(next?.keyId ?? '')).plan).toBe('partner');
  });

  it.each([
    [
      'revoked',
      async (keyId: string) => void (await keys.revoke(keyId, ACTOR)),
      'is revoked: only an active key can be put on another plan.',
    ],
    [
      'expired',
      async (keyId: string) => void (await run('roll', keyId, '--grace', '0')),
      'is expired: only an active key can be put on another plan.',
    ],
    [
      'rolled (its successor shares its usage key)',
      async (keyId: string) => void (await run('roll', keyId, '--grace', '1h')),
      'has been rolled to <next>, which shares its usage key: set the plan of <next>.',
    ],
  ])('refuses to move a key that is %s in one line, exit status 2, writing nothing', async (_, spoil, message) => {
    const { record } = await createKey('app');
    await spoil(record.keyId);
    const next = (await keys.list()).find((other) => other.replaces === record.keyId);

    expect(await refusal('set-plan', record.keyId, 'partner')).toBe(
      `Key ${record.keyId} ${message.replaceAll('<next>', next?.keyId ?? '')}`,
    );
  });

  it.each([
    [['set-plan', 'ffffffffffff', 'partner'], 'No key has the id ffffffffffff (npm run keys -- list shows them).'],
    [['set-plan', '<id>', 'gold'], "unknown plan 'gold': the plans in force are default, partner."],
    [['set-plan', '<id>'], 'set-plan needs a plan after the key id (see npm run keys -- --help).'],
    [['set-plan'], 'set-plan needs a key id (see: npm run keys -- list).'],
    [
      ['set-plan', '<id>', OTHER_PLAN, DEFAULT_PLAN],
      'set-plan takes a key id and a plan besides its options (see npm run keys -- --help).',
    ],
    [['set-plan', '<id>', 'partner', '--scopes', 'pets:read'], 'set-plan does not take --scopes: its options are --json'],
    [['roll', '<id>', '--plan', 'partner'], 'roll does not take --plan'],
  ])('refuses %j in one line, exit status 2, writing nothing', async (argv, message) => {
    const { record } = await createKey('app');
    const refused = await refusal(...argv.map((arg) => arg.replace('<id>', record.keyId)));
    expect(refused.startsWith(message), refused).toBe(true);
  });

  it('refuses a whole key in place of its id without printing it', async () => {
    const { key, record } = await createKey('app');
    const refused = await refusal('set-plan', key, 'partner');
    expect(refused).toContain(`a key id, not the key itself`);
    expect(refused).toContain(record.keyId);
    expect(refused).not.toContain(key);
  });

  it('names an unknown plan in one line and exits 2, as npm run keys', async () => {
    const { record } = await createKey('app');
    const result = await npmRun('keys', ['set-plan', record.keyId, 'gold'], {
      DYNAMODB_ENDPOINT: tables.endpoint,
      API_KEYS_TABLE_NAME: tables.apiKeys,
      API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
    });
    expect(expectOneLineFailure(result, { status: 2 })).toBe("npm run keys: unknown plan 'gold': the plans in force are default, partner.");
    expect(await recordOf(record.keyId)).toEqual(record);
  });
});

describe('the caller on AWS, from AWS STS (mocked with aws-sdk-client-mock)', () => {
  const ARN = 'arn:aws:sts::123456789012:assumed-role/KeyAdmin/alice';
  let sts: STSClient;
  const mockSts = (client: STSClient) => mockClient(client);
  let stsMock: ReturnType<typeof mockSts>;

  beforeEach(() => {
    // "AWS" is the run's DynamoDB Local, through the SDK's own endpoint setting: --table without
    // --endpoint is the AWS path of the tool, with its default credential and endpoint chains.
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', tables.endpoint);
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    sts = new STSClient({ region: 'eu-west-1' });
    stsMock = mockSts(sts);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    stsMock.restore();
  });

  const onAws = (...argv: string[]) =>
    runKeysCommand([...argv, '--table', tables.apiKeys], {
      env: { API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse },
      print: (line) => lines.push(line),
      sts,
    });

  it('records the ARN of the caller on roll and revoke (and on create, on a stage: below)', async () => {
    stsMock.on(GetCallerIdentityCommand).resolves({ Arn: ARN, Account: '123456789012', UserId: 'AROAEXAMPLE:alice' });
    const { record: created } = await createKey('partner');

    expect(await onAws('roll', created.keyId, '--grace', '1h')).toBe(0);
    const rolled = await keys.list();
    expect(rolled.map((record) => record.changedBy)).toEqual([ARN, ARN]);

    const next = rolled.find((record) => record.replaces === created.keyId);
    expect(await onAws('revoke', next?.keyId ?? '')).toBe(0);
    expect((await recordOf(next?.keyId ?? '')).changedBy).toBe(ARN);
    expect(stsMock.commandCalls(GetCallerIdentityCommand)).toHaveLength(2);
  });

  it('records the ARN on a stage, whose table the stack names', async () => {
    stsMock.on(GetCallerIdentityCommand).resolves({ Arn: ARN });
    const outputs = [
      { OutputKey: 'ApiKeysTableName', OutputValue: tables.apiKeys },
      { OutputKey: 'ApiKeyLastUseTableName', OutputValue: tables.apiKeyLastUse },
      { OutputKey: 'UsagePlanIds', OutputValue: '{"default":"up-default"}' },
    ];
    const cloudFormation = { send: async () => ({ Stacks: [{ Outputs: outputs }] }) } as unknown as Parameters<typeof stageKeysTable>[1];
    const apiGateway = new APIGatewayClient({ region: 'eu-west-1' });
    mockClient(apiGateway).on(CreateApiKeyCommand).resolves({ id: 'ak-staged' });

    const code = await runKeysCommand(['create', '--name', 'staged', '--stage', 'staging'], {
      env: {},
      print: () => undefined,
      sts,
      cloudFormation,
      apiGateway,
    });

    expect(code).toBe(0);
    expect((await keys.list()).map((record) => [record.name, record.changedBy])).toEqual([['staged', ARN]]);
  });

  it('asks STS nothing for a listing', async () => {
    expect(await onAws('list')).toBe(0);
    expect(stsMock.commandCalls(GetCallerIdentityCommand)).toHaveLength(0);
  });

  it.each([
    [
      'refuses the credentials',
      () =>
        stsMock.on(GetCallerIdentityCommand).rejects(
          Object.assign(new Error('The security token included in the request is invalid. AKIDEXAMPLE'), {
            name: 'InvalidClientTokenId',
          }),
        ),
      'InvalidClientTokenId',
    ],
    ['answers without an ARN', () => stsMock.on(GetCallerIdentityCommand).resolves({}), 'no ARN in its answer'],
  ])('says in one line to check the credentials, and writes nothing, when STS %s', async (_, answer, reason) => {
    answer();
    const { record } = await createKey('ci');

    for (const argv of [
      ['roll', record.keyId],
      ['revoke', record.keyId],
    ]) {
      const error = await onAws(...argv).then(
        () => undefined,
        (thrown: unknown) => thrown as Error,
      );
      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(UsageError);
      expect(error?.message).toBe(`AWS STS could not say who you are (${reason}), so nothing was changed: check your AWS credentials.`);
      expect(error?.message).not.toContain('AKIDEXAMPLE');
    }
    expect(await keys.list()).toEqual([record]);
  });
});

describe('plans on a stage: the API Gateway calls (mocked with aws-sdk-client-mock)', () => {
  const ARN = 'arn:aws:sts::123456789012:assumed-role/KeyAdmin/alice';
  const USAGE_PLAN_IDS = { default: 'up-default', partner: 'up-partner' };
  const REST_API_ID = 'a1b2c3d4e5';
  /** The stack's outputs the tool reads; a test may take one away. */
  let outputs: () => Array<{ OutputKey: string; OutputValue: string }>;
  const mocks = () => {
    const sts = new STSClient({ region: 'eu-west-1' });
    const cloudFormation = new CloudFormationClient({ region: 'eu-west-1' });
    const apiGateway = new APIGatewayClient({ region: 'eu-west-1' });
    return {
      sts,
      cloudFormation,
      apiGateway,
      stsMock: mockClient(sts),
      cloudFormationMock: mockClient(cloudFormation),
      apiGatewayMock: mockClient(apiGateway),
    };
  };
  let aws: ReturnType<typeof mocks>;
  /** The table the stack's output names: the test's own, or one that does not exist. */
  let stackTable: string;

  beforeEach(() => {
    // "AWS" is the run's DynamoDB Local, through the SDK's own endpoint setting (as above).
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', tables.endpoint);
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    aws = mocks();
    stackTable = tables.apiKeys;
    aws.stsMock.on(GetCallerIdentityCommand).resolves({ Arn: ARN });
    outputs = () => [
      { OutputKey: 'ApiKeysTableName', OutputValue: stackTable },
      { OutputKey: 'ApiKeyLastUseTableName', OutputValue: tables.apiKeyLastUse },
      { OutputKey: 'UsagePlanIds', OutputValue: JSON.stringify(USAGE_PLAN_IDS) },
      { OutputKey: 'RestApiId', OutputValue: REST_API_ID },
    ];
    aws.cloudFormationMock.on(DescribeStacksCommand).callsFake(async () => ({
      Stacks: [{ StackName: 'PetStore-staging', CreationTime: new Date(), StackStatus: 'UPDATE_COMPLETE', Outputs: outputs() }],
    }));
    let made = 0;
    aws.apiGatewayMock.on(CreateApiKeyCommand).callsFake(async () => ({ id: `ak-${(made += 1)}`, enabled: true }));
    aws.apiGatewayMock.on(CreateUsagePlanKeyCommand).resolves({});
    aws.apiGatewayMock.on(DeleteUsagePlanKeyCommand).resolves({});
    aws.apiGatewayMock.on(UpdateApiKeyCommand).resolves({});
    aws.apiGatewayMock.on(DeleteApiKeyCommand).resolves({});
    aws.apiGatewayMock.on(FlushStageAuthorizersCacheCommand).resolves({});
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    aws.stsMock.restore();
    aws.cloudFormationMock.restore();
    aws.apiGatewayMock.restore();
  });

  const onStage = (...argv: string[]) =>
    runKeysCommand([...argv, '--stage', 'staging'], {
      env: {},
      print: (line) => lines.push(line),
      sts: aws.sts,
      cloudFormation: aws.cloudFormation,
      apiGateway: aws.apiGateway,
    });
  const onTable = (...argv: string[]) =>
    runKeysCommand([...argv, '--table', tables.apiKeys], {
      env: { API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse },
      print: (line) => lines.push(line),
      sts: aws.sts,
      apiGateway: aws.apiGateway,
    });
  const calls = (command: Parameters<typeof aws.apiGatewayMock.commandCalls>[0]) =>
    aws.apiGatewayMock.commandCalls(command).map((call) => call.args[0].input);
  const apiGatewayCalls = () => aws.apiGatewayMock.calls().map((call) => call.args[0].constructor.name);
  const createdOnStage = async (...options: string[]) => {
    expect(await onStage('create', '--name', 'app', '--json', ...options)).toBe(0);
    const printed = parsedLines().at(-1);
    lines = [];
    return { key: String(printed?.key), record: await recordOf(String(printed?.id)) };
  };
  const stageRefusal = async (...argv: string[]) => {
    const before = await keys.list();
    const error = await onStage(...argv).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(UsageError);
    expect(await keys.list()).toEqual(before);
    return (error as Error).message;
  };

  it('create --plan calls CreateApiKey (a random value, not the key) and CreateUsagePlanKey into the plan the stack names', async () => {
    const { key, record } = await createdOnStage('--plan', 'partner');

    const [created] = calls(CreateApiKeyCommand);
    expect(calls(CreateApiKeyCommand)).toHaveLength(1);
    expect(created).toMatchObject({
      name: `pet-store-staging-${record.keyId}`,
      enabled: true,
      value: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(key).not.toContain(created?.value);
    expect(calls(CreateUsagePlanKeyCommand)).toEqual([{ usagePlanId: 'up-partner', keyId: 'ak-1', keyType: 'API_KEY' }]);
    expect(record).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', usageKey: created?.value, changedBy: ARN });
    expect(aws.cloudFormationMock.commandCalls(DescribeStacksCommand)).toHaveLength(1);
  });

  it('create without --plan puts the API key in the default usage plan', async () => {
    const { record } = await createdOnStage();
    expect(calls(CreateUsagePlanKeyCommand)).toEqual([{ usagePlanId: 'up-default', keyId: 'ak-1', keyType: 'API_KEY' }]);
    expect(record).toMatchObject({ plan: 'default', usageKeyId: 'ak-1' });
  });

  it.each(['gold', 'constructor'])(
    "refuses a plan the stage's stack does not name (%s), in one line, calling API Gateway for nothing",
    async (plan) => {
      expect(await stageRefusal('create', '--name', 'x', '--plan', plan)).toBe(
        `unknown plan '${plan}': the plans of stage staging are default, partner.`,
      );
      expect(apiGatewayCalls()).toEqual([]);
    },
  );

  it('deletes the new API key when the keys table cannot be written, and writes nothing', async () => {
    stackTable = `missing-${tables.apiKeys}`;
    const error = await onStage('create', '--name', 'x', '--plan', 'partner').catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Error);
    expect(apiGatewayCalls()).toEqual(['CreateApiKeyCommand', 'CreateUsagePlanKeyCommand', 'DeleteApiKeyCommand']);
    expect(calls(DeleteApiKeyCommand)).toEqual([{ apiKey: 'ak-1' }]);
    expect(await keys.list()).toEqual([]);
  });

  it('deletes the new API key when the usage plan refuses it, in one line, and writes nothing', async () => {
    aws.apiGatewayMock
      .on(CreateUsagePlanKeyCommand)
      .rejects(Object.assign(new Error('Invalid usage plan ID specified'), { name: 'NotFoundException' }));
    await expect(onStage('create', '--name', 'x', '--plan', 'partner')).rejects.toThrow(
      'API Gateway refused to put the new API key in plan partner (NotFoundException).',
    );
    expect(calls(DeleteApiKeyCommand)).toEqual([{ apiKey: 'ak-1' }]);
    expect(await keys.list()).toEqual([]);
  });

  it('set-plan moves the API key: DeleteUsagePlanKey from the old usage plan, then CreateUsagePlanKey into the new one', async () => {
    const { record } = await createdOnStage();
    aws.apiGatewayMock.resetHistory();

    expect(await onStage('set-plan', record.keyId, 'partner')).toBe(0);

    expect(apiGatewayCalls()).toEqual(['DeleteUsagePlanKeyCommand', 'CreateUsagePlanKeyCommand', 'FlushStageAuthorizersCacheCommand']);
    expect(calls(DeleteUsagePlanKeyCommand)).toEqual([{ usagePlanId: 'up-default', keyId: 'ak-1' }]);
    expect(calls(CreateUsagePlanKeyCommand)).toEqual([{ usagePlanId: 'up-partner', keyId: 'ak-1', keyType: 'API_KEY' }]);
    expect(await recordOf(record.keyId)).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', changedBy: ARN });
  });

  it('set-plan puts the API key back in its plan, and leaves the record, when the new plan refuses it', async () => {
    const { record } = await createdOnStage();
    aws.apiGatewayMock.resetHistory();
    aws.apiGatewayMock
      .on(CreateUsagePlanKeyCommand, { usagePlanId: 'up-partner' })
      .rejects(Object.assign(new Error('Too many requests'), { name: 'TooManyRequestsException' }));

    await expect(onStage('set-plan', record.keyId, 'partner')).rejects.toThrow(
      'API Gateway refused to put the API key ak-1 in plan partner (TooManyRequestsException).',
    );
    expect(calls(CreateUsagePlanKeyCommand).map((input) => input.usagePlanId)).toEqual(['up-partner', 'up-default']);
    expect(await recordOf(record.keyId)).toEqual(record);
  });

  it('quotes a usage key id written in the console escaped, in a refusal of API Gateway and in the line of its deletion', async () => {
    const { record } = await createdOnStage();
    const forgedId = 'ak-1\n\tak-2\u001b[2K\u0085\u202e';
    // Rebound to it as the key tool would bind it: the authorizer and the tool take it as the key's own.
    await tables.client.send(
      new UpdateCommand({
        TableName: tables.apiKeys,
        Key: { keyHash: record.keyHash },
        UpdateExpression: 'SET usageKeyId = :id, usageKeyBinding = :binding',
        ExpressionAttributeValues: {
          ':id': forgedId,
          ':binding': usageKeyBinding(record.keyHash, forgedId, String(record.usageKey)),
        },
      }),
    );
    aws.apiGatewayMock
      .on(CreateUsagePlanKeyCommand, { usagePlanId: 'up-partner' })
      .rejects(Object.assign(new Error('Too many requests'), { name: 'TooManyRequestsException' }));
    const shown = 'ak-1\\n\\tak-2\\x1b[2K\\u0085\\u202e';

    const error = await onStage('set-plan', record.keyId, 'partner').catch((thrown: unknown) => thrown);
    expect((error as Error).message).toBe(`API Gateway refused to put the API key ${shown} in plan partner (TooManyRequestsException).`);

    expect(await onStage('revoke', record.keyId)).toBe(0);
    expect(lines).toContain(`Its API Gateway API key ${shown} is deleted.`);
    expect(lines.join('\n')).not.toMatch(/[\t\u001b\u0085\u202e]/);
    expect(lines.every((line) => !line.includes('\n'))).toBe(true);
  });

  it('set-plan brings the keys table in line with a move made in the console (the API key in the new plan already)', async () => {
    const { record } = await createdOnStage();
    aws.apiGatewayMock
      .on(DeleteUsagePlanKeyCommand)
      .rejects(Object.assign(new Error('Invalid API Key identifier'), { name: 'NotFoundException' }));
    aws.apiGatewayMock
      .on(CreateUsagePlanKeyCommand, { usagePlanId: 'up-partner' })
      .rejects(Object.assign(new Error('already associated'), { name: 'ConflictException' }));

    expect(await onStage('set-plan', record.keyId, 'partner')).toBe(0);

    expect(await recordOf(record.keyId)).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1' });
  });

  it('set-plan makes no API key for a key without one (changed by hand): it refuses it in one line, calling nothing', async () => {
    await putConsoleKey(tables.client, tables.apiKeys, { name: 'no usage key' });
    const [bare] = await keys.list();
    const keyId = bare?.keyId ?? '';

    const error = await onStage('set-plan', keyId, 'partner').catch((thrown: unknown) => thrown);

    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(new RegExp(`^Key ${keyId} names no usage key of its own `));
    expect(apiGatewayCalls()).toEqual([]);
    expect(await keys.list()).toEqual([bare]);
  });

  it('revoke deletes the API key with DeleteApiKey, records it on the key, and says so', async () => {
    const { record } = await createdOnStage();

    expect(await onStage('revoke', record.keyId)).toBe(0);

    expect(calls(DeleteApiKeyCommand)).toEqual([{ apiKey: 'ak-1' }]);
    expect(calls(UpdateApiKeyCommand)).toEqual([]);
    expect(lines).toContain('Its API Gateway API key ak-1 is deleted.');
    expect(await recordOf(record.keyId)).toMatchObject({ usageKeyId: 'ak-1', usageKeyDeletedAt: expect.any(String), changedBy: ARN });
  });

  it('revoke --only-this-key keeps the API key while a rolled successor shares it, and deletes it with the last key', async () => {
    const { record } = await createdOnStage('--plan', 'partner');
    expect(await onStage('roll', record.keyId, '--grace', '1h', '--json')).toBe(0);
    const successor = String(parsedLines()[0]?.id);
    lines = [];

    expect(await onStage('revoke', record.keyId, '--only-this-key')).toBe(0);
    expect(calls(DeleteApiKeyCommand)).toEqual([]);
    expect(lines).toContain(`Its API Gateway API key ak-1 stays: key ${successor} shares it.`);

    expect(await onStage('revoke', successor, '--only-this-key')).toBe(0);
    expect(calls(DeleteApiKeyCommand)).toEqual([{ apiKey: 'ak-1' }]);
  });

  it('revoke of a key mid-roll revokes both ends, deletes their API key once and flushes the stage once', async () => {
    const { record } = await createdOnStage('--plan', 'partner');
    expect(await onStage('roll', record.keyId, '--grace', '1h', '--json')).toBe(0);
    const successor = String(parsedLines()[0]?.id);
    lines = [];
    aws.apiGatewayMock.resetHistory();

    expect(await onStage('revoke', successor)).toBe(0);

    expect(apiGatewayCalls()).toEqual(['DeleteApiKeyCommand', 'FlushStageAuthorizersCacheCommand']);
    expect(calls(DeleteApiKeyCommand)).toEqual([{ apiKey: 'ak-1' }]);
    expect(lines.slice(0, 3)).toEqual([
      `Revoked key ${successor}. Callers using it are refused.`,
      `Revoked key ${record.keyId}, of the same roll chain. Callers using it are refused.`,
      'Its API Gateway API key ak-1 is deleted.',
    ]);
    for (const keyId of [record.keyId, successor]) {
      expect(await recordOf(keyId)).toMatchObject({ revokedAt: expect.any(String), usageKeyDeletedAt: expect.any(String), changedBy: ARN });
    }
  });

  it('revoke of a roll chain says a refused deletion of their API key, once, even when the next key of the chain deletes it', async () => {
    const { record } = await createdOnStage('--plan', 'partner');
    expect(await onStage('roll', record.keyId, '--grace', '1h', '--json')).toBe(0);
    const successor = String(parsedLines()[0]?.id);
    lines = [];
    // The first key's deletion refused; the second key's, a moment later, taken.
    aws.apiGatewayMock
      .on(DeleteApiKeyCommand)
      .rejectsOnce(Object.assign(new Error('Too Many Requests'), { name: 'TooManyRequestsException' }))
      .resolves({});

    expect(await onStage('revoke', successor)).toBe(0);

    expect(lines.slice(0, 3)).toEqual([
      `Revoked key ${successor}. Callers using it are refused.`,
      `Revoked key ${record.keyId}, of the same roll chain. Callers using it are refused.`,
      'API Gateway refused to delete the API key ak-1 (TooManyRequestsException): the expiry sweep deletes it within a minute.',
    ]);
    expect(lines.filter((line) => line.includes('ak-1'))).toHaveLength(1);
    // The key whose release failed stays for the sweep.
    expect((await keys.usageKeysToRelease()).map((pending) => pending.keyId)).toEqual([successor]);
  });

  it('revoke whose DeleteApiKey API Gateway refuses still revokes, says the sweep deletes it, and leaves it for the sweep', async () => {
    aws.apiGatewayMock.on(DeleteApiKeyCommand).rejects(Object.assign(new Error('Too Many Requests'), { name: 'TooManyRequestsException' }));
    const { key, record } = await createdOnStage();

    expect(await onStage('revoke', record.keyId)).toBe(0);

    expect(await keys.findActive(key)).toBeUndefined();
    expect(lines).toContain(
      'API Gateway refused to delete the API key ak-1 (TooManyRequestsException): the expiry sweep deletes it within a minute.',
    );
    expect((await keys.usageKeysToRelease()).map((pending) => pending.keyId)).toEqual([record.keyId]);
    expect((await recordOf(record.keyId)).usageKeyDeletedAt).toBeUndefined();
  });

  it('revoke --only-this-key right after a roll finds the successor by its hash, strongly consistent, without a scan, and leaves its API key enabled', async () => {
    const { record } = await createdOnStage('--plan', 'partner');
    expect(await onStage('roll', record.keyId, '--grace', '1h', '--json')).toBe(0);
    const successor = String(parsedLines()[0]?.id);
    lines = [];

    const sent = await dynamoDBCommandsOf(() => onStage('revoke', record.keyId, '--only-this-key'));

    expect(calls(DeleteApiKeyCommand)).toEqual([]);
    expect(lines).toContain(`Its API Gateway API key ak-1 stays: key ${successor} shares it.`);
    expect(sent.map(({ command }) => command)).not.toContain('Scan');
    expect(sent.filter(({ command }) => command === 'GetItem').every(({ consistent }) => consistent)).toBe(true);
  });

  it('roll creates no new API key: the successor keeps the plan and the API key, so the quota used carries over', async () => {
    const { record } = await createdOnStage('--plan', 'partner');
    aws.apiGatewayMock.resetHistory();

    expect(await onStage('roll', record.keyId, '--json')).toBe(0);

    expect(apiGatewayCalls()).toEqual([]);
    expect(await recordOf(String(parsedLines()[0]?.id))).toMatchObject({ plan: 'partner', usageKeyId: 'ak-1', usageKey: record.usageKey });
  });

  it('says in one line when the stack has no UsagePlanIds output, writing nothing', async () => {
    aws.cloudFormationMock.on(DescribeStacksCommand).resolves({
      Stacks: [
        {
          StackName: 'PetStore-staging',
          CreationTime: new Date(),
          StackStatus: 'UPDATE_COMPLETE',
          Outputs: [
            { OutputKey: 'ApiKeysTableName', OutputValue: tables.apiKeys },
            { OutputKey: 'ApiKeyLastUseTableName', OutputValue: tables.apiKeyLastUse },
          ],
        },
      ],
    });
    await expect(onStage('create', '--name', 'x')).rejects.toThrow(
      'Stack PetStore-staging has no readable UsagePlanIds output: deploy it with this version (npx cdk deploy -c stage=staging).',
    );
    expect(apiGatewayCalls()).toEqual([]);
    expect(await keys.list()).toEqual([]);
  });

  it('needs --stage for plans: --table alone refuses create, with or without --plan, and set-plan in one line, writing nothing', async () => {
    const { record } = await createKey('app');
    for (const argv of [
      ['create', '--name', 'x'],
      ['create', '--name', 'x', '--plan', 'partner'],
      ['set-plan', record.keyId, 'partner'],
    ]) {
      const error = await onTable(...argv).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toBe(
        "plans on AWS are the stage's usage plans: give --stage STAGE rather than --table (see npm run keys -- --help).",
      );
    }
    expect(await keys.list()).toEqual([record]);
    expect(apiGatewayCalls()).toEqual([]);
  });

  describe("a change that narrows a key's access takes effect at once: the stage's authorizer cache is flushed", () => {
    const FLUSHED = `Flushed the authorizer cache of stage staging (REST API ${REST_API_ID}, stage v1): the change takes effect from the next request.`;
    const flushes = () => calls(FlushStageAuthorizersCacheCommand);

    it('revoke: FlushStageAuthorizersCache on the stack’s REST API and stage v1, after the key is revoked and its API key deleted', async () => {
      const { key, record } = await createdOnStage();
      aws.apiGatewayMock.resetHistory();

      expect(await onStage('revoke', record.keyId)).toBe(0);

      expect(apiGatewayCalls()).toEqual(['DeleteApiKeyCommand', 'FlushStageAuthorizersCacheCommand']);
      expect(flushes()).toEqual([{ restApiId: REST_API_ID, stageName: 'v1' }]);
      expect(await keys.findActive(key)).toBeUndefined();
      expect(lines).toEqual([
        `Revoked key ${record.keyId}. Callers using it are refused.`,
        'Its API Gateway API key ak-1 is deleted.',
        FLUSHED,
      ]);
    });

    it('revoke run again flushes again, in case the first flush could not be made', async () => {
      const { record } = await createdOnStage();
      expect(await onStage('revoke', record.keyId, '--json')).toBe(0);
      expect(await onStage('revoke', record.keyId, '--json')).toBe(0);
      expect(flushes()).toHaveLength(2);
    });

    it('roll --grace 0 flushes it; a roll whose old key works on does not', async () => {
      const { record } = await createdOnStage();
      expect(await onStage('roll', record.keyId, '--grace', '1h', '--json')).toBe(0);
      expect(flushes()).toEqual([]);
      const successor = String(parsedLines()[0]?.id);
      lines = [];

      expect(await onStage('roll', successor, '--grace', '0')).toBe(0);

      expect(flushes()).toEqual([{ restApiId: REST_API_ID, stageName: 'v1' }]);
      expect(lines.at(-1)).toBe(FLUSHED);
    });

    it('set-plan flushes it, after the API key has moved; set-plan to the plan it is on changes and flushes nothing', async () => {
      const { record } = await createdOnStage();
      aws.apiGatewayMock.resetHistory();
      expect(await onStage('set-plan', record.keyId, 'default')).toBe(0);
      expect(apiGatewayCalls()).toEqual([]);

      expect(await onStage('set-plan', record.keyId, 'partner')).toBe(0);

      expect(apiGatewayCalls().at(-1)).toBe('FlushStageAuthorizersCacheCommand');
      expect(lines.slice(-2)).toEqual([`Moved key ${record.keyId} from plan default to plan partner.`, FLUSHED]);
    });

    it('create, list and show flush nothing', async () => {
      const { record } = await createdOnStage('--plan', 'partner');
      expect(await onStage('list')).toBe(0);
      expect(await onStage('show', record.keyId)).toBe(0);
      expect(flushes()).toEqual([]);
    });

    it('says in one line (exit status 1) when API Gateway refuses the flush: the revoke is stored, and how to flush by hand', async () => {
      aws.apiGatewayMock
        .on(FlushStageAuthorizersCacheCommand)
        .rejects(
          Object.assign(new Error('User: arn:aws:iam::123456789012:user/alice is not authorized'), { name: 'AccessDeniedException' }),
        );
      const { key, record } = await createdOnStage();

      const error = await onStage('revoke', record.keyId).catch((thrown: unknown) => thrown);

      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(UsageError);
      expect((error as Error).message).toBe(
        "The change is stored, but takes effect only within the stage's authorizer cache TTL: API Gateway refused to flush it " +
          `(AccessDeniedException). Flush it now: aws apigateway flush-stage-authorizers-cache --rest-api-id ${REST_API_ID} --stage-name v1`,
      );
      expect(await keys.findActive(key)).toBeUndefined();
      expect(lines).toEqual([`Revoked key ${record.keyId}. Callers using it are refused.`, 'Its API Gateway API key ak-1 is deleted.']);
    });

    it('says in one line (exit status 1) when the stack has no RestApiId output (deployed before it): the revoke is stored', async () => {
      const { key, record } = await createdOnStage();
      const all = outputs();
      outputs = () => all.filter(({ OutputKey }) => OutputKey !== 'RestApiId');

      const error = await onStage('revoke', record.keyId).catch((thrown: unknown) => thrown);

      expect(error).not.toBeInstanceOf(UsageError);
      expect((error as Error).message).toBe(
        "The change is stored, but takes effect only within the stage's authorizer cache TTL: stack PetStore-staging has no " +
          'RestApiId output, so its cache was not flushed. Deploy this version (npx cdk deploy -c stage=staging), or flush it now: ' +
          'aws apigateway flush-stage-authorizers-cache --rest-api-id <the API id> --stage-name v1',
      );
      expect(flushes()).toEqual([]);
      expect(await keys.findActive(key)).toBeUndefined();
    });

    it('says with --table alone that the change takes effect within the TTL, as no stage is named to flush', async () => {
      await putConsoleKey(tables.client, tables.apiKeys, { name: 'before plans' });
      const [record] = await keys.list();
      const keyId = record?.keyId ?? '';

      expect(await onTable('revoke', keyId)).toBe(0);

      expect(apiGatewayCalls()).toEqual([]);
      expect(lines).toEqual([
        `Revoked key ${keyId}. Callers using it are refused.`,
        "The change takes effect within the stage's authorizer cache TTL: --table names no stage whose cache the tool could flush " +
          '(--stage STAGE flushes it).',
      ]);
    });
  });
});

describe('usage', () => {
  it('refuses an unknown command in one line naming it', async () => {
    expect(await refusal('rotate')).toBe(
      "unknown command 'rotate': use create, list, show, usage, roll, set-plan, revoke, capacity, audit (see npm run keys -- --help).",
    );
  });

  it.each([
    [['list', '--name', 'x'], 'list does not take --name: its options are --unused, --usage, --json'],
    [['list', '--grace', '1h'], 'list does not take --grace'],
    [['create', '--name', 'x', '--grace', '1h'], 'create does not take --grace'],
    [['create', '--name', 'x', '--unused', '9d'], 'create does not take --unused'],
    [['show', 'ffffffffffff', '--scopes', 'pets:read'], 'show does not take --scopes: its options are --json'],
    [['revoke', 'ffffffffffff', '--expires-in', '1d'], 'revoke does not take --expires-in'],
    [
      ['roll', 'ffffffffffff', '--scopes', 'pets:read'],
      'roll does not take --scopes: its options are --grace, --expires-in, --expires-at, --json',
    ],
    [['roll', 'ffffffffffff', '--name', 'other'], 'roll does not take --name'],
    [['create', '--name', 'x', 'extra'], 'create takes no argument besides its options'],
    [['list', 'ffffffffffff'], 'list takes no argument besides its options'],
    [['show', 'ffffffffffff', 'aaaaaaaaaaaa'], 'show takes one key id besides its options'],
    [['usage', 'ffffffffffff', 'aaaaaaaaaaaa'], 'usage takes one key id besides its options'],
  ])('refuses %j in one line, exit status 2, writing nothing', async (argv, message) => {
    const { record } = await createKey('ci');
    const refused = await refusal(...argv);
    expect(refused.startsWith(message), refused).toBe(true);
    expect(await keys.list()).toEqual([record]);
  });

  it('returns 2 and prints the usage without a command', async () => {
    expect(await run()).toBe(2);
    expect(lines).toEqual([USAGE]);
  });

  it('returns 0 for --help', async () => {
    expect(await run('--help')).toBe(0);
    expect(lines).toEqual([USAGE]);
  });

  it('works on the table named by --table at the --endpoint given', async () => {
    const code = await runKeysCommand(['create', '--name', 'named', '--endpoint', tables.endpoint, '--table', tables.apiKeys], {
      env: {},
      print: (line) => lines.push(line),
    });
    expect(code).toBe(0);
    expect((await keys.list()).map((record) => record.name)).toEqual(['named']);
  });

  it('refuses --stage together with --endpoint or --table', async () => {
    expect(await refusal('list', '--stage', 'staging', '--endpoint', tables.endpoint)).toMatch(/--stage/);
    expect(await refusal('list', '--stage', 'staging', '--table', 'T')).toMatch(/--stage/);
  });

  it('says the local server may not be running when nothing answers at the endpoint', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    await expect(runKeysCommand(['list', '--endpoint', closed], { env: {}, print: () => undefined })).rejects.toThrow(
      `No DynamoDB answers at ${closed} (ECONNREFUSED): is the local server running (npm start)?`,
    );
  });

  it('refuses an unknown option', async () => {
    expect(await refusal('list', '--verbose')).toBe("unknown option '--verbose': see npm run keys -- --help");
  });

  it("goes to the DynamoDB Local on $DYNAMODB_LOCAL_PORT, as npm start's does", async () => {
    const { record } = await createKey('ci');
    const code = await runKeysCommand(['list'], {
      env: {
        DYNAMODB_LOCAL_PORT: new URL(tables.endpoint).port,
        API_KEYS_TABLE_NAME: tables.apiKeys,
        API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
      },
      print: (line) => lines.push(line),
    });
    expect(code).toBe(0);
    expect(lines).toContain(`${record.keyId}\tci\t${ALL_SCOPES_FIELD}\t${record.createdAt}\t-\t-\tactive\tdefault`);
  });

  it.each(['abc', '0', '70000'])('refuses DYNAMODB_LOCAL_PORT=%s, naming the setting', async (port) => {
    await expect(runKeysCommand(['list'], { env: { DYNAMODB_LOCAL_PORT: port }, print: () => undefined })).rejects.toThrow(
      /^DYNAMODB_LOCAL_PORT must be/,
    );
  });
});

describe('npm run keys, as an operator meets its errors', () => {
  const local = () => ({
    DYNAMODB_ENDPOINT: tables.endpoint,
    API_KEYS_TABLE_NAME: tables.apiKeys,
    API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
  });

  it('names an unknown scope and the valid ones in one line, and exits 2', async () => {
    const result = await npmRun('keys', ['create', '--name', 'x', '--scopes', fixtureScope('delete')], local());
    expect(expectOneLineFailure(result, { status: 2 })).toBe(
      `npm run keys: unknown scope '${fixtureScope('delete')}' in --scopes: the scopes are ${ALL_SCOPES_SAID}.`,
    );
    expect(await keys.list()).toEqual([]);
  });

  it('refuses a past expiry in one line, exit status 2, registering nothing', async () => {
    const result = await npmRun('keys', ['create', '--name', 'x', '--expires-at', '2020-01-01T00:00:00Z'], local());
    expect(expectOneLineFailure(result, { status: 2 })).toMatch(
      /^npm run keys: --expires-at 2020-01-01T00:00:00\.000Z is not in the future/,
    );
    expect(await keys.list()).toEqual([]);
  });

  it('refuses an id no key has in one line, and exits 2', async () => {
    const result = await npmRun('keys', ['revoke', 'ffffffffffff'], local());
    expect(expectOneLineFailure(result, { status: 2 })).toBe(
      'npm run keys: No key has the id ffffffffffff (npm run keys -- list shows them).',
    );
  });

  it('names an unknown option in one line, points at --help, and exits 2', async () => {
    const result = await npmRun('keys', ['list', '--verbose']);
    expect(expectOneLineFailure(result, { status: 2 })).toBe("npm run keys: unknown option '--verbose': see npm run keys -- --help");
  });

  it('refuses a whole key given to revoke in one line, never printing it, and exits 2', async () => {
    const { key, record } = await createKey('ci');
    const result = await npmRun('keys', ['revoke', key], local());
    const line = expectOneLineFailure(result, { status: 2, secret: key });
    expect(line).toContain('a key id, not the key itself');
    expect(line).toContain(record.keyId);
    expect(await keys.findActive(key)).toBeDefined();
  });
});

/** Every 8 characters of `key` past its prefix (which every key shares), in lower case: none may be printed. */
const partsOf = (key: string): string[] =>
  [...Array(key.length - 7).keys()]
    .filter((start) => start >= API_KEY_PREFIX.length)
    .map((start) => key.slice(start, start + 8).toLowerCase());

describe('a key pasted in the wrong place, never echoed', () => {
  /** A stack no stage has: CloudFormation's answer quotes the name it was asked. */
  const noStack = {
    send: async () => {
      throw Object.assign(new Error('Stack does not exist'), { name: 'ValidationError', $metadata: { httpStatusCode: 400 } });
    },
  } as unknown as Parameters<typeof stageKeysTable>[1];

  /** Everything a command line makes the tool print, and the line of its failure. */
  const outputOf = async (argv: string[]): Promise<string> => {
    const printed: string[] = [];
    const failure = await runKeysCommand(argv, {
      env: { DYNAMODB_ENDPOINT: tables.endpoint, API_KEYS_TABLE_NAME: tables.apiKeys, API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse },
      print: (line) => printed.push(line),
      cloudFormation: noStack,
    }).then(
      () => '',
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    return [...printed, failure].join('\n');
  };

  /** Where an operator might paste a key: K stands for it, ID for a key's id, E for the endpoint. */
  const PLACES = [
    ['list', '--table', 'K', '--endpoint', 'E'],
    ['list', '--table=K', '--endpoint', 'E'],
    ['list', '--K'],
    ['K'],
    ['list', 'K'],
    ['list', '--stage', 'K'],
    ['list', '--endpoint', 'K'],
    ['list', '--region', 'K'],
    ['create', '--name', 'x', '--plan', 'K'],
    ['set-plan', 'ID', 'K'],
    ['create', '--name', 'x K'],
    ['create', '--name', 'x', '--scopes', 'pets:read,K'],
    ['create', '--name', 'x', '--expires-at', 'K'],
    ['create', '--name', 'x', '--expires-in', 'K'],
    ['roll', 'ID', '--grace', 'K'],
    ['list', '--unused', 'K'],
    ['show', 'K'],
    ['audit', 'K'],
    ['revoke', 'K'],
  ];

  it.each([
    ['whole', (key: string) => key],
    ['without its prefix', (key: string) => key.slice(API_KEY_PREFIX.length)],
    ['cut short', (key: string) => key.slice(0, 30)],
    ['in upper case', (key: string) => key.toUpperCase()],
  ])('echoes no part of a key given %s in any option, argument or option name', async (_, form) => {
    const { record } = await createKey('ci');
    const key = generateApiKey();
    for (const place of PLACES) {
      const argv = place.map((argument) => argument.replace('K', form(key)).replace(/^ID$/, record.keyId).replace(/^E$/, tables.endpoint));
      const output = await withoutKeysItMade(await outputOf(argv));
      for (const part of partsOf(key)) expect(output.toLowerCase(), `${place.join(' ')}: ${output}`).not.toContain(part);
    }
  });

  /**
   * The output without the keys the tool registered and printed (a `create` whose name holds the
   * pasted text succeeds): those share the prefix with the pasted key, and by chance its first letters.
   */
  const withoutKeysItMade = async (output: string): Promise<string> => {
    let rest = output;
    for (const printed of output.match(/petstore_[A-Za-z0-9_-]{43}/g) ?? []) {
      if (await keys.find(printed)) rest = rest.replaceAll(printed, '<the key it made>');
    }
    return rest;
  };

  it.each([
    ['--table KEY', (key: string) => ['list', '--table', key, '--endpoint', tables.endpoint]],
    ['--KEY', (key: string) => ['list', `--${key}`]],
  ])('refuses %s in one line without the key, exit status 2', async (_, argv) => {
    const key = generateApiKey();
    const result = await npmRun('keys', argv(key), {
      DYNAMODB_ENDPOINT: tables.endpoint,
      API_KEYS_TABLE_NAME: tables.apiKeys,
      API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
    });
    const line = expectOneLineFailure(result, { status: 2 });
    for (const part of partsOf(key)) expect(line).not.toContain(part);
    expect(line).toContain('…');
  });
});

describe('npm run keys with its output closed by the reader', () => {
  /** `npm run keys -- argv… | (exec 0<&-)` on this file's table: its output is closed before anything is written. */
  const piped = (...argv: string[]) =>
    runCommandClosingOutput('npm', ['run', '--silent', 'keys', '--', ...argv], {
      DYNAMODB_ENDPOINT: tables.endpoint,
      API_KEYS_TABLE_NAME: tables.apiKeys,
      API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
    });

  it.each([[[]], [['--json']]])('revokes the key create %j could not show, says so in one line, and exits 1', async (options) => {
    const result = await piped('create', '--name', 'piped', ...options);

    const line = expectOneLineFailure(result, { status: 1 });
    const [record, ...others] = await keys.list();
    expect(others).toEqual([]);
    expect(line).toBe(`npm run keys: new key ${record?.keyId} could not be shown, as standard output closed (EPIPE): it is revoked.`);
    expect(record?.revokedAt).toEqual(expect.any(String));
  });

  it('revokes the new key of a roll it could not show, and says when the old one ends', async () => {
    const old = await createKey('partner');

    const result = await piped('roll', old.record.keyId, '--grace', '1h', '--json');

    const line = expectOneLineFailure(result, { status: 1 });
    const previous = await recordOf(old.record.keyId);
    const next = await recordOf(previous.replacedBy ?? '');
    expect(next.revokedAt).toEqual(expect.any(String));
    expect(line).toBe(
      `npm run keys: new key ${next.keyId} could not be shown, as standard output closed (EPIPE): it is revoked; ` +
        `the old key ${old.record.keyId} still ends at ${previous.expiresAt}: create a key to replace it.`,
    );
  });

  it.each([['list'], ['--help']])('says in one line that %s could not write all of its output, and exits 1', async (command) => {
    await createKey('ci');

    const result = await piped(command);

    expect(expectOneLineFailure(result, { status: 1 })).toBe(
      'npm run keys: the command ran to its end, but not all of its output was written, as standard output closed (EPIPE).',
    );
  });
});

describe('console items of other types than documented, through the tool', () => {
  const putOdd = async () => ({
    number: await putConsoleKey(tables.client, tables.apiKeys, { name: 'n', extra: { createdAt: { N: '1700000000' } } }),
    huge: await putConsoleKey(tables.client, tables.apiKeys, { name: 'huge' }).then(async (key) => {
      // Its last use, in the last-use table, edited there in the console.
      await tables.client.send(
        new PutItemCommand({
          TableName: tables.apiKeyLastUse,
          Item: { keyHash: { S: hashApiKey(key) }, lastUsedAt: { N: '123456789012345678901234567890' } },
        }),
      );
      return key;
    }),
    nullExpiry: await putConsoleKey(tables.client, tables.apiKeys, { name: 'null expiry', extra: { expiresAt: { NULL: true } } }),
  });

  it('lists them, in text and --json, each value as DynamoDB stores it', async () => {
    await putOdd();
    await tables.client.send(
      new PutItemCommand({ TableName: tables.apiKeys, Item: { keyHash: { S: hashApiKey(generateApiKey()) }, name: { S: 'bare' } } }),
    );
    expect(await run('list')).toBe(0);
    const byName = Object.fromEntries(lines.slice(1).map((line) => [line.split('\t')[1], line.split('\t')]));
    expect(byName.n?.[3]).toBe('{"N":"1700000000"}');
    expect(byName.huge?.[5]).toBe('{"N":"123456789012345678901234567890"}');
    // expires, last used, state, plan
    expect(byName['null expiry']?.slice(4)).toEqual(['{"NULL":true}', '-', 'expired', '-']);
    expect(byName.bare?.[3]).toBe('-');
    lines = [];
    expect(await run('list', '--json')).toBe(0);
    expect(parsedLines().find((key) => key.name === 'huge')).toMatchObject({ lastUsedAt: '{"N":"123456789012345678901234567890"}' });
  });

  it('shows and revokes any key all the same', async () => {
    const { huge } = await putOdd();
    const { record } = await createKey('ci');
    const keyId = keyIdOf(hashApiKey(huge));
    expect(await run('show', keyId)).toBe(0);
    expect(lines).toContain('lastUsedAt  {"N":"123456789012345678901234567890"}');
    lines = [];
    expect(await run('revoke', record.keyId)).toBe(0);
    expect(lines).toEqual([`Revoked key ${record.keyId}. Callers using it are refused.`, TAKES_EFFECT_LOCALLY]);
  });

  it('says a key revoked in the console with a revokedAt that is no timestamp was revoked already, and writes nothing', async () => {
    const key = await putConsoleKey(tables.client, tables.apiKeys, { extra: { revokedAt: { S: 'yesterday' } } });
    const keyId = keyIdOf(hashApiKey(key));
    expect(await run('revoke', keyId)).toBe(0);
    expect(lines).toEqual([`Key ${keyId} was already revoked at yesterday.`, TAKES_EFFECT_LOCALLY]);
    expect((await recordOf(keyId)).changedBy).toBeUndefined();
  });
});

describe('names written in the console with control characters, through the tool', () => {
  /** A name that would print a line of its own, shift the columns and drive the terminal, were it printed as it is. */
  const FORGED = 'ci\nffffffffffff\tadmin\tpets:read\t2030-01-01\t-\t-\tactive\tpartner\u001b[2K\u0085\u202e';
  const SHOWN = 'ci\\nffffffffffff\\tadmin\\tpets:read\\t2030-01-01\\t-\\t-\\tactive\\tpartner\\x1b[2K\\u0085\\u202e';

  it('lists and shows them escaped, one line per key and one cell per column; --json keeps them exact', async () => {
    const keyId = keyIdOf(hashApiKey(await putConsoleKey(tables.client, tables.apiKeys, { name: FORGED })));

    expect(await run('list')).toBe(0);
    expect(lines).toHaveLength(2);
    expect(lines[1]?.split('\t')).toHaveLength(LIST_HEADER.split('\t').length);
    expect(lines[1]?.split('\t').slice(0, 2)).toEqual([keyId, SHOWN]);
    lines = [];
    expect(await run('show', keyId)).toBe(0);
    expect(lines).toContain(`name        ${SHOWN}`);
    expect(lines.join('\n')).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    lines = [];
    expect(await run('list', '--json')).toBe(0);
    expect(parsedLines()).toMatchObject([{ id: keyId, name: FORGED }]);
    lines = [];
    expect(await run('show', keyId, '--json')).toBe(0);
    expect(parsedLines()).toMatchObject([{ id: keyId, name: FORGED }]);
  });

  it('refuses to roll such a key in one line, exit status 2: its successor would take the name', async () => {
    // A key the tool made (scopes, plan, usage key), then renamed in the console.
    const extra = { scopes: { SS: ['pets:read'] } };
    const keyId = keyIdOf(hashApiKey(await putConsoleKey(tables.client, tables.apiKeys, { name: FORGED, metered: true, extra })));
    expect(await refusal('roll', keyId)).toBe(
      `Key ${keyId} cannot be rolled: its successor would take its stored name. A key name must not contain control characters ` +
        '(U+0000 to U+001F, U+007F to U+009F: line breaks, tabs, terminal escapes). Rename it in the console first.',
    );
  });
});

describe("values written in the console, in the tool's own lines and refusals", () => {
  /** What a console edit would forge the tool's output with: a line of its own, a terminal escape, a C1 control, a reversal. */
  const FORGED = 'partner\nMoved key ffffffffffff\u001b[2K\u0085\u202e';
  const SHOWN = 'partner\\nMoved key ffffffffffff\\x1b[2K\\u0085\\u202e';
  /** What no line of the tool holds as it is: a control character (the line break aside) or a bidirectional one. */
  const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

  it('set-plan names the stored plan it moved a key from escaped', async () => {
    const key = await putConsoleKey(tables.client, tables.apiKeys, { metered: true, extra: { plan: { S: FORGED } } });
    const keyId = keyIdOf(hashApiKey(key));

    expect(await run('set-plan', keyId, DEFAULT_PLAN)).toBe(0);

    expect(lines).toEqual([`Moved key ${keyId} from plan ${SHOWN} to plan ${DEFAULT_PLAN}.`, TAKES_EFFECT_LOCALLY]);
  });

  it("set-plan's refusal names the stored successor escaped, in one line", async () => {
    const key = await putConsoleKey(tables.client, tables.apiKeys, { metered: true, extra: { replacedBy: { S: FORGED } } });
    const keyId = keyIdOf(hashApiKey(key));

    const refused = await refusal('set-plan', keyId, OTHER_PLAN);

    expect(refused).toBe(`Key ${keyId} has been rolled to ${SHOWN}, which shares its usage key: set the plan of ${SHOWN}.`);
    expect(refused).not.toMatch(RAW);
  });

  it('refuses to roll a key whose stored name holds a bidirectional override, in one line: its successor would take it', async () => {
    const extra = { scopes: { SS: [READ_ONLY_SCOPES[0] ?? ''] } };
    const keyId = keyIdOf(hashApiKey(await putConsoleKey(tables.client, tables.apiKeys, { name: 'ci \u202eadmin', metered: true, extra })));

    expect(await refusal('roll', keyId)).toBe(
      `Key ${keyId} cannot be rolled: its successor would take its stored name. A key name must not contain bidirectional or ` +
        'line-separator characters (U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069, U+2028, U+2029). Rename it in the console first.',
    );
  });

  it('roll prints the stored name its successor takes escaped (a format character the name rule leaves)', async () => {
    const name = 'ci\u200b\u2060\ufeff';
    const extra = { scopes: { SS: [READ_ONLY_SCOPES[0] ?? ''] } };
    const keyId = keyIdOf(hashApiKey(await putConsoleKey(tables.client, tables.apiKeys, { name, metered: true, extra })));

    expect(await run('roll', keyId)).toBe(0);

    expect(lines[0]).toMatch(new RegExp(`^Rolled key ${keyId} to [0-9a-f]{12} \\(ci\\\\u200b\\\\u2060\\\\ufeff, scopes `));
    expect(lines.join('\n')).not.toMatch(/[\u200b\u2060\ufeff]/);
  });
});

describe("the tool's lines for what it cannot do", () => {
  it('refuses in one line, exit status 2, to roll a key whose stored scopes grant nothing', async () => {
    const key = await putConsoleKey(tables.client, tables.apiKeys, { extra: { scopes: { SS: [fixtureScope('admin')] } } });
    const keyId = keyIdOf(hashApiKey(key));
    expect(await refusal('roll', keyId)).toBe(
      `Key ${keyId} has no scope this API knows in its stored scopes, so its successor would have none: ` +
        'give it valid scopes in the console, or create a new key with --scopes.',
    );
  });

  it.each([
    ['--scopes', ['create', '--name', 'x', '--scopes']],
    ['--name', ['create', '--scopes', 'pets:read', '--name']],
  ])('refuses a key given to %s without printing it', async (_, argv) => {
    const key = generateApiKey();
    for (const value of [key, `pets:read,${key}`, `ci ${key}`]) {
      if (argv.includes('--scopes') && value.includes(' ')) continue;
      const refused = await refusal(...argv, value);
      expect(refused).toContain('looks like an API key (not shown here)');
      expect(refused).not.toContain(key.slice('petstore_'.length, 30));
    }
  });

  it('names an unknown --table on AWS in one line, exit status 2', async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', tables.endpoint);
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    try {
      const error = await runKeysCommand(['list', '--table', 'no-such-table'], { env: {}, print: () => undefined }).catch(
        (thrown: Error) => thrown,
      );
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toBe('No keys table no-such-table in this region: check --table, --stage and --region.');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it.each([
    [
      'ValidationError',
      UsageError,
      'No stack PetStore-nowhere for --stage nowhere in this region: is the stage deployed, and is --region (or AWS_REGION) its region?',
    ],
    [
      'AccessDenied',
      Error,
      'AWS refused to describe stack PetStore-nowhere (AccessDenied): check your AWS credentials, and that they may read the stack.',
    ],
  ])("answers CloudFormation's %s for --stage in one line naming the stack, never its text", async (name, kind, message) => {
    const cloudFormation = {
      send: async () => {
        throw Object.assign(new Error('Stack with id PetStore-nowhere does not exist; arn:aws:iam::123456789012:role/Admin'), {
          name,
          $metadata: { httpStatusCode: 400 },
        });
      },
    } as unknown as Parameters<typeof stageKeysTable>[1];
    const error = await runKeysCommand(['list', '--stage', 'nowhere'], { env: {}, print: () => undefined, cloudFormation }).catch(
      (thrown: Error) => thrown,
    );
    expect(error).toBeInstanceOf(kind);
    expect(error instanceof UsageError).toBe(kind === UsageError);
    expect((error as Error).message).toBe(message);
  });

  it('answers a refusal of access to the keys table in one line, without the SDK text and its ARNs', () => {
    const target = { tableName: 'pet-store-prod-api-keys', onAws: true } as Parameters<typeof targetFailure>[0];
    const denied = Object.assign(new Error('User: arn:aws:sts::123456789012:assumed-role/X is not authorized on arn:aws:dynamodb:…'), {
      name: 'AccessDeniedException',
      $metadata: { httpStatusCode: 400 },
    });
    const line = targetFailure(target, denied) as Error;
    expect(line).not.toBeInstanceOf(UsageError);
    expect(line.message).toBe(
      'AWS refused access to the keys table pet-store-prod-api-keys (AccessDeniedException): check your AWS credentials, and that they may use it.',
    );
  });
});

describe('stageKeysTable', () => {
  type CloudFormation = Parameters<typeof stageKeysTable>[1];

  /** A CloudFormation stand-in that answers DescribeStacks with `output` and remembers what it was asked. */
  const stubCloudFormation = (output: Partial<DescribeStacksCommandOutput>) => {
    const inputs: unknown[] = [];
    const cloudFormation = {
      send: async (command: { input: unknown }) => {
        inputs.push(command.input);
        return output;
      },
    } as unknown as CloudFormation;
    return { cloudFormation, inputs };
  };

  it("reads the keys table name from the stage stack's ApiKeysTableName output", async () => {
    const { cloudFormation, inputs } = stubCloudFormation({
      Stacks: [
        {
          StackName: 'PetStore-staging',
          CreationTime: new Date(),
          StackStatus: 'UPDATE_COMPLETE',
          Outputs: [
            { OutputKey: 'ApiUrl', OutputValue: 'https://example.test/v1' },
            { OutputKey: 'ApiKeysTableName', OutputValue: 'T' },
          ],
        },
      ],
    });

    expect(await stageKeysTable('staging', cloudFormation)).toBe('T');
    expect(inputs).toEqual([{ StackName: 'PetStore-staging' }]);
  });

  it.each([
    [
      'the output is missing',
      {
        Stacks: [
          {
            StackName: 'x',
            CreationTime: new Date(),
            StackStatus: 'CREATE_COMPLETE',
            Outputs: [{ OutputKey: 'ApiUrl', OutputValue: 'u' }],
          },
        ],
      },
    ],
    [
      'the output is empty',
      {
        Stacks: [
          {
            StackName: 'x',
            CreationTime: new Date(),
            StackStatus: 'CREATE_COMPLETE',
            Outputs: [{ OutputKey: 'ApiKeysTableName', OutputValue: '' }],
          },
        ],
      },
    ],
    ['the stack has no outputs', { Stacks: [{ StackName: 'x', CreationTime: new Date(), StackStatus: 'CREATE_COMPLETE' }] }],
    ['there is no stack', { Stacks: [] }],
  ] satisfies Array<[string, Partial<DescribeStacksCommandOutput>]>)('throws a clear error when %s', async (_, output) => {
    const { cloudFormation } = stubCloudFormation(output);
    await expect(stageKeysTable('staging', cloudFormation)).rejects.toThrow('Stack PetStore-staging has no ApiKeysTableName output.');
  });
});
