import { RemovalPolicy } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STAGE, defaultSettings, parseStageName, stageSettings } from '../../infra/stages';

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

describe('stage settings', () => {
  it('gives an unknown stage the defaults: destroyable, no CORS, no e-mail, no domain', () => {
    expect(stageSettings('alice')).toEqual(defaultSettings);
    expect(defaultSettings).toMatchObject({ removalPolicy: RemovalPolicy.DESTROY, corsAllowedOrigins: [] });
    expect(defaultSettings.alarmEmail).toBeUndefined();
    expect(defaultSettings.customDomain).toBeUndefined();
  });

  it('retains prod data', () => {
    expect(stageSettings('prod').removalPolicy).toBe(RemovalPolicy.RETAIN);
    expect(stageSettings('staging').removalPolicy).toBe(RemovalPolicy.DESTROY);
  });
});
