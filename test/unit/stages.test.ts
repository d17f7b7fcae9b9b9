import { RemovalPolicy } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_STAGE,
  defaultSettings,
  parseIgnoreReleaseAlarms,
  parseStageName,
  stageRegionIndex,
  stageSettings,
  type StageOverrides,
  reservedExecutions,
} from '../../infra/stages';
import { REGION_COUNT } from '../../shared/ids';
import { MAX_STATUS_SHARDS } from '../../shared/tables';
import { statusCreatesCeiling } from '../../infra/capacity';
import { routes } from '../../shared/routes';

describe('stage names', () => {
  it('defaults to dev when -c stage is not given', () => {
    expect(parseStageName(undefined)).toBe(DEFAULT_STAGE);
    expect(DEFAULT_STAGE).toBe('dev');
  });

  it.each(['staging', 'prod', 'alice', 'pr-1234'])('accepts %s', (name) => {
    expect(parseStageName(name)).toBe(name);
  });

  it.each(['', 'Prod', '1st', 'my_stage', 'a'.repeat(26), 'x/y', '-dev'])('refuses %j with advice', (name) => {
    expect(() => parseStageName(name)).toThrow(/Invalid stage name .*-c stage=staging/);
  });
});

describe('-c ignoreReleaseAlarms', () => {
  it('is off unless the deploy says true', () => {
    expect(parseIgnoreReleaseAlarms(undefined)).toBe(false);
    expect(parseIgnoreReleaseAlarms('false')).toBe(false);
    expect(parseIgnoreReleaseAlarms('true')).toBe(true);
    expect(parseIgnoreReleaseAlarms(true)).toBe(true);
  });

  it.each(['yes', '1', 'TRUE', ''])('refuses %j in one line', (value) => {
    expect(() => parseIgnoreReleaseAlarms(value)).toThrow(
      /^Invalid ignoreReleaseAlarms .*use -c ignoreReleaseAlarms=true, or leave it out\.$/,
    );
  });
});

describe('stage settings', () => {
  it('gives an unknown stage the defaults: destroyable, no CORS, no e-mail, no domain', () => {
    expect(stageSettings('alice')).toEqual(defaultSettings);
    expect(defaultSettings).toMatchObject({ removalPolicy: RemovalPolicy.DESTROY, corsAllowedOrigins: [] });
    expect(defaultSettings.alarmEmail).toBeUndefined();
    expect(defaultSettings.customDomain).toBeUndefined();
  });

  it('releases all at once on development stages, and by a canary on staging and prod', () => {
    expect(stageSettings('alice').release).toBe('AllAtOnce');
    expect(stageSettings('staging').release).toBe('Canary10Percent5Minutes');
    expect(stageSettings('prod').release).toBe('Canary10Percent5Minutes');
  });

  it('retains prod data', () => {
    expect(stageSettings('prod').removalPolicy).toBe(RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE);
    expect(stageSettings('staging').removalPolicy).toBe(RemovalPolicy.DESTROY);
  });
});

describe("a stage's regions", () => {
  const REGIONS = ['us-east-1', 'us-east-2', 'us-west-1', 'us-west-2', 'eu-west-1', 'eu-west-2', 'eu-central-1', 'ap-southeast-2'];

  it('gives each region its position as its index, and 0 to a stage in one region', () => {
    // As many as ids have room for; which regions a stage may list together is checked apart
    // (test/infra/regions.test.ts).
    const settings = { regions: REGIONS };
    REGIONS.forEach((region, index) => expect(stageRegionIndex('multi', settings, region)).toBe(index));
    expect(stageRegionIndex('alice', stageSettings('alice'), 'eu-west-1')).toBe(0);
    expect(stageRegionIndex('alice', stageSettings('alice'), undefined)).toBe(0);
  });

  it('accepts as many regions as pet ids have room for, and refuses one more', () => {
    expect(REGIONS).toHaveLength(REGION_COUNT);
    expect(() => stageSettings('multi', { multi: { regions: [...REGIONS, 'sa-east-1'] } })).toThrow(
      /^Stage 'multi': regions lists 9 regions; pet ids have room for 8 region indexes\.$/,
    );
  });

  it('refuses a region listed twice, which would give two regions one index', () => {
    expect(() => stageSettings('multi', { multi: { regions: ['eu-west-1', 'us-east-1', 'eu-west-1'] } })).toThrow(
      /^Stage 'multi': regions lists eu-west-1 twice; each region needs its own index in pet ids\.$/,
    );
  });

  it('refuses to place a stack in a region its stage does not list, or in no region', () => {
    const settings = { regions: ['eu-west-1', 'us-east-1'] };
    expect(() => stageRegionIndex('multi', settings, 'eu-central-1')).toThrow(/not in eu-central-1: add eu-central-1 at the end/);
    expect(() => stageRegionIndex('multi', settings, undefined)).toThrow(/runs in eu-west-1, us-east-1: deploy it to one of them/);
  });
});

describe('reserved concurrency', () => {
  /** The functions that each get `eachOperation`: one per route with a handler. */
  const operationFunctions = routes.filter((route) => 'handler' in route).length;
  const settingsOf = (overrides: StageOverrides) => stageSettings('trial', { trial: overrides });

  it("is off on every stage, and checked against Lambda's default account quota of 1,000", () => {
    for (const stage of ['alice', 'staging', 'prod']) {
      expect(stageSettings(stage).reservedConcurrency, stage).toBeUndefined();
      expect(stageSettings(stage).accountConcurrency, stage).toBe(1_000);
    }
  });

  it('accepts reservations that leave exactly 100 executions unreserved', () => {
    const eachOperation = 100;
    const authorizer = 1_000 - 100 - eachOperation * operationFunctions;
    expect(settingsOf({ reservedConcurrency: { authorizer, eachOperation } }).reservedConcurrency).toEqual({ authorizer, eachOperation });
  });

  it('refuses, in one line that says why, reservations that leave fewer than 100 unreserved', () => {
    const eachOperation = 100;
    const authorizer = 1_000 - 99 - eachOperation * operationFunctions;
    expect(() => settingsOf({ reservedConcurrency: { authorizer, eachOperation } })).toThrow(
      new RegExp(
        `^Stage 'trial': reservedConcurrency reserves 901 of the account's 1000 concurrent executions \\(authorizer ${authorizer}, ` +
          `${operationFunctions} operations × 100\\), leaving 99 unreserved; Lambda needs at least 100: [^\\n]+$`,
      ),
    );
  });

  it('checks against the account concurrency the stage names: a new account with 10 can reserve nothing', () => {
    const reservations = { authorizer: 1, eachOperation: 1 };
    expect(() => settingsOf({ accountConcurrency: 10, reservedConcurrency: reservations })).toThrow(
      new RegExp(`leaving ${10 - reservedExecutions(reservations)} unreserved; Lambda needs at least 100`),
    );
    expect(settingsOf({ accountConcurrency: 10 }).reservedConcurrency).toBeUndefined();
  });

  it.each([
    [
      { authorizer: 0, eachOperation: 50 },
      /reservedConcurrency\.authorizer must be a whole number, at least 1 \(0 would refuse every request\)\.$/,
    ],
    [{ authorizer: 50, eachOperation: 2.5 }, /reservedConcurrency\.eachOperation must be a whole number, at least 1/],
  ])('refuses a reservation that would refuse every request, or is not whole: %j', (reservedConcurrency, message) => {
    expect(() => settingsOf({ reservedConcurrency })).toThrow(message);
  });

  it('refuses an account concurrency that is no number of executions', () => {
    expect(() => settingsOf({ accountConcurrency: 0 })).toThrow(/^Stage 'trial': accountConcurrency must be a whole number/);
  });
});

describe('status index shards', () => {
  it('are 1 on development stages, and staging writes and lists as prod does', () => {
    expect(stageSettings('alice').statusIndexShards).toBe(1);
    expect(stageSettings('staging').statusIndexShards).toBe(stageSettings('prod').statusIndexShards);
  });

  it("take each stage's whole burst of creates of one status, at the largest pet", () => {
    for (const stage of ['alice', 'staging', 'prod']) {
      const settings = stageSettings(stage);
      expect(statusCreatesCeiling(settings.statusIndexShards), stage).toBeGreaterThanOrEqual(settings.throttle.burstLimit);
    }
  });

  it('refuse a stage whose burst of creates of one status would throttle the index', () => {
    const overrides = { fast: { throttle: { rateLimit: 1_000, burstLimit: 2_000 }, statusIndexShards: 2 } };
    expect(() => stageSettings('fast', overrides)).toThrow(
      "Stage 'fast': 2 status index shard(s) take 1000 creates of one status a second, below the stage's burst of 2000",
    );
  });

  it.each([0, 1.5, MAX_STATUS_SHARDS + 1])('refuse %s shards', (statusIndexShards) => {
    expect(() => stageSettings('odd', { odd: { statusIndexShards } })).toThrow(
      `Stage 'odd': statusIndexShards must be a whole number from 1 to ${MAX_STATUS_SHARDS}.`,
    );
  });
});
