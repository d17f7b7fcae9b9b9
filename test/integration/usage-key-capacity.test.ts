/**
 * A usage key is never spent forever: API Gateway holds at most 10,000 API keys per account and
 * region, and that quota cannot be raised, so the API key of a key that has ended (revoked,
 * expired, or the old end of a roll once its grace ends) is deleted once no live key uses it.
 * The keys table is DynamoDB Local. Locally the key tool's usage keys are the local gateway's,
 * held up to LOCAL_API_KEY_LIMIT. On a stage, API Gateway is mocked with aws-sdk-client-mock as
 * an account that holds a few API keys and refuses one more with the documented
 * LimitExceededException (as are STS and CloudFormation: there is no AWS account here).
 */
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  FlushStageAuthorizersCacheCommand,
  GetApiKeysCommand,
  LimitExceededException,
  NotFoundException,
  type GetApiKeysCommandInput,
} from '@aws-sdk/client-api-gateway';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHandler as createExpirySweep, EXPIRY_SWEEP_ACTOR } from '../../functions/key-expiry';
import { generateApiKey } from '../../shared/api-keys';
import { apiKeysRepository, type ApiKeysRepository } from '../../shared/api-keys-repository';
import { runKeysCommand } from '../../tools/keys/cli';
import { LOCAL_API_KEY_LIMIT_VARIABLE } from '../../tools/local-server/usage-plans';
import { context } from '../support/events';
import { describedStage } from '../support/stage-stack';
import { createTestTables, keyTablesEnv, type TestTables } from '../support/tables';

/** The quota the tests give the local gateway and the mocked account: small, so that 3 times it is quick. */
const LIMIT = 5;
const ARN = 'arn:aws:sts::123456789012:assumed-role/KeyAdmin/alice';

let tables: TestTables;
let keys: ApiKeysRepository;
let lines: string[];

beforeEach(async () => {
  tables = await createTestTables();
  keys = apiKeysRepository({ client: tables.client, tables });
  lines = [];
});

/** The key id a create or roll printed (--json: the first line's). */
const printedId = (): string => String((JSON.parse(lines[0] ?? '{}') as { id?: unknown }).id);

describe('locally, the local gateway holds at most LOCAL_API_KEY_LIMIT usage keys', () => {
  const run = (...argv: string[]) =>
    runKeysCommand(argv, {
      env: { ...keyTablesEnv(tables.endpoint, tables), [LOCAL_API_KEY_LIMIT_VARIABLE]: String(LIMIT) },
      print: (line) => lines.push(line),
    });

  it(`creating and revoking ${3 * LIMIT} keys one after another leaves the last create working, and capacity shows 1 of ${LIMIT}`, async () => {
    for (let round = 1; round <= 3 * LIMIT; round += 1) {
      lines = [];
      expect(await run('create', '--name', `round ${round}`, '--json')).toBe(0);
      const keyId = printedId();
      if (round < 3 * LIMIT) expect(await run('revoke', keyId, '--json')).toBe(0);
    }
    lines = [];

    expect(await run('capacity')).toBe(0);

    expect(lines).toEqual([`API keys: 1 of ${LIMIT} held by the local gateway, 20% of the quota; 1 keys of this table are live.`]);
    const records = await keys.list();
    expect(records).toHaveLength(3 * LIMIT);
    // Each revoked key keeps its record, its usage key recorded as deleted.
    expect(records.filter((record) => record.usageKeyDeletedAt !== undefined)).toHaveLength(3 * LIMIT - 1);
  });

  /** Makes a key and rolls it, then revokes the new key and the old one apart: their one usage key is deleted by the second. */
  const rolledAndRevokedApart = async (runIt: (...argv: string[]) => Promise<number>) => {
    lines = [];
    expect(await runIt('create', '--name', 'rolled', '--json')).toBe(0);
    const old = printedId();
    lines = [];
    expect(await runIt('roll', old, '--json')).toBe(0);
    const successor = printedId();
    expect(await runIt('revoke', successor, '--only-this-key', '--json')).toBe(0);
    expect(await runIt('revoke', old, '--only-this-key', '--json')).toBe(0);
    lines = [];
    return { old, successor };
  };

  it('counts no usage key for a roll revoked key by key, the new key first, once its usage key is deleted', async () => {
    // Another key, live throughout, holds a usage key of its own.
    expect(await run('create', '--name', 'live', '--json')).toBe(0);
    const { old, successor } = await rolledAndRevokedApart(run);
    // The deletion is recorded on the key whose release made it, the old one, not on the new one.
    expect((await keys.findById(old))?.usageKeyDeletedAt).toEqual(expect.any(String));
    expect((await keys.findById(successor))?.usageKeyDeletedAt).toBeUndefined();

    expect(await run('capacity')).toBe(0);

    expect(lines).toEqual([`API keys: 1 of ${LIMIT} held by the local gateway, 20% of the quota; 1 keys of this table are live.`]);
  });

  it('lets a gateway that holds one API key create a key once such a roll is revoked: none is held', async () => {
    const runWithOne = (...argv: string[]) =>
      runKeysCommand(argv, {
        env: { ...keyTablesEnv(tables.endpoint, tables), [LOCAL_API_KEY_LIMIT_VARIABLE]: '1' },
        print: (line) => lines.push(line),
      });
    await rolledAndRevokedApart(runWithOne);

    expect(await runWithOne('create', '--name', 'after', '--json')).toBe(0);
  });

  it('refuses a create at the limit in one line (exit status 1): what is full, how many are live, and the way past', async () => {
    for (let round = 1; round <= LIMIT; round += 1) expect(await run('create', '--name', `live ${round}`, '--json')).toBe(0);

    const error = await run('create', '--name', 'one too many').catch((thrown: unknown) => thrown);

    expect(error).toBeInstanceOf(Error);
    expect((error as Error).constructor).toBe(Error);
    expect((error as Error).message).toBe(
      `No room for a new key: the local gateway holds ${LIMIT} API keys, its ${LOCAL_API_KEY_LIMIT_VARIABLE}. ${LIMIT} keys of this table are live. ` +
        'Revoke the keys no client uses (npm run keys -- list --unused 90d), or serve new clients from another cell (docs/architecture.md, Scaling).',
    );
    expect(await keys.list()).toHaveLength(LIMIT);
  });
});

/**
 * An account's API keys as API Gateway keeps them, through aws-sdk-client-mock: CreateApiKey
 * refused with LimitExceededException once it holds `limit`, DeleteApiKey, and GetApiKeys in pages.
 */
const mockedAccount = (apiGateway: APIGatewayClient, limit: number) => {
  const held = new Set<string>();
  let made = 0;
  const mock = mockClient(apiGateway);
  mock.on(CreateApiKeyCommand).callsFake(async () => {
    if (held.size >= limit) throw new LimitExceededException({ message: 'Cannot exceed limit of API keys', $metadata: {} });
    made += 1;
    held.add(`ak-${made}`);
    return { id: `ak-${made}`, enabled: true };
  });
  mock.on(DeleteApiKeyCommand).callsFake(async ({ apiKey }: { apiKey: string }) => {
    if (!held.delete(apiKey)) throw new NotFoundException({ message: 'Invalid API Key identifier specified', $metadata: {} });
    return {};
  });
  mock.on(GetApiKeysCommand).callsFake(async ({ position, limit: pageSize = 25 }: GetApiKeysCommandInput) => {
    const ids = [...held];
    const start = Number(position ?? 0);
    const end = start + pageSize;
    return { items: ids.slice(start, end).map((id) => ({ id })), ...(end < ids.length ? { position: String(end) } : {}) };
  });
  mock.on(CreateUsagePlanKeyCommand).resolves({});
  mock.on(FlushStageAuthorizersCacheCommand).resolves({});
  return { mock, held };
};

describe('on a stage, API keys are deleted when no live key uses them (API Gateway mocked with aws-sdk-client-mock)', () => {
  let apiGateway: APIGatewayClient;
  let account: ReturnType<typeof mockedAccount>;
  let sts: STSClient;
  let cloudFormation: CloudFormationClient;

  beforeEach(() => {
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', tables.endpoint);
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    apiGateway = new APIGatewayClient({ region: 'eu-west-1' });
    account = mockedAccount(apiGateway, LIMIT);
    sts = new STSClient({ region: 'eu-west-1' });
    cloudFormation = new CloudFormationClient({ region: 'eu-west-1' });
    mockClient(sts).on(GetCallerIdentityCommand).resolves({ Arn: ARN });
    mockClient(cloudFormation)
      .on(DescribeStacksCommand)
      .resolves(describedStage(tables, { usagePlanIds: '{"default":"up-default"}', restApiId: 'a1b2c3d4e5' }));
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    account.mock.restore();
  });

  const onStage = (...argv: string[]) =>
    runKeysCommand([...argv, '--stage', 'staging'], { env: {}, print: (line) => lines.push(line), sts, cloudFormation, apiGateway });

  it(`creating and revoking ${3 * LIMIT} keys one after another, in an account that holds ${LIMIT}, leaves the last create working`, async () => {
    for (let round = 1; round <= 3 * LIMIT; round += 1) {
      lines = [];
      expect(await onStage('create', '--name', `round ${round}`, '--json')).toBe(0);
      if (round < 3 * LIMIT) expect(await onStage('revoke', printedId(), '--json')).toBe(0);
    }

    expect([...account.held]).toEqual([`ak-${3 * LIMIT}`]);
    lines = [];
    expect(await onStage('capacity', '--json')).toBe(0);
    expect(lines).toEqual([JSON.stringify({ apiKeys: 1, limit: 10_000, liveKeys: 1, unheldApiKeys: [] })]);
  });

  it('counts no API key for a roll revoked key by key, the new key first: its API key is deleted, and GetApiKeys lists it no more', async () => {
    expect(await onStage('create', '--name', 'rolled', '--json')).toBe(0);
    const old = printedId();
    lines = [];
    expect(await onStage('roll', old, '--json')).toBe(0);
    const successor = printedId();
    expect(await onStage('revoke', successor, '--only-this-key', '--json')).toBe(0);
    expect(await onStage('revoke', old, '--only-this-key', '--json')).toBe(0);
    lines = [];

    expect(await onStage('capacity', '--json')).toBe(0);

    expect([...account.held]).toEqual([]);
    expect(lines).toEqual([JSON.stringify({ apiKeys: 0, limit: 10_000, liveKeys: 0, unheldApiKeys: [] })]);
  });

  it('refuses a create on LimitExceededException in one line (exit status 1), writing nothing; capacity counts the API keys with GetApiKeys in pages of 500', async () => {
    for (let round = 1; round <= LIMIT; round += 1) expect(await onStage('create', '--name', `live ${round}`, '--json')).toBe(0);
    // One more API key made by hand in the console: the account holds it too.
    account.held.delete(`ak-${LIMIT}`);
    account.held.add('ak-console');
    account.held.add(`ak-${LIMIT}`);

    const error = await onStage('create', '--name', 'one too many').catch((thrown: unknown) => thrown);

    expect((error as Error).constructor).toBe(Error);
    expect((error as Error).message).toBe(
      `No room for a new key: this account and region hold 10000 API Gateway API keys, a quota that cannot be raised. ${LIMIT} keys of this table are live. ` +
        'Revoke the keys no client uses (npm run keys -- list --unused 90d), or serve new clients from another cell (docs/architecture.md, Scaling).',
    );
    expect(await keys.list()).toHaveLength(LIMIT);
    lines = [];
    expect(await onStage('capacity')).toBe(0);
    expect(lines).toEqual([
      `API keys: ${LIMIT + 1} of 10000 held in this account and region (every stage, and any made by hand), 0% of the quota; ${LIMIT} keys of this table are live.`,
    ]);
    expect(account.mock.commandCalls(GetApiKeysCommand).map((call) => call.args[0].input.limit)).toEqual([500]);
  });
});

describe('the expiry sweep deletes the usage keys no live key uses any more (DeleteApiKey faked)', () => {
  const NOW = new Date('2030-01-01T12:34:00.000Z');
  const MINUTE = 60_000;
  let deleted: string[];
  let failDeletes: boolean;

  beforeEach(() => {
    deleted = [];
    failDeletes = false;
  });

  const sweep = (at: Date) =>
    createExpirySweep({
      keys,
      now: () => at,
      flushAuthorizerCache: async () => undefined,
      deleteApiKey: async (usageKeyId) => {
        if (failDeletes) throw Object.assign(new Error('Too Many Requests'), { name: 'TooManyRequestsException' });
        deleted.push(usageKeyId);
      },
    })({}, context);
  const usage = (id: string) => ({ usageKeyId: id, usageKey: `${id}-value-0123456789abcdef0123456789` });

  it('after an expiry: the usage key is deleted, the record kept with usageKeyDeletedAt, by the sweep', async () => {
    const record = await keys.register(generateApiKey(), 'expiring', {
      usage: usage('ak-expiring'),
      expiresAt: new Date(NOW.getTime() - MINUTE).toISOString(),
      changedBy: ARN,
    });

    expect(await sweep(NOW)).toEqual({ marked: [record.keyId], usageKeysDeleted: ['ak-expiring'] });

    expect(deleted).toEqual(['ak-expiring']);
    expect(await keys.findById(record.keyId)).toMatchObject({
      usageKeyId: 'ak-expiring',
      usageKeyDeletedAt: NOW.toISOString(),
      changedBy: EXPIRY_SWEEP_ACTOR,
    });
    expect(await keys.usageKeysToRelease()).toEqual([]);
  });

  it("after a roll's grace: kept while the successor lives; after the successor's revoke, a failed delete is retried by the next sweep", async () => {
    const oldKey = generateApiKey();
    const old = await keys.register(oldKey, 'rolled', { usage: usage('ak-shared'), changedBy: ARN });
    const { next } = await keys.roll(old.keyId, generateApiKey(), {
      graceMs: MINUTE,
      changedBy: ARN,
      now: new Date(NOW.getTime() - 2 * MINUTE),
    });

    expect(await sweep(NOW)).toEqual({ marked: [old.keyId], usageKeysDeleted: [] });
    expect(deleted).toEqual([]);
    expect(await keys.usageKeysToRelease()).toEqual([]);

    await keys.revoke(next.keyId, ARN);
    failDeletes = true;
    await expect(sweep(new Date(NOW.getTime() + MINUTE))).rejects.toThrow();
    expect((await keys.usageKeysToRelease()).map((record) => record.keyId)).toEqual([next.keyId]);

    failDeletes = false;
    expect(await sweep(new Date(NOW.getTime() + 2 * MINUTE))).toEqual({ marked: [], usageKeysDeleted: ['ak-shared'] });
    expect(deleted).toEqual(['ak-shared']);
    expect(await keys.usageKeysToRelease()).toEqual([]);
    expect((await keys.findById(next.keyId))?.usageKeyDeletedAt).toBeDefined();
  });

  it('deletes no usage key the item names by hand, not written for it (it may be another key’s)', async () => {
    const victim = await keys.register(generateApiKey(), 'victim', { usage: usage('ak-victim'), changedBy: ARN });
    const other = await keys.register(generateApiKey(), 'other', { usage: usage('ak-other'), changedBy: ARN });
    // The console points the other key's item at the victim's usage key, then the other key is revoked.
    await tables.client.send(
      new (await import('@aws-sdk/lib-dynamodb')).UpdateCommand({
        TableName: tables.apiKeys,
        Key: { keyHash: other.keyHash },
        UpdateExpression: 'SET usageKeyId = :id',
        ExpressionAttributeValues: { ':id': victim.usageKeyId },
      }),
    );
    await keys.revoke(other.keyId, ARN);

    expect(await sweep(NOW)).toEqual({ marked: [], usageKeysDeleted: [] });
    expect(deleted).toEqual([]);
  });
});
