import { RemovalPolicy } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_STAGE,
  defaultSettings,
  parseIgnoreReleaseAlarms,
  parseStageName,
  stageRegionIndex,
  stageSettings,
} from '../../infra/stages';
import { REGION_COUNT } from '../../shared/ids';

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
    const settings = stageSettings('multi', { multi: { regions: REGIONS } });
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
    const settings = stageSettings('multi', { multi: { regions: ['eu-west-1', 'us-east-1'] } });
    expect(() => stageRegionIndex('multi', settings, 'eu-central-1')).toThrow(/not in eu-central-1: add eu-central-1 at the end/);
    expect(() => stageRegionIndex('multi', settings, undefined)).toThrow(/runs in eu-west-1, us-east-1: deploy it to one of them/);
  });
});
