/**
 * The region tool (`npm run region`), against the real DynamoDB Local: a local idempotency table,
 * and a deployed stage's table reached "through" one region by a stand-in that records the region
 * asked and points at DynamoDB Local. Who the caller is on AWS comes from AWS STS, mocked with
 * aws-sdk-client-mock: there is no AWS account here.
 */
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { userInfo } from 'node:os';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { databaseReadableAlarmNameOf } from '../../infra/constructs/names';
import { homeRegionOf, isMultiRegion, stageSettings, stages } from '../../infra/stages';
import { databaseHealth, RegionDrained } from '../../shared/database-health';
import { idempotencyRecords } from '../../shared/idempotency-records';
import { regionSwitchKey } from '../../shared/region-switch';
import { deployedTableName, stageResourcePrefix } from '../../shared/stack';
import { idempotencyTable, tableDefinitions } from '../../shared/tables';
import { UsageError } from '../../tools/cli';
import { ensureTables, freePort, LOCAL_TOOL_REQUEST_TIMEOUT_MS } from '../../tools/dynamodb-local';
import { runRegionCommand, USAGE, type RegionCommandOptions } from '../../tools/region/cli';
import { expectOneLineFailure, npmRun } from '../support/command';
import { createTestTables, type TestTables } from '../support/tables';
import { databaseClient } from '../support/database';

/** A stage in several regions, its regions in order, its home first; and a stage in one region. */
const MULTI = Object.keys(stages).find((stage) => isMultiRegion(stageSettings(stage))) ?? '';
const REGIONS = stageSettings(MULTI).regions ?? [];
const HOME = homeRegionOf(stageSettings(MULTI)) ?? '';
const SINGLE = Object.keys(stages).find((stage) => !isMultiRegion(stageSettings(stage))) ?? '';
/** A region of the stage that is not its home (us-east-1 for the global stage): the one drained here. */
const REGION = REGIONS.at(-1) ?? '';
const OTHER = REGIONS.find((region) => region !== HOME && region !== REGION) ?? '';
const LOCAL_ACTOR = `local:${userInfo().username}`;
const CALLER_ARN = 'arn:aws:sts::111111111111:assumed-role/operator/alice';

let tables: TestTables;
beforeAll(async () => {
  // All of them: the health check the tool drains reads the pets and keys tables too.
  tables = await createTestTables();
});

/** Runs the tool on this file's local table, collecting what it prints. */
const local = async (...argv: string[]) => {
  const lines: string[] = [];
  const code = await runRegionCommand(argv, {
    env: { DYNAMODB_ENDPOINT: tables.endpoint, [idempotencyTable.nameVariable]: tables.idempotency },
    print: (line) => lines.push(line),
  });
  return { code, lines };
};

/** What the tool threw, checked to be one line. */
const refusal = async (run: Promise<unknown>): Promise<Error> => {
  const error = await run.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).not.toContain('\n');
  return error as Error;
};

const switchOf = async (tableName: string, region: string) =>
  (await tables.client.send(new GetCommand({ TableName: tableName, Key: regionSwitchKey(region), ConsistentRead: true }))).Item;

describe('npm run region on a local DynamoDB', () => {
  it("drains a region with one write, which its health check reads, shows it, and restores it: the first drain's who and when stand", async () => {
    const health = databaseHealth({ client: tables.client, tables, region: REGION });
    await expect(health.check()).resolves.toBeUndefined();

    const drained = await local('drain', REGION);
    expect(drained.code).toBe(0);
    expect(drained.lines).toHaveLength(1);
    expect(drained.lines[0]).toMatch(new RegExp(`^Drained ${REGION} at \\S+Z, by ${LOCAL_ACTOR}: its health check fails`));
    expect(drained.lines[0]).toMatch(new RegExp(`Undo: npm run region -- restore ${REGION}$`));
    const item = await switchOf(tables.idempotency, REGION);
    expect(item).toEqual({ ...regionSwitchKey(REGION), drainedAt: expect.stringMatching(/Z$/), drainedBy: LOCAL_ACTOR });
    await expect(health.check()).rejects.toBeInstanceOf(RegionDrained);
    // Another region's check reads its own switch.
    await expect(databaseHealth({ client: tables.client, tables, region: OTHER }).check()).resolves.toBeUndefined();

    expect((await local('drain', REGION)).lines).toEqual([
      `${REGION} was drained already, since ${String(item?.drainedAt)} by ${LOCAL_ACTOR}: nothing changed.`,
    ]);
    expect((await local('status', REGION)).lines).toEqual([`${REGION}\tdrained\tsince ${String(item?.drainedAt)}\tby ${LOCAL_ACTOR}`]);
    expect(JSON.parse((await local('status', REGION, '--json')).lines[0] ?? '')).toEqual({
      region: REGION,
      drained: true,
      drainedAt: item?.drainedAt,
      drainedBy: LOCAL_ACTOR,
    });

    const restored = await local('restore', REGION);
    expect(restored.lines).toHaveLength(1);
    expect(restored.lines[0]).toMatch(
      new RegExp(`^Restored ${REGION} at \\S+Z, by ${LOCAL_ACTOR} \\(drained since ${String(item?.drainedAt)} by ${LOCAL_ACTOR}\\)`),
    );
    expect(await switchOf(tables.idempotency, REGION)).toBeUndefined();
    await expect(health.check()).resolves.toBeUndefined();
    expect((await local('restore', REGION)).lines).toEqual([`${REGION} was not drained: nothing changed.`]);
    expect((await local('status', REGION)).lines).toEqual([`${REGION}\tnot drained`]);
  });

  it('is left alone by the idempotency sweep, which deletes only records whose expiry has passed: a switch has none', async () => {
    await local('drain', REGION);
    const swept = await idempotencyRecords({ client: tables.client, tableName: tables.idempotency }).deleteExpired({
      now: Math.floor(Date.now() / 1000) + 3600,
      maxDeletes: 100,
    });
    expect(swept).toEqual({ deleted: 0, kept: 0, cutShort: false });
    expect(await switchOf(tables.idempotency, REGION)).toBeDefined();
    await local('restore', REGION);
  });

  it.each([
    ['an unknown command', ['invert', REGION], "unknown command 'invert': use drain, restore, status"],
    ['drain without a region', ['drain'], 'drain needs the region to drain'],
    ["a region that is no region's name", ['drain', 'Virginia'], "'Virginia' is not an AWS region's name"],
    ['--via without --stage', ['drain', REGION, '--via', OTHER], '--via picks the region of --stage'],
    ['--json on drain', ['drain', REGION, '--json'], 'only status takes --json'],
    ['status of every region without --stage', ['status'], 'status needs a REGION without --stage'],
    ['two regions', ['restore', REGION, OTHER], 'restore takes one region'],
    ['an unknown option', ['drain', REGION, '--force'], "unknown option '--force'"],
  ])('refuses %s in one line, writing nothing', async (_what, argv, said) => {
    const error = await refusal(local(...argv));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toContain(said);
    expect(await switchOf(tables.idempotency, REGION)).toBeUndefined();
  });

  it('names a missing table in one line (exit 2)', async () => {
    const error = await refusal(
      runRegionCommand(['drain', REGION, '--endpoint', tables.endpoint, '--table', `${tables.idempotency}-missing`], { print: () => {} }),
    );
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toBe(
      `No idempotency table ${tables.idempotency}-missing at ${tables.endpoint}: check --table (or ${idempotencyTable.nameVariable}), or start the local server (npm start).`,
    );
  });
});

describe(`npm run region --stage ${MULTI} (DynamoDB through each region stood in by DynamoDB Local; STS mocked)`, () => {
  const tableName = deployedTableName(MULTI, idempotencyTable);
  const sts = mockClient(STSClient);
  /** The regions whose DynamoDB and STS the tool asked, in order. */
  let dynamoDBAsked: string[];
  let stsAsked: string[];
  /** What the tool wrote on standard error. */
  let warnings: string[];
  /** Regions whose DynamoDB does not answer. */
  let down: Set<string>;
  let deadEndpoint: string;

  beforeAll(async () => {
    const creator = databaseClient({ endpoint: tables.endpoint, requestTimeout: LOCAL_TOOL_REQUEST_TIMEOUT_MS });
    await ensureTables(creator, [{ definition: tableDefinitions.idempotency, name: tableName }]);
    creator.destroy();
    deadEndpoint = `http://127.0.0.1:${await freePort()}`;
  });
  afterAll(() => sts.restore());
  beforeEach(async () => {
    sts.reset();
    sts.on(GetCallerIdentityCommand).resolves({ Arn: CALLER_ARN });
    dynamoDBAsked = [];
    stsAsked = [];
    warnings = [];
    down = new Set();
    // Whatever an earlier run left: every region serving.
    for (const region of REGIONS) await onStage('restore', region);
    dynamoDBAsked = [];
    stsAsked = [];
  });

  const options = (lines: string[]): RegionCommandOptions => ({
    env: {},
    print: (line) => lines.push(line),
    warn: (line) => warnings.push(line),
    dynamoDBIn: (region) => {
      dynamoDBAsked.push(region);
      return databaseClient({ endpoint: down.has(region) ? deadEndpoint : tables.endpoint });
    },
    stsIn: (region) => {
      stsAsked.push(region);
      return new STSClient({ region });
    },
  });
  const onStage = async (...argv: string[]) => {
    const lines: string[] = [];
    const code = await runRegionCommand([...argv, '--stage', MULTI], options(lines));
    return { code, lines };
  };

  it(`drains ${REGION} through its own DynamoDB and STS, never the home region's (${HOME}), in the stage's own table`, async () => {
    const { code, lines } = await onStage('drain', REGION);
    expect(code).toBe(0);
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^Drained ${REGION} of stage ${MULTI} at \\S+Z, by ${CALLER_ARN}: `))]);
    expect(lines[0]).toContain(`Undo: npm run region -- restore ${REGION} --stage ${MULTI}`);
    expect(new Set(dynamoDBAsked)).toEqual(new Set([REGION]));
    expect(stsAsked).toEqual([REGION]);
    expect(await switchOf(tableName, REGION)).toMatchObject({ drainedBy: CALLER_ARN });

    expect((await onStage('restore', REGION)).lines[0]).toMatch(
      new RegExp(`^Restored ${REGION} of stage ${MULTI} at \\S+Z, by ${CALLER_ARN} \\(drained since `),
    );
    expect(new Set(dynamoDBAsked)).toEqual(new Set([REGION]));
  });

  it("says how to confirm a drain: the region's health alarm, by the name the stack gives it, and the command that shows it", async () => {
    const alarm = databaseReadableAlarmNameOf(stageResourcePrefix(MULTI));
    const { lines } = await onStage('drain', REGION);
    expect(lines[0]).toContain(
      `To confirm, its alarm ${alarm} goes to ALARM: aws cloudwatch describe-alarms --region ${REGION} --alarm-names ${alarm}.`,
    );
  });

  it('drains and restores when STS does not answer, recorded as by an unknown caller, and says so in one line on standard error', async () => {
    sts
      .on(GetCallerIdentityCommand)
      .rejects(Object.assign(new Error('The security token included in the request is expired'), { name: 'ExpiredTokenException' }));
    const unknown = 'unknown (STS: ExpiredTokenException)';

    const drained = await onStage('drain', REGION);
    expect(drained.code).toBe(0);
    expect(drained.lines[0]).toMatch(
      new RegExp(`^Drained ${REGION} of stage ${MULTI} at \\S+Z, by unknown \\(STS: ExpiredTokenException\\): `),
    );
    expect(await switchOf(tableName, REGION)).toMatchObject({ drainedBy: unknown });
    expect(warnings).toEqual([
      `AWS STS in ${REGION} could not say who you are (ExpiredTokenException): going on, recorded as by an unknown caller.`,
    ]);

    const restored = await onStage('restore', REGION);
    expect(restored.code).toBe(0);
    expect(restored.lines[0]).toMatch(
      new RegExp(`^Restored ${REGION} of stage ${MULTI} at \\S+Z, by unknown \\(STS: ExpiredTokenException\\) `),
    );
    expect(await switchOf(tableName, REGION)).toBeUndefined();
    expect(warnings).toHaveLength(2);
  });

  it('takes its drain back when another operator drained the last other region between its check and its write', async () => {
    const [first = '', ...rest] = REGIONS;
    const [racing = '', ...drainedBefore] = rest.reverse();
    for (const region of drainedBefore) expect((await onStage('drain', region)).code).toBe(0);
    // Between the check (one region left besides this one) and the write: the other operator drains it.
    sts.on(GetCallerIdentityCommand).callsFake(async () => {
      await tables.client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...regionSwitchKey(first),
            drainedAt: new Date().toISOString(),
            drainedBy: 'arn:aws:sts::111111111111:assumed-role/operator/bob',
          },
        }),
      );
      return { Arn: CALLER_ARN };
    });

    const error = await refusal(onStage('drain', racing));

    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toMatch(
      new RegExp(`^Every other region of stage ${MULTI} was drained meanwhile .*: this drain of ${racing} is taken back`),
    );
    expect(await switchOf(tableName, racing)).toBeUndefined();
    // The other operator's drains stand.
    expect(await switchOf(tableName, first)).toMatchObject({ drainedBy: expect.stringContaining('bob') });
    for (const region of drainedBefore) expect(await switchOf(tableName, region)).toBeDefined();
  });

  it("drains a region whose own DynamoDB does not answer through another region with --via, and says where that is when it doesn't", async () => {
    down.add(REGION);
    const error = await refusal(onStage('drain', REGION));
    expect(error.message).toMatch(
      new RegExp(`^DynamoDB in ${REGION} did not answer \\(.+\\): nothing was changed; go through another region of the stage with --via `),
    );
    for (const other of REGIONS.filter((region) => region !== REGION)) expect(error.message).toContain(`--via ${other}`);

    const { lines } = await onStage('drain', REGION, '--via', OTHER);
    expect(lines[0]).toMatch(new RegExp(`^Drained ${REGION} of stage ${MULTI} \\(through ${OTHER}\\) at `));
    expect(await switchOf(tableName, REGION)).toBeDefined();
    expect(dynamoDBAsked.filter((region) => region !== REGION)).toEqual([OTHER]);
    expect(stsAsked).toEqual([OTHER]);
  });

  it("shows every region's switch, each read through its own region, and says which did not answer", async () => {
    await onStage('drain', REGION);
    dynamoDBAsked = [];
    const { lines } = await onStage('status');
    expect(lines).toEqual(
      REGIONS.map((region) =>
        region === REGION
          ? expect.stringMatching(new RegExp(`^${REGION}\\tdrained\\tsince \\S+Z\\tby ${CALLER_ARN}$`))
          : `${region}\tnot drained`,
      ),
    );
    expect(new Set(dynamoDBAsked)).toEqual(new Set(REGIONS));

    down.add(HOME);
    const printed: string[] = [];
    const error = await refusal(runRegionCommand(['status', '--stage', MULTI], options(printed)));
    expect(error.message).toMatch(new RegExp(`^DynamoDB in ${HOME} did not answer`));
    expect(printed).toHaveLength(REGIONS.length - 1);
  });

  it('refuses to drain the last region not drained: Route 53 answers with every region when every check fails', async () => {
    const [last, ...others] = REGIONS;
    for (const region of others) expect((await onStage('drain', region)).code).toBe(0);
    const error = await refusal(onStage('drain', last ?? ''));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toContain(`Every other region of stage ${MULTI} is drained`);
    expect(await switchOf(tableName, last ?? '')).toBeUndefined();
  });

  it.each([
    [
      'a region not in the stage',
      ['drain', 'eu-north-1', '--stage', MULTI],
      `Stage ${MULTI} runs in ${REGIONS.join(', ')}: region eu-north-1`,
    ],
    ['a --via not in the stage', ['drain', REGION, '--stage', MULTI, '--via', 'eu-north-1'], '--via eu-north-1 is not one of them'],
    ['a stage in one region', ['drain', REGION, '--stage', SINGLE], `Stage ${SINGLE} runs in one region`],
    ['--stage with --endpoint', ['drain', REGION, '--stage', MULTI, '--endpoint', 'http://127.0.0.1:1'], 'cannot be combined'],
    ['a stage name no stage can have', ['drain', REGION, '--stage', 'Prod!'], "--stage: Invalid stage name 'Prod!'"],
  ])('refuses %s in one line before any call', async (_what, argv, said) => {
    const error = await refusal(runRegionCommand(argv, options([])));
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toContain(said);
    expect(dynamoDBAsked).toEqual([]);
    expect(stsAsked).toEqual([]);
  });
});

describe('npm run region, as an operator runs it', () => {
  const env = () => ({ DYNAMODB_ENDPOINT: tables.endpoint, [idempotencyTable.nameVariable]: tables.idempotency });

  it('tells in its usage that credentials must not depend on the region drained nor on us-east-1', async () => {
    const { code, lines } = await local('--help');
    expect(code).toBe(0);
    expect(lines).toEqual([USAGE]);
    const usage = USAGE.replace(/\s+/g, ' ');
    expect(usage).toContain('Credentials must not depend on the region being drained, nor on us-east-1');
    expect(usage).toContain("set AWS_REGION (or your profile's region) to a region that stays");
    expect(usage).toContain('IAM Identity Center');
  });

  it('drains with one command and prints one line', async () => {
    const result = await npmRun('region', ['drain', REGION], env());
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^Drained ${REGION} at `))]);
    expect(await switchOf(tables.idempotency, REGION)).toBeDefined();
    await local('restore', REGION);
  });

  it('fails in one line, with no stack trace, and exit status 2, on bad input', async () => {
    const result = await npmRun('region', ['drain', 'Virginia'], env());
    expect(expectOneLineFailure(result, { status: 2 })).toMatch(/^npm run region: 'Virginia' is not an AWS region's name/);
  });
});
