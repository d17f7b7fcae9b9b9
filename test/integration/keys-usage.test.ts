/**
 * `npm run keys -- usage` and `list --usage` on a deployed stage: API Gateway's GetUsage and
 * GetUsagePlan mocked with aws-sdk-client-mock in the shapes AWS documents (items: per API key id,
 * one [used, remaining] a day from startDate; pages joined by position), the keys table on the
 * run's DynamoDB Local; and the refusals, as npm run keys gives them.
 */
import { APIGatewayClient, GetUsageCommand, GetUsagePlanCommand, type GetUsageCommandInput } from '@aws-sdk/client-api-gateway';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { generateApiKey } from '../../shared/api-keys';
import { apiKeysRepository, type ApiKeyRecord, type ApiKeysRepository } from '../../shared/api-keys-repository';
import { UsageError } from '../../tools/cli';
import { runKeysCommand } from '../../tools/keys/cli';
import { expectOneLineFailure, runInProcess } from '../support/command';
import { createTestTables, type TestTables } from '../support/tables';
import { describedStage } from '../support/stage-stack';

const DAY_MS = 86_400_000;
const USAGE_PLAN_IDS = { default: 'up-default', partner: 'up-partner' };
/** The UTC day `back` days before today, as GetUsage names days. */
const dayBefore = (back: number): string => new Date(Date.now() - back * DAY_MS).toISOString().slice(0, 10);

let tables: TestTables;
let keys: ApiKeysRepository;
let lines: string[];
let apiGateway: APIGatewayClient;
let cloudFormation: CloudFormationClient;
let apiGatewayMock: ReturnType<typeof mockClient>;
let cloudFormationMock: ReturnType<typeof mockClient>;

beforeEach(async () => {
  tables = await createTestTables();
  keys = apiKeysRepository({ client: tables.client, tables });
  lines = [];
  // "AWS" is the run's DynamoDB Local, through the SDK's own endpoint setting.
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', tables.endpoint);
  vi.stubEnv('AWS_REGION', 'eu-west-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
  apiGateway = new APIGatewayClient({ region: 'eu-west-1' });
  cloudFormation = new CloudFormationClient({ region: 'eu-west-1' });
  apiGatewayMock = mockClient(apiGateway);
  cloudFormationMock = mockClient(cloudFormation);
  cloudFormationMock.on(DescribeStacksCommand).resolves(describedStage(tables, { usagePlanIds: JSON.stringify(USAGE_PLAN_IDS) }));
  apiGatewayMock.on(GetUsagePlanCommand, { usagePlanId: 'up-default' }).resolves({
    id: 'up-default',
    name: 'pet-store-staging-default',
    quota: { limit: 1000, offset: 0, period: 'DAY' },
  });
  apiGatewayMock.on(GetUsagePlanCommand, { usagePlanId: 'up-partner' }).resolves({
    id: 'up-partner',
    name: 'pet-store-staging-partner',
    quota: { limit: 5000, offset: 0, period: 'MONTH' },
  });
});
afterEach(() => {
  vi.unstubAllEnvs();
  apiGatewayMock.restore();
  cloudFormationMock.restore();
});

const onStage = (...argv: string[]) =>
  runKeysCommand([...argv, '--stage', 'staging'], { env: {}, print: (line) => lines.push(line), cloudFormation, apiGateway });

/** A key on `plan`, metered by the API Gateway API key `usageKeyId`. */
const keyOn = (plan: string, usageKeyId: string): Promise<ApiKeyRecord> =>
  keys.register(generateApiKey(), `client-${usageKeyId}`, {
    changedBy: 'local:test',
    plan,
    usage: { usageKeyId, usageKey: usageKeyId.padEnd(40, '0') },
  });

const getUsageCalls = (): GetUsageCommandInput[] =>
  apiGatewayMock.commandCalls(GetUsageCommand).map((call) => call.args[0].input as GetUsageCommandInput);

describe('usage KEY_ID on a stage (GetUsage, mocked)', () => {
  it("prints the key's requests per day and what remains of its plan's quota today, from one GetUsage of its API key", async () => {
    const record = await keyOn('default', 'ak-1');
    apiGatewayMock.on(GetUsageCommand).resolves({
      usagePlanId: 'up-default',
      startDate: dayBefore(2),
      endDate: dayBefore(0),
      items: {
        'ak-1': [
          [5, 995],
          [0, 1000],
          [12, 988],
        ],
      },
    });

    expect(await onStage('usage', record.keyId, '--days', '3')).toBe(0);

    expect(getUsageCalls()).toEqual([{ usagePlanId: 'up-default', keyId: 'ak-1', startDate: dayBefore(2), endDate: dayBefore(0) }]);
    expect(lines).toEqual([
      'day         requests',
      `${dayBefore(2)}  5`,
      `${dayBefore(1)}  0`,
      `${dayBefore(0)}  12`,
      'remaining: 988 of 1000 this DAY (plan default)',
    ]);
  });

  it('prints the exact JSON: id, plan, each day, and the quota with what remains', async () => {
    const record = await keyOn('default', 'ak-1');
    apiGatewayMock.on(GetUsageCommand).resolves({
      items: {
        'ak-1': [
          [7, 993],
          [3, 990],
        ],
      },
    });

    expect(await onStage('usage', record.keyId, '--days', '2', '--json')).toBe(0);

    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toEqual({
      id: record.keyId,
      plan: 'default',
      days: [
        { day: dayBefore(1), requests: 7 },
        { day: dayBefore(0), requests: 3 },
      ],
      quota: { limit: 1000, period: 'DAY', remaining: 990 },
    });
  });

  it('shows 7 days by default, with 0 a day and the whole quota left for a key GetUsage has no items for', async () => {
    const record = await keyOn('default', 'ak-idle');
    apiGatewayMock.on(GetUsageCommand).resolves({ usagePlanId: 'up-default', items: {} });

    expect(await onStage('usage', record.keyId, '--json')).toBe(0);

    expect(getUsageCalls()).toEqual([{ usagePlanId: 'up-default', keyId: 'ak-idle', startDate: dayBefore(6), endDate: dayBefore(0) }]);
    expect(JSON.parse(lines[0] ?? '')).toEqual({
      id: record.keyId,
      plan: 'default',
      days: [6, 5, 4, 3, 2, 1, 0].map((back) => ({ day: dayBefore(back), requests: 0 })),
      quota: { limit: 1000, period: 'DAY', remaining: 1000 },
    });
  });

  it('follows GetUsage pages by position until the key is found', async () => {
    const record = await keyOn('default', 'ak-2');
    const pages = [{ items: { 'ak-other': [[40, 960]] }, position: 'page-2' }, { items: { 'ak-2': [[9, 991]] } }];
    // The positions asked, as sent (the paginator reuses its input object from page to page).
    const positions: Array<string | undefined> = [];
    apiGatewayMock.on(GetUsageCommand).callsFake(async (input: GetUsageCommandInput) => {
      positions.push(input.position);
      return pages[positions.length - 1];
    });

    expect(await onStage('usage', record.keyId, '--days', '1')).toBe(0);

    expect(positions).toEqual([undefined, 'page-2']);
    expect(lines).toEqual(['day         requests', `${dayBefore(0)}  9`, 'remaining: 991 of 1000 this DAY (plan default)']);
  });

  it("asks from the first day of a MONTH quota's period, so that what remains counts the whole month", async () => {
    const record = await keyOn('partner', 'ak-3');
    const today = dayBefore(0);
    const monthStart = `${today.slice(0, 8)}01`;
    const daysSoFar = Number(today.slice(8, 10));
    // One entry a day from the month's first: 2 requests each, today's remaining as API Gateway counts it.
    const entries = Array.from({ length: daysSoFar }, (_, index) => [2, 5000 - 2 * (index + 1)]);
    apiGatewayMock.on(GetUsageCommand).resolves({ items: { 'ak-3': entries } });

    expect(await onStage('usage', record.keyId, '--days', '1')).toBe(0);

    expect(getUsageCalls()).toEqual([{ usagePlanId: 'up-partner', keyId: 'ak-3', startDate: monthStart, endDate: today }]);
    expect(lines).toEqual(['day         requests', `${today}  2`, `remaining: ${5000 - 2 * daysSoFar} of 5000 this MONTH (plan partner)`]);
  });

  it('names an API Gateway refusal by its name only, never quoting its message, and exits 1', async () => {
    const record = await keyOn('default', 'ak-1');
    apiGatewayMock.on(GetUsageCommand).rejects(
      Object.assign(new Error(`User is not authorized on usage plan up-default of table ${tables.apiKeys}`), {
        name: 'AccessDeniedException',
        $metadata: { httpStatusCode: 403 },
      }),
    );

    const error = await onStage('usage', record.keyId).catch((thrown: unknown) => thrown as Error);

    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe('API Gateway refused to give the usage of plan default (AccessDeniedException).');
    expect(lines).toEqual([]);
  });

  it('refuses usage with --table alone (no stage, so no usage plans) in one line, as a UsageError', async () => {
    const record = await keyOn('default', 'ak-1');
    const error = await runKeysCommand(['usage', record.keyId, '--table', tables.apiKeys], {
      env: {},
      print: (line) => lines.push(line),
      apiGateway,
    }).catch((thrown: unknown) => thrown as Error);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/^plans on AWS are the stage's usage plans: give --stage STAGE/);
    expect(apiGatewayMock.calls()).toHaveLength(0);
  });
});

describe('list --usage on a stage (GetUsage, mocked)', () => {
  it("makes one GetUsage per plan, for every API key of the plan at once, and shows each key's requests today", async () => {
    const first = await keyOn('default', 'ak-a');
    const second = await keyOn('default', 'ak-b');
    const partner = await keyOn('partner', 'ak-c');
    const idle = await keyOn('default', 'ak-idle');
    apiGatewayMock.on(GetUsageCommand, { usagePlanId: 'up-default' }).resolves({ items: { 'ak-a': [[11, 989]], 'ak-b': [[4, 996]] } });
    apiGatewayMock.on(GetUsageCommand, { usagePlanId: 'up-partner' }).resolves({ items: { 'ak-c': [[250, 4750]] } });

    expect(await onStage('list', '--usage', '--json')).toBe(0);

    const today = dayBefore(0);
    expect(getUsageCalls().sort((a, b) => String(a.usagePlanId).localeCompare(String(b.usagePlanId)))).toEqual([
      { usagePlanId: 'up-default', startDate: today, endDate: today },
      { usagePlanId: 'up-partner', startDate: today, endDate: today },
    ]);
    const usedToday = Object.fromEntries(
      lines.map((line) => JSON.parse(line) as { id: string; usedToday: number | null }).map(({ id, usedToday }) => [id, usedToday]),
    );
    expect(usedToday).toEqual({ [first.keyId]: 11, [second.keyId]: 4, [partner.keyId]: 250, [idle.keyId]: 0 });
  });

  it("adds a today column to the text listing, '-' for a key on a plan the stage does not have", async () => {
    const metered = await keyOn('default', 'ak-a');
    const elsewhere = await keyOn('gold', 'ak-g');
    apiGatewayMock.on(GetUsageCommand).resolves({ items: { 'ak-a': [[3, 997]] } });

    expect(await onStage('list', '--usage')).toBe(0);

    expect(getUsageCalls()).toHaveLength(1);
    expect(lines[0]).toBe('id\tname\tscopes\tcreated\texpires\tlast used\tstate\tplan\ttoday');
    const todayOf = (keyId: string) =>
      lines
        .find((line) => line.startsWith(`${keyId}\t`))
        ?.split('\t')
        .at(-1);
    expect(todayOf(metered.keyId)).toBe('3');
    expect(todayOf(elsewhere.keyId)).toBe('-');
  });

  it('makes no usage call without --usage', async () => {
    await keyOn('default', 'ak-a');
    expect(await onStage('list')).toBe(0);
    expect(getUsageCalls()).toEqual([]);
    expect(lines[0]).toBe('id\tname\tscopes\tcreated\texpires\tlast used\tstate\tplan');
  });
});

describe('usage refusals, as npm run keys gives them', () => {
  const local = () => ({
    DYNAMODB_ENDPOINT: tables.endpoint,
    API_KEYS_TABLE_NAME: tables.apiKeys,
    API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
  });
  /** The command as npm run keys shows it, run in this process (the script's wiring has its tests in keys-cli). */
  const keysCommand = (...argv: string[]) => runInProcess('npm run keys', ({ print }) => runKeysCommand(argv, { env: local(), print }));
  const run = (...argv: string[]) =>
    runKeysCommand(argv, { env: local(), print: (line) => lines.push(line) }).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );

  it.each([['0'], ['91'], ['7d'], ['-1'], ['']])('refuses --days %j as a UsageError of one line', async (days) => {
    const error = await run('usage', 'ffffffffffff', `--days=${days}`);
    expect(error).toBeInstanceOf(UsageError);
    expect(error?.message).toBe('--days takes a whole number of days from 1 to 90.');
  });

  it('refuses --days on another command, and --usage on usage', async () => {
    expect((await run('show', 'ffffffffffff', '--days', '3'))?.message).toMatch(/^show does not take --days: its options are --json/);
    expect((await run('usage', 'ffffffffffff', '--usage'))?.message).toMatch(
      /^usage does not take --usage: its options are --days, --json/,
    );
    expect((await run('usage'))?.message).toBe('usage needs a key id (see: npm run keys -- list).');
  });

  it('refuses an id no key has in one line, and exits 2', async () => {
    const result = await keysCommand('usage', 'ffffffffffff');
    expect(expectOneLineFailure(result, { status: 2 })).toBe(
      'npm run keys: No key has the id ffffffffffff (npm run keys -- list shows them).',
    );
  });

  it('refuses a bad --days in one line, and exits 2', async () => {
    const result = await keysCommand('usage', 'ffffffffffff', '--days', '365');
    expect(expectOneLineFailure(result, { status: 2 })).toBe('npm run keys: --days takes a whole number of days from 1 to 90.');
  });
});
