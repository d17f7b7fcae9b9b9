import { RemovalPolicy } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STAGE, defaultSettings, parseIgnoreReleaseAlarms, parseStageName, stageSettings } from '../../infra/stages';
import { statusCreatesCeiling } from '../../infra/capacity';
import { MAX_STATUS_SHARDS } from '../../shared/tables';

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
