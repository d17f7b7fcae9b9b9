/** The key tool (`npm run keys`), against the real DynamoDB Local; a stage's table from a stubbed CloudFormation. */
import type { DescribeStacksCommandOutput } from '@aws-sdk/client-cloudformation';
import { beforeEach, describe, expect, it } from 'vitest';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { apiKeysRepository, type ApiKeysRepository } from '../../shared/api-keys-repository';
import { runKeysCommand, stageKeysTable, USAGE } from '../../tools/keys/cli';
import { expectOneLineFailure, npmRun } from '../support/command';
import { putConsoleKey } from '../support/console-keys';
import { createTestTables, type TestTables } from '../support/tables';
import { freePort } from '../../tools/dynamodb-local';

let tables: TestTables;
let keys: ApiKeysRepository;
let lines: string[];

beforeEach(async () => {
  tables = await createTestTables();
  keys = apiKeysRepository({ client: tables.client, tableName: tables.apiKeys });
  lines = [];
});

/** Runs the tool against this file's DynamoDB Local table, collecting what it prints. */
const run = (...argv: string[]) =>
  runKeysCommand(argv, {
    env: { DYNAMODB_ENDPOINT: tables.endpoint, API_KEYS_TABLE_NAME: tables.apiKeys },
    print: (line) => lines.push(line),
  });

const createKey = async (name: string) => {
  expect(await run('create', '--name', name)).toBe(0);
  const key = lines.find((line) => line.startsWith('petstore_'));
  if (key === undefined) throw new Error(`no key printed in ${JSON.stringify(lines)}`);
  const record = await keys.findActive(key);
  if (record === undefined) throw new Error('the printed key is not registered');
  lines = [];
  return { key, record };
};

describe('keys create', () => {
  it('registers a new key and prints it exactly once, with its id and name', async () => {
    expect(await run('create', '--name', 'ci')).toBe(0);

    const printedKeys = lines.filter((line) => /petstore_[A-Za-z0-9_-]{43,}/.test(line));
    expect(printedKeys).toHaveLength(1);
    const key = printedKeys[0] ?? '';
    expect(key).toMatch(/^petstore_[A-Za-z0-9_-]{43,}$/);
    const record = await keys.findActive(key);
    expect(record).toMatchObject({ name: 'ci' });
    expect(lines).toEqual([`Created key ${record?.keyId} (ci, scopes pets:read,pets:write,orders:read). It is shown only this once:`, key]);
  });

  it('gives a new key every scope unless --scopes narrows them', async () => {
    expect((await createKey('full')).record.scopes).toEqual(['pets:read', 'pets:write', 'orders:read']);
    expect(await run('create', '--name', 'reader', '--scopes', 'pets:read, orders:read')).toBe(0);
    const key = lines[1] ?? '';
    expect(lines[0]).toContain('(reader, scopes pets:read,orders:read)');
    expect((await keys.findActive(key))?.scopes).toEqual(['pets:read', 'orders:read']);
  });

  it('stores the scopes as a String Set, as the DynamoDB console shows and edits them', async () => {
    expect(await run('create', '--name', 'writer', '--scopes', 'pets:write')).toBe(0);
    const [item] = (await keys.list()).map((record) => record.keyHash);
    const { Item } = await tables.client.send(new GetItemCommand({ TableName: tables.apiKeys, Key: { keyHash: { S: item ?? '' } } }));
    expect(Item?.scopes).toEqual({ SS: ['pets:write'] });
  });

  it.each([
    [
      'an unknown scope',
      'pets:read,pets:admin',
      /^unknown scope 'pets:admin' in --scopes: the scopes are pets:read, pets:write, orders:read\.$/,
    ],
    ['an empty list', '', /^--scopes needs one or more scopes separated by commas: the scopes are pets:read, pets:write, orders:read\.$/],
    ['an empty entry', 'pets:read,,pets:write', /^--scopes needs one or more scopes/],
  ])('refuses %s in --scopes in one line naming the valid scopes, and registers nothing', async (_, scopes, message) => {
    await expect(run('create', '--name', 'x', '--scopes', scopes)).rejects.toThrow(message);
    expect(await keys.list()).toEqual([]);
  });

  it('prints the new key as one JSON object with --json, the key included', async () => {
    expect(await run('create', '--name', 'ci', '--scopes', 'pets:read', '--json')).toBe(0);
    expect(lines).toHaveLength(1);
    const printed = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    const record = await keys.findActive(String(printed.key));
    expect(printed).toEqual({
      id: record?.keyId,
      name: 'ci',
      scopes: ['pets:read'],
      createdAt: record?.createdAt,
      revokedAt: null,
      key: printed.key,
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
      env: { DYNAMODB_ENDPOINT: 'http://127.0.0.1:9', API_KEYS_TABLE_NAME: tables.apiKeys },
      print: (line) => lines.push(line),
    });
    expect(code).toBe(0);
    expect((await keys.list()).map((record) => record.name)).toEqual(['flag']);
  });

  it('throws when --name is missing, and registers nothing', async () => {
    await expect(run('create')).rejects.toThrow(/--name/);
    expect(await keys.list()).toEqual([]);
  });
});

describe('keys list', () => {
  it('prints a header and one line per key: id, name, scopes, creation time, state', async () => {
    const { record } = await createKey('ci');

    expect(await run('list')).toBe(0);

    expect(lines).toEqual([
      'id\tname\tscopes\tcreated\tstate',
      `${record.keyId}\tci\tpets:read,pets:write,orders:read\t${record.createdAt}\tactive`,
    ]);
  });

  it("shows each key's scopes: narrowed ones, all of them for a key stored without scopes, none when only unknown ones", async () => {
    expect(await run('create', '--name', 'reader', '--scopes', 'pets:read')).toBe(0);
    for (const [name, scopes] of [
      ['legacy', undefined],
      ['typo', ['pets:admin']],
    ] as const) {
      await putConsoleKey(tables.client, tables.apiKeys, { name, extra: scopes ? { scopes: { SS: [...scopes] } } : {} });
    }
    lines = [];

    expect(await run('list')).toBe(0);

    const scopesByName = Object.fromEntries(lines.slice(1).map((line) => [line.split('\t')[1], line.split('\t')[2]]));
    expect(scopesByName).toEqual({ reader: 'pets:read', legacy: 'pets:read,pets:write,orders:read', typo: '(none)' });
  });

  it('prints one JSON object per key with --json, never a key', async () => {
    const { key, record } = await createKey('ci');
    await keys.revoke(record.keyId);

    expect(await run('list', '--json')).toBe(0);

    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      {
        id: record.keyId,
        name: 'ci',
        scopes: ['pets:read', 'pets:write', 'orders:read'],
        createdAt: record.createdAt,
        revokedAt: expect.any(String),
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
    expect(lines).toEqual(['id\tname\tscopes\tcreated\tstate']);
  });
});

describe('keys revoke', () => {
  it('revokes a key by id: it stops working and the listing shows it revoked', async () => {
    const { key, record } = await createKey('ci');
    const other = await createKey('other');

    expect(await run('revoke', record.keyId)).toBe(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`Revoked key ${record.keyId}`);

    expect(await keys.findActive(key)).toBeUndefined();
    expect(await keys.findActive(other.key)).toBeDefined();
    lines = [];
    await run('list');
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${record.keyId}\\tci\\t[^\\t]+\\t[^\\t]+\\trevoked \\d{4}-`)));
    expect(lines).toContainEqual(`${other.record.keyId}\tother\tpets:read,pets:write,orders:read\t${other.record.createdAt}\tactive`);
  });

  it('returns 1 and says so for an id no key has', async () => {
    await createKey('ci');
    expect(await run('revoke', 'ffffffffffff')).toBe(1);
    expect(lines).toEqual(['No key has the id ffffffffffff.']);
    expect((await keys.list()).every((record) => record.revokedAt === undefined)).toBe(true);
  });

  it('throws when the id is missing', async () => {
    await expect(run('revoke')).rejects.toThrow(/key id/);
  });

  it('refuses a whole key in place of its id without printing it, and names the id to use', async () => {
    const { key, record } = await createKey('ci');
    const refused = await run('revoke', key).then(
      () => undefined,
      (error: Error) => error.message,
    );
    expect(refused).toContain('a key id, not the key itself');
    expect(refused).toContain(record.keyId);
    expect(refused).not.toContain(key);
    expect(lines.join('\n')).not.toContain(key);
    expect(await keys.findActive(key)).toBeDefined();
  });
});

describe('usage', () => {
  it('refuses an unknown command in one line naming it', async () => {
    await expect(run('rotate')).rejects.toThrow("unknown command 'rotate': use create, list, revoke, audit (see npm run keys -- --help).");
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
    await expect(run('list', '--stage', 'staging', '--endpoint', tables.endpoint)).rejects.toThrow(/--stage/);
    await expect(run('list', '--stage', 'staging', '--table', 'T')).rejects.toThrow(/--stage/);
  });

  it('says the local server may not be running when nothing answers at the endpoint', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    await expect(runKeysCommand(['list', '--endpoint', closed], { env: {}, print: () => undefined })).rejects.toThrow(
      `No DynamoDB answers at ${closed} (ECONNREFUSED): is the local server running (npm start)?`,
    );
  });

  it('throws on an unknown option', async () => {
    await expect(run('list', '--verbose')).rejects.toThrow();
  });

  it("goes to the DynamoDB Local on $DYNAMODB_LOCAL_PORT, as npm start's does", async () => {
    const { record } = await createKey('ci');
    const code = await runKeysCommand(['list'], {
      env: { DYNAMODB_LOCAL_PORT: new URL(tables.endpoint).port, API_KEYS_TABLE_NAME: tables.apiKeys },
      print: (line) => lines.push(line),
    });
    expect(code).toBe(0);
    expect(lines).toContain(`${record.keyId}\tci\tpets:read,pets:write,orders:read\t${record.createdAt}\tactive`);
  });

  it.each(['abc', '0', '70000'])('refuses DYNAMODB_LOCAL_PORT=%s, naming the setting', async (port) => {
    await expect(runKeysCommand(['list'], { env: { DYNAMODB_LOCAL_PORT: port }, print: () => undefined })).rejects.toThrow(
      /^DYNAMODB_LOCAL_PORT must be/,
    );
  });
});

describe('npm run keys, as an operator meets its errors', () => {
  it('names an unknown scope and the valid ones in one line, and exits 2', async () => {
    const result = await npmRun('keys', ['create', '--name', 'x', '--scopes', 'pets:delete'], {
      DYNAMODB_ENDPOINT: tables.endpoint,
      API_KEYS_TABLE_NAME: tables.apiKeys,
    });
    expect(expectOneLineFailure(result, { status: 2 })).toBe(
      "npm run keys: unknown scope 'pets:delete' in --scopes: the scopes are pets:read, pets:write, orders:read.",
    );
    expect(await keys.list()).toEqual([]);
  });

  it('names an unknown option in one line, points at --help, and exits 2', async () => {
    const result = await npmRun('keys', ['list', '--verbose']);
    expect(expectOneLineFailure(result, { status: 2 })).toBe("npm run keys: unknown option '--verbose': see npm run keys -- --help");
  });

  it('refuses a whole key given to revoke in one line, never printing it, and exits 2', async () => {
    const { key, record } = await createKey('ci');
    const result = await npmRun('keys', ['revoke', key], { DYNAMODB_ENDPOINT: tables.endpoint, API_KEYS_TABLE_NAME: tables.apiKeys });
    const line = expectOneLineFailure(result, { status: 2, secret: key });
    expect(line).toContain('a key id, not the key itself');
    expect(line).toContain(record.keyId);
    expect(await keys.findActive(key)).toBeDefined();
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
