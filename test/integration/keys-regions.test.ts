/**
 * The key tool on a stage in several regions (`global`, its regions from infra/stages.ts): the keys
 * are written in the home region's table (DynamoDB Local); each region's CloudFormation and API
 * Gateway are mocked with aws-sdk-client-mock, as an account's API keys, usage plans and
 * authorizer caches in that region. A key's usage key is one value made an API key in every
 * region, in that region's plan, all or none; revoke deletes each and flushes every region's
 * authorizer cache; the expiry sweep finishes what a failed delete left.
 */
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanKeyCommand,
  FlushStageAuthorizersCacheCommand,
  GetApiKeysCommand,
  GetUsageCommand,
  GetUsagePlanCommand,
  NotFoundException,
  type CreateApiKeyCommandInput,
  type CreateUsagePlanKeyCommandInput,
  type DeleteUsagePlanKeyCommandInput,
  type FlushStageAuthorizersCacheCommandInput,
  type GetApiKeysCommandInput,
  type GetUsageCommandInput,
  type GetUsagePlanCommandInput,
} from '@aws-sdk/client-api-gateway';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHandler as createExpirySweep } from '../../functions/key-expiry';
import { homeRegionOf, stageSettings } from '../../infra/stages';
import { apiKeysRepository, type ApiKeysRepository } from '../../shared/api-keys-repository';
import { DEFAULT_PLAN, meteringOf } from '../../shared/plan-policy';
import { STAGE_NAME } from '../../shared/routes';
import { stackName } from '../../shared/stack';
import { deleteApiKey } from '../../shared/usage-key-release';
import { UsageError } from '../../tools/cli';
import { daysFrom, usageKeyName } from '../../tools/keys/usage-keys';
import { usageDay } from '../../tools/local-server/usage-plans';
import { runKeysCommand } from '../../tools/keys/cli';
import { context } from '../support/events';
import { describedStage } from '../support/stage-stack';
import { createTestTables, type TestTables } from '../support/tables';

const STAGE = 'global';
const settings = stageSettings(STAGE);
const REGIONS = settings.regions ?? [];
const HOME = homeRegionOf(settings) ?? '';
const [, MIDDLE = '', LAST = ''] = REGIONS;
const PLANS = Object.keys(settings.plans);
const OTHER_PLAN = PLANS.find((plan) => plan !== DEFAULT_PLAN) ?? DEFAULT_PLAN;
const ARN = 'arn:aws:sts::123456789012:assumed-role/KeyAdmin/alice';
const TTL = settings.authorizerCacheTtlSeconds;
/** When a change holds in each region: at once at home; elsewhere once replicated and flushed there by its audit function. */
const EFFECT_IN_EVERY_REGION =
  `The change takes effect in ${HOME}, its home region, where it is written, from the next request; ` +
  `in ${REGIONS.filter((region) => region !== HOME).join(', ')} once it has replicated there (usually within a second) and that ` +
  `region's audit function has flushed its cache: at most the stage's authorizer cache TTL (${TTL} s).`;

/** Each region's usage plan of `plan`, and its REST API: ids that name their region, as each region's stack outputs them. */
const usagePlanIdOf = (region: string, plan: string) => `up-${plan}-${region}`;
const restApiIdOf = (region: string) => `api-${region}`;
/** Each region's share of a plan's daily quota, as its usage plan states it. */
const REGION_QUOTA = 333;

/** A refusal as API Gateway sends it, named as its documented exception. */
const refusal = (name: string) => Object.assign(new Error(`${name} for arn:aws:apigateway:secret`), { name, $metadata: {} });

/** One region's API Gateway as an account's: API keys by id (with their values), each in at most one usage plan, and the flushes. */
const regionalAccount = (region: string) => {
  const client = new APIGatewayClient({ region });
  const mock = mockClient(client);
  const held = new Map<string, string>();
  /** The names the API keys were created with. */
  const names = new Map<string, string>();
  const plansOf = new Map<string, string>();
  const flushes: FlushStageAuthorizersCacheCommandInput[] = [];
  const failing = new Set<'create' | 'plan' | 'delete' | 'flush'>();
  /** Requests each API key was let through today, as this region's usage plans metered them. */
  const usedToday = new Map<string, number>();
  let made = 0;
  mock.on(CreateApiKeyCommand).callsFake(async ({ value, name }: CreateApiKeyCommandInput) => {
    if (failing.has('create')) throw refusal('TooManyRequestsException');
    made += 1;
    const id = `${region}-ak-${made}`;
    held.set(id, String(value));
    if (name !== undefined) names.set(id, name);
    return { id, value, enabled: true };
  });
  mock.on(CreateUsagePlanKeyCommand).callsFake(async ({ usagePlanId, keyId }: CreateUsagePlanKeyCommandInput) => {
    if (failing.has('plan')) throw refusal('TooManyRequestsException');
    // A usage plan of another region is no plan here.
    if (!String(usagePlanId).endsWith(region) || !held.has(String(keyId))) throw new NotFoundException({ message: 'no', $metadata: {} });
    plansOf.set(String(keyId), String(usagePlanId));
    return {};
  });
  mock.on(DeleteUsagePlanKeyCommand).callsFake(async ({ usagePlanId, keyId }: DeleteUsagePlanKeyCommandInput) => {
    if (plansOf.get(String(keyId)) !== usagePlanId) throw new NotFoundException({ message: 'no', $metadata: {} });
    plansOf.delete(String(keyId));
    return {};
  });
  mock.on(DeleteApiKeyCommand).callsFake(async ({ apiKey }: { apiKey: string }) => {
    if (failing.has('delete')) throw refusal('TooManyRequestsException');
    if (!held.delete(apiKey)) throw new NotFoundException({ message: 'Invalid API Key identifier specified', $metadata: {} });
    plansOf.delete(apiKey);
    return {};
  });
  mock.on(GetApiKeysCommand).callsFake(async ({ position, limit = 25 }: GetApiKeysCommandInput) => {
    const ids = [...held.keys()];
    const start = Number(position ?? 0);
    return {
      items: ids.slice(start, start + limit).map((id) => ({ id, ...(names.has(id) ? { name: names.get(id) } : {}) })),
      ...(start + limit < ids.length ? { position: String(start + limit) } : {}),
    };
  });
  mock.on(FlushStageAuthorizersCacheCommand).callsFake(async (input: FlushStageAuthorizersCacheCommandInput) => {
    if (failing.has('flush')) throw refusal('AccessDeniedException');
    flushes.push(input);
    return {};
  });
  // Each region's usage plan meters its share of the quota (per day here).
  mock.on(GetUsagePlanCommand).callsFake(async ({ usagePlanId }: GetUsagePlanCommandInput) => {
    if (!String(usagePlanId).endsWith(region)) throw new NotFoundException({ message: 'no', $metadata: {} });
    return { id: usagePlanId, quota: { limit: REGION_QUOTA, period: 'DAY' } };
  });
  // GetUsage's items: per API key of the plan (or the one keyId), one [used, remaining] a day from startDate.
  mock.on(GetUsageCommand).callsFake(async ({ usagePlanId, startDate, endDate, keyId }: GetUsageCommandInput) => {
    if (!String(usagePlanId).endsWith(region)) throw new NotFoundException({ message: 'no', $metadata: {} });
    const days = daysFrom(String(startDate), String(endDate));
    const ids = [...plansOf].filter(([id, plan]) => plan === usagePlanId && (keyId === undefined || id === keyId)).map(([id]) => id);
    const items = Object.fromEntries(
      ids.map((id) => {
        const used = usedToday.get(id) ?? 0;
        return [id, days.map((day) => (day === endDate ? [used, REGION_QUOTA - used] : [0, REGION_QUOTA]))];
      }),
    );
    return { usagePlanId, startDate, endDate, items };
  });
  return { region, client, mock, held, names, plansOf, flushes, failing, usedToday };
};
type RegionalAccount = ReturnType<typeof regionalAccount>;

let tables: TestTables;
let keys: ApiKeysRepository;
let lines: string[];
let accounts: Map<string, RegionalAccount>;
let cloudFormations: Map<string, CloudFormationClient>;
let sts: STSClient;

const account = (region: string): RegionalAccount => {
  const found = accounts.get(region);
  if (!found) throw new Error(`no account in ${region}`);
  return found;
};

beforeEach(async () => {
  tables = await createTestTables();
  keys = apiKeysRepository({ client: tables.client, tables });
  lines = [];
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', tables.endpoint);
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
  accounts = new Map(REGIONS.map((region) => [region, regionalAccount(region)]));
  cloudFormations = new Map(
    REGIONS.map((region) => {
      const client = new CloudFormationClient({ region });
      const usagePlanIds = Object.fromEntries(PLANS.map((plan) => [plan, usagePlanIdOf(region, plan)]));
      mockClient(client)
        .on(DescribeStacksCommand)
        .resolves(describedStage(tables, { usagePlanIds: JSON.stringify(usagePlanIds), restApiId: restApiIdOf(region) }, STAGE));
      return [region, client];
    }),
  );
  sts = new STSClient({ region: HOME });
  mockClient(sts).on(GetCallerIdentityCommand).resolves({ Arn: ARN });
});
afterEach(() => {
  vi.unstubAllEnvs();
  for (const { mock } of accounts.values()) mock.restore();
});

const onStage = (...argv: string[]) =>
  runKeysCommand([...argv, '--stage', STAGE], {
    env: {},
    print: (line) => lines.push(line),
    sts,
    cloudFormationIn: (region) => {
      const client = cloudFormations.get(region);
      if (!client) throw new Error(`no CloudFormation in ${region}`);
      return client;
    },
    apiGatewayIn: (region) => account(region).client,
  });
const failureOf = (...argv: string[]) =>
  onStage(...argv).then(
    () => undefined,
    (thrown: unknown) => thrown as Error,
  );

/** A key created on the stage with --json: its record. */
const created = async (plan = DEFAULT_PLAN) => {
  lines = [];
  expect(await onStage('create', '--name', 'client', '--plan', plan, '--json')).toBe(0);
  const { id } = JSON.parse(lines[0] ?? '{}') as { id: string };
  const record = await keys.findById(id);
  if (!record) throw new Error('no record');
  lines = [];
  return record;
};

const apiKeysHeld = () => Object.fromEntries(REGIONS.map((region) => [region, [...account(region).held.keys()]]));
const flushedRegions = () => REGIONS.filter((region) => account(region).flushes.length > 0);

describe(`create on stage ${STAGE} (in ${REGIONS.join(', ')})`, () => {
  it('makes one API key in every region, all of one value, each in that region’s usage plan of the key’s plan, and the item names each', async () => {
    const record = await created(OTHER_PLAN);

    const values = REGIONS.map((region) => [...account(region).held.values()]);
    expect(values.map((held) => held.length)).toEqual(REGIONS.map(() => 1));
    expect(new Set(values.flat()).size).toBe(1);
    for (const region of REGIONS) {
      const [id] = account(region).held.keys();
      expect(account(region).plansOf.get(id ?? '')).toBe(usagePlanIdOf(region, OTHER_PLAN));
    }
    const idIn = (region: string) => [...account(region).held.keys()][0];
    expect(record.usageKeyId).toBe(idIn(HOME));
    expect(record.regionUsageKeyIds).toEqual(
      Object.fromEntries(REGIONS.filter((region) => region !== HOME).map((region) => [region, idIn(region)])),
    );
    // The authorizer meters it by that value, which every region's API key has.
    // show --json names each region's id, as a break-glass suspension in a region needs it.
    lines = [];
    expect(await onStage('show', record.keyId, '--json')).toBe(0);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({ usageKeyId: record.usageKeyId, regionUsageKeyIds: record.regionUsageKeyIds });
    expect(Object.keys(record.regionUsageKeyIds ?? {})).toEqual(REGIONS.filter((region) => region !== HOME));
    expect(meteringOf(record)).toMatchObject({ usageKeyId: idIn(HOME), usageIdentifierKey: values[0]?.[0], plan: OTHER_PLAN });
  });

  it.each([
    ['its CreateApiKey', LAST, 'create' as const, `API Gateway refused to create an API key in ${LAST} (TooManyRequestsException).`],
    [
      'its CreateUsagePlanKey',
      MIDDLE,
      'plan' as const,
      `API Gateway refused to put the new API key in plan ${DEFAULT_PLAN} in ${MIDDLE} (TooManyRequestsException).`,
    ],
  ])(
    'leaves nothing when one region refuses %s: the others’ API keys deleted, no key item, one line naming the region',
    async (_, region, step, refused) => {
      account(region).failing.add(step);

      const error = await failureOf('create', '--name', 'client');

      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(UsageError);
      const madeIn = REGIONS.slice(0, REGIONS.indexOf(region)).join(', ');
      expect(error?.message).toBe(`${refused} No key was created: its API keys made in ${madeIn} were deleted.`);
      expect(apiKeysHeld()).toEqual(Object.fromEntries(REGIONS.map((other) => [other, []])));
      expect(await keys.list()).toEqual([]);
      expect(lines).toEqual([]);
    },
  );

  it('refuses a write with --region other than the home region in one line, reaching nothing', async () => {
    const error = await failureOf('create', '--name', 'client', '--region', MIDDLE);
    expect(error).toBeInstanceOf(UsageError);
    expect(error?.message).toBe(
      `Stage ${STAGE} writes its keys in its home region, ${HOME}, not in ${MIDDLE}: leave out --region (or give --region ${HOME}).`,
    );
    expect(apiKeysHeld()).toEqual(Object.fromEntries(REGIONS.map((region) => [region, []])));
  });
});

describe(`revoke on stage ${STAGE}`, () => {
  it('deletes the API key in every region, records the deletion, and flushes every region’s authorizer cache, naming the regions', async () => {
    const record = await created();
    const ids = [record.usageKeyId, ...REGIONS.filter((region) => region !== HOME).map((region) => record.regionUsageKeyIds?.[region])];

    expect(await onStage('revoke', record.keyId)).toBe(0);

    expect(apiKeysHeld()).toEqual(Object.fromEntries(REGIONS.map((region) => [region, []])));
    expect((await keys.findById(record.keyId))?.usageKeyDeletedAt).toBeDefined();
    expect(await keys.usageKeysToRelease()).toEqual([]);
    for (const region of REGIONS) expect(account(region).flushes).toEqual([{ restApiId: restApiIdOf(region), stageName: STAGE_NAME }]);
    expect(lines).toEqual([
      `Revoked key ${record.keyId}. Callers using it are refused.`,
      `Its API Gateway API keys are deleted in every region: ${REGIONS.map((region, index) => `${ids[index]} in ${region}`).join(', ')}.`,
      `Flushed the authorizer cache of stage ${STAGE} in ${REGIONS.join(', ')}. ${EFFECT_IN_EVERY_REGION}`,
    ]);
  });

  it('names the regions whose cache it reached and those it did not, with the reason in words, and exits 1; the revoke holds', async () => {
    const record = await created();
    account(MIDDLE).failing.add('flush');

    const error = await failureOf('revoke', record.keyId);

    expect(error?.message).toBe(
      `The change is stored. Flushed the authorizer cache of stage ${STAGE} in ${REGIONS.filter((region) => region !== MIDDLE).join(', ')}; ` +
        `not in ${MIDDLE} (API Gateway refused the flush (AccessDeniedException)): there it takes effect when that region's audit function ` +
        `flushes its cache as the change reaches its replica, else within the stage's authorizer cache TTL (${TTL} s). Flush it there now: ` +
        `aws apigateway flush-stage-authorizers-cache --rest-api-id <its RestApiId output> --stage-name ${STAGE_NAME} --region <region>`,
    );
    expect(error?.message).not.toMatch(/arn:|\n/);
    expect(flushedRegions()).toEqual(REGIONS.filter((region) => region !== MIDDLE));
    expect((await keys.findById(record.keyId))?.revokedAt).toBeDefined();
  });

  it('revokes and deletes everywhere while a region’s CloudFormation does not answer, naming that region as not flushed', async () => {
    const record = await created();
    const timeout = Object.assign(new Error('socket hang up'), { name: 'TimeoutError', code: 'ETIMEDOUT', $metadata: {} });
    mockClient(cloudFormations.get(MIDDLE) ?? new CloudFormationClient({}))
      .on(DescribeStacksCommand)
      .rejects(timeout);

    const error = await failureOf('revoke', record.keyId);

    expect(error?.message).toMatch(
      new RegExp(
        `; not in ${MIDDLE} \\(CloudFormation could not describe stack ${stackName(STAGE)} \\(ETIMEDOUT\\)\\): there it takes effect`,
      ),
    );
    expect(flushedRegions()).toEqual(REGIONS.filter((region) => region !== MIDDLE));
    expect(apiKeysHeld()).toEqual(Object.fromEntries(REGIONS.map((region) => [region, []])));
    expect((await keys.findById(record.keyId))?.usageKeyDeletedAt).toBeDefined();
  });

  it('keeps a key whose delete failed in one region in the release index, and the expiry sweep deletes it there', async () => {
    const record = await created();
    account(LAST).failing.add('delete');

    expect(await onStage('revoke', record.keyId)).toBe(0);

    expect(lines[1]).toBe(
      `API Gateway refused to delete the API key ${record.regionUsageKeyIds?.[LAST]} in ${LAST} (TooManyRequestsException): the expiry sweep deletes it within a minute.`,
    );
    expect(apiKeysHeld()).toEqual(
      Object.fromEntries(REGIONS.map((region) => [region, region === LAST ? [record.regionUsageKeyIds?.[LAST]] : []])),
    );
    expect((await keys.usageKeysToRelease()).map(({ keyId }) => keyId)).toEqual([record.keyId]);
    expect((await keys.findById(record.keyId))?.usageKeyDeletedAt).toBeUndefined();

    const sweep = createExpirySweep({
      keys,
      regions: REGIONS,
      flushAuthorizerCache: async () => undefined,
      // As deployed in the home region: DeleteApiKey with that region's client, its own for the home one.
      deleteApiKey: (usageKeyId, region) => deleteApiKey(account(region ?? HOME).client, usageKeyId),
    });
    // Still refused: the key stays for the next sweep, the run fails naming the region.
    await expect(sweep({}, context)).rejects.toThrow();
    expect((await keys.usageKeysToRelease()).map(({ keyId }) => keyId)).toEqual([record.keyId]);

    account(LAST).failing.delete('delete');
    expect(await sweep({}, context)).toMatchObject({ usageKeysDeleted: [record.usageKeyId] });
    expect(apiKeysHeld()).toEqual(Object.fromEntries(REGIONS.map((region) => [region, []])));
    expect((await keys.findById(record.keyId))?.usageKeyDeletedAt).toBeDefined();
    expect(await keys.usageKeysToRelease()).toEqual([]);
  });
});

describe(`set-plan and roll on stage ${STAGE}`, () => {
  it('moves the API key to the new plan in every region, and flushes every region', async () => {
    const record = await created();

    expect(await onStage('set-plan', record.keyId, OTHER_PLAN)).toBe(0);

    expect(lines.at(-1)).toBe(`Flushed the authorizer cache of stage ${STAGE} in ${REGIONS.join(', ')}. ${EFFECT_IN_EVERY_REGION}`);
    for (const region of REGIONS) {
      const [id] = account(region).held.keys();
      expect(account(region).plansOf.get(id ?? '')).toBe(usagePlanIdOf(region, OTHER_PLAN));
    }
    expect(flushedRegions()).toEqual(REGIONS);
    expect((await keys.findById(record.keyId))?.plan).toBe(OTHER_PLAN);
  });

  it('moves it back where it moved when one region refuses, naming that region, and keeps the plan', async () => {
    const record = await created();
    account(LAST).failing.add('plan');

    const error = await failureOf('set-plan', record.keyId, OTHER_PLAN);

    expect(error?.message).toBe(
      `API Gateway refused to put the API key ${record.regionUsageKeyIds?.[LAST]} in plan ${OTHER_PLAN} in ${LAST}, nor back in plan ${DEFAULT_PLAN}: ` +
        `add it there in the console (TooManyRequestsException). Its API keys in ${REGIONS.filter((region) => region !== LAST).join(', ')} are back on plan ${DEFAULT_PLAN}.`,
    );
    for (const region of REGIONS.filter((other) => other !== LAST)) {
      const [id] = account(region).held.keys();
      expect(account(region).plansOf.get(id ?? '')).toBe(usagePlanIdOf(region, DEFAULT_PLAN));
    }
    expect((await keys.findById(record.keyId))?.plan).toBe(DEFAULT_PLAN);
  });

  it('gives the successor of a roll the same API key in every region, making none', async () => {
    const record = await created();

    expect(await onStage('roll', record.keyId, '--json')).toBe(0);

    const { id } = JSON.parse(lines[0] ?? '{}') as { id: string };
    const next = await keys.findById(id);
    expect(next).toMatchObject({ usageKeyId: record.usageKeyId, regionUsageKeyIds: record.regionUsageKeyIds });
    expect(next && meteringOf(next)).toMatchObject({ usageKeyId: record.usageKeyId, regionUsageKeyIds: record.regionUsageKeyIds });
    expect(Object.values(apiKeysHeld()).map((held) => held.length)).toEqual(REGIONS.map(() => 1));
  });
});

describe(`usage on stage ${STAGE}`, () => {
  /** Requests the key's API key was let through today in each region. */
  const usedIn = (region: string) => (region === HOME ? 10 : region === MIDDLE ? 2 : 0);
  const total = REGIONS.reduce((sum, region) => sum + usedIn(region), 0);
  const meterToday = (record: Awaited<ReturnType<typeof created>>) => {
    for (const region of REGIONS) {
      const id = region === HOME ? record.usageKeyId : record.regionUsageKeyIds?.[region];
      account(region).usedToday.set(id ?? '', usedIn(region));
    }
  };

  it("sums a key's requests and what remains of its quota over every region, with each region's column and share", async () => {
    const record = await created();
    meterToday(record);
    const today = usageDay(Date.now());

    expect(await onStage('usage', record.keyId, '--days', '1')).toBe(0);

    const [header, row, ...rest] = lines;
    expect(header?.split(/\s+/)).toEqual(['day', 'requests', ...REGIONS]);
    expect(row?.split(/\s+/)).toEqual([today, String(total), ...REGIONS.map((region) => String(usedIn(region)))]);
    expect(rest).toEqual([
      `remaining: ${REGIONS.length * REGION_QUOTA - total} of ${REGIONS.length * REGION_QUOTA} this DAY (plan ${DEFAULT_PLAN}), every region together`,
      ...REGIONS.map((region) => `  in ${region}: ${REGION_QUOTA - usedIn(region)} of ${REGION_QUOTA} this DAY`),
    ]);
  });

  it('gives the sum and each region’s report with --json', async () => {
    const record = await created();
    meterToday(record);

    expect(await onStage('usage', record.keyId, '--days', '1', '--json')).toBe(0);

    const today = usageDay(Date.now());
    expect(JSON.parse(lines[0] ?? '')).toEqual({
      id: record.keyId,
      plan: DEFAULT_PLAN,
      days: [{ day: today, requests: total }],
      quota: { limit: REGIONS.length * REGION_QUOTA, period: 'DAY', remaining: REGIONS.length * REGION_QUOTA - total },
      regions: REGIONS.map((region) => ({
        region,
        days: [{ day: today, requests: usedIn(region) }],
        quota: { limit: REGION_QUOTA, period: 'DAY', remaining: REGION_QUOTA - usedIn(region) },
      })),
    });
  });

  it('lists each key’s requests today summed over every region, with each region’s, in text and in JSON', async () => {
    const record = await created();
    meterToday(record);

    expect(await onStage('list', '--usage')).toBe(0);
    expect(await onStage('list', '--usage', '--json')).toBe(0);

    const perRegion = REGIONS.map((region) => `${region} ${usedIn(region)}`).join(', ');
    expect(lines[1]?.split('\t').at(-1)).toBe(`${total} (${perRegion})`);
    expect(JSON.parse(lines[2] ?? '')).toMatchObject({
      id: record.keyId,
      usedToday: total,
      usedTodayByRegion: Object.fromEntries(REGIONS.map((region) => [region, usedIn(region)])),
    });
  });
});

describe(`capacity on stage ${STAGE}`, () => {
  it('counts the API keys of each region against that region’s quota, in text and in JSON', async () => {
    await created();
    // One more made by hand in the last region's console.
    account(LAST).held.set('console-made', 'value');

    expect(await onStage('capacity')).toBe(0);
    expect(await onStage('capacity', '--json')).toBe(0);

    const countIn = (region: string) => (region === LAST ? 2 : 1);
    expect(lines).toEqual([
      ...REGIONS.map(
        (region) =>
          `API keys in ${region}: ${countIn(region)} of 10000 held in this account and region (every stage, and any made by hand), 0% of the quota.`,
      ),
      '1 keys of this table are live; each holds an API key in every region.',
      JSON.stringify({
        apiKeys: 2,
        apiKeysByRegion: Object.fromEntries(REGIONS.map((region) => [region, countIn(region)])),
        limit: 10_000,
        liveKeys: 1,
        unheldApiKeys: [],
      }),
    ]);
  });

  it('reports the API keys a create stopped between regions left, which no key holds, with how to delete them', async () => {
    const record = await created();
    // A create killed after its API keys in the first two regions, before its last region and its item.
    const strayKeyId = 'abcdef012345';
    const strays = [HOME, MIDDLE].map((region) => {
      const id = `stray-${region}`;
      account(region).held.set(id, 'value');
      account(region).names.set(id, usageKeyName(STAGE, strayKeyId));
      return { region, id, name: usageKeyName(STAGE, strayKeyId) };
    });
    // Another stage's, and one made by hand, are not this stage's to report.
    account(LAST).held.set('other-stage', 'value');
    account(LAST).names.set('other-stage', usageKeyName(`${STAGE}-eu`, strayKeyId));
    account(LAST).held.set('by-hand', 'value');
    account(LAST).names.set('by-hand', 'partner test key');

    expect(await onStage('capacity')).toBe(0);
    const text = lines.slice(REGIONS.length + 1);
    lines = [];
    expect(await onStage('capacity', '--json')).toBe(0);

    expect(text).toEqual([
      "2 API keys named as this stage's usage keys are held by no key (left by a create stopped part-way); each counts against its region until deleted:",
      ...strays.map(({ region, id, name }) => `  ${id} (${name}) in ${region}`),
      'Delete each once no create is running (run capacity again then): aws apigateway delete-api-key --api-key ID --region REGION',
    ]);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      liveKeys: 1,
      unheldApiKeys: strays.map(({ region, id, name }) => ({ id, name, region })),
    });
    // The key's own API keys, named as the strays are, are held: not reported.
    expect(JSON.stringify(JSON.parse(lines[0] ?? ''))).not.toContain(record.usageKeyId);
  });
});

describe('a key item changed by hand in a stage of several regions', () => {
  it('is refused (its binding no longer matches) when its region ids are another key’s, and no release deletes them', async () => {
    const victim = await created();
    const other = await created();
    const { UpdateCommand } = await import('@aws-sdk/lib-dynamodb');
    await tables.client.send(
      new UpdateCommand({
        TableName: tables.apiKeys,
        Key: { keyHash: other.keyHash },
        UpdateExpression: 'SET regionUsageKeyIds = :ids',
        ExpressionAttributeValues: { ':ids': victim.regionUsageKeyIds },
      }),
    );
    const edited = await keys.findById(other.keyId);
    expect(edited && meteringOf(edited)).toEqual({ refused: 'usage-key-mismatch' });

    expect(await onStage('revoke', other.keyId)).toBe(0);

    for (const region of REGIONS.filter((region) => region !== HOME)) {
      expect(account(region).held.has(victim.regionUsageKeyIds?.[region] ?? '')).toBe(true);
    }
  });
});
