import { RemovalPolicy } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STAGE, defaultSettings, parseIgnoreReleaseAlarms, parseStageName, stageSettings } from '../../infra/stages';

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
