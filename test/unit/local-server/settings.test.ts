/**
 * npm start's settings: each wrong one is refused before anything starts, in one line that names
 * it and what it must be, never its value. The command's own exit (status 2, one line on stderr) is
 * tried end to end in test/e2e/local-server-cli.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REGION_COUNT, REGION_INDEX_VARIABLE } from '../../../shared/ids';
import { DEFAULT_PLAN, PLANS_FILE_VARIABLE } from '../../../shared/plans';
import { MAX_STATUS_SHARDS, STATUS_SHARDS_VARIABLE } from '../../../shared/tables';
import { UsageError } from '../../../tools/cli';
import { HELP, startSettings } from '../../../tools/local-server/settings';
import { OTHER_PLAN } from '../../support/vocabulary';

/** The refusal's line, checked to be one UsageError line pointing at --help. */
const refusalOf = (env: Record<string, string>): string => {
  let refusal: unknown;
  try {
    startSettings(env);
  } catch (error) {
    refusal = error;
  }
  expect(refusal, JSON.stringify(env)).toBeInstanceOf(UsageError);
  const line = (refusal as UsageError).message;
  expect(line).not.toContain('\n');
  expect(line.endsWith(`: see ${HELP}`), line).toBe(true);
  return line;
};

const folder = mkdtempSync(join(tmpdir(), 'start-settings-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** A PLANS_FILE holding `text`. */
const plansFile = (name: string, text: string): string => {
  const path = join(folder, name);
  writeFileSync(path, text);
  return path;
};

describe("npm start's settings", () => {
  it('takes an environment with none of them set, as the README runs it', () => {
    const { settings, plans } = startSettings({});
    expect(settings).toMatchObject({ PORT: 3000, STAGE_REGION_COUNT: 1 });
    expect(Object.keys(plans)).toContain(DEFAULT_PLAN);
  });

  it.each([
    [{ API_KEY: 'too-short' }, 'API_KEY must be a URL-safe string'],
    [{ API_KEY: 'has spaces in it and is long enough' }, 'API_KEY must be a URL-safe string'],
    [{ PORT: 'eighty' }, 'PORT must be a port number from 0 to 65535'],
    [{ PORT: 'abc' }, 'PORT must be a port number from 0 to 65535'],
    [{ DYNAMODB_LOCAL_PORT: '99999' }, 'DYNAMODB_LOCAL_PORT must be a port number'],
    [{ DYNAMODB_ENDPOINT: 'not a url' }, 'DYNAMODB_ENDPOINT must be a URL'],
    [{ BODY_TIMEOUT: 'soon' }, 'BODY_TIMEOUT must be a number of seconds above 0'],
    [{ HEALTH_REUSE_SECONDS: '61' }, 'HEALTH_REUSE_SECONDS must be a whole number of seconds from 0 to 60'],
    [{ STAGE_REGION_COUNT: '0' }, `STAGE_REGION_COUNT must be a whole number of regions from 1 to ${REGION_COUNT}`],
    [{ [STATUS_SHARDS_VARIABLE]: '0' }, `${STATUS_SHARDS_VARIABLE} must be a whole number from 1 to ${MAX_STATUS_SHARDS}`],
    [{ [REGION_INDEX_VARIABLE]: String(REGION_COUNT) }, `${REGION_INDEX_VARIABLE} must be a whole number from 0 to ${REGION_COUNT - 1}`],
  ])('refuses %j in one line saying "%s", without echoing the value', (env, message) => {
    const line = refusalOf(env);
    expect(line.startsWith(message), line).toBe(true);
    expect(line).not.toContain(Object.values(env)[0]);
  });

  it.each([
    ['a file that does not exist', () => join(folder, 'absent.json'), /PLANS_FILE: cannot read \S+/],
    ['a file that is not JSON', () => plansFile('cut.json', '{"plans": '), /PLANS_FILE: \S+ is not JSON/],
    [
      'plans without a default',
      () => plansFile('no-default.json', JSON.stringify({ plans: { [OTHER_PLAN]: { rateLimit: 5, burstLimit: 5 } } })),
      new RegExp(`there must be a '${DEFAULT_PLAN}' plan`),
    ],
    [
      'a plan with a rate of 0',
      () => plansFile('rate-0.json', JSON.stringify({ plans: { [DEFAULT_PLAN]: { rateLimit: 0, burstLimit: 5 } } })),
      new RegExp(`plans\\.${DEFAULT_PLAN}\\.rateLimit`),
    ],
  ])('refuses a PLANS_FILE that is %s in one line naming it', (_, path, message) => {
    const line = refusalOf({ [PLANS_FILE_VARIABLE]: path() });
    expect(line).toMatch(/^PLANS_FILE: /);
    expect(line).toMatch(message);
  });

  it('refuses plans whose quota would split below one request over the regions of STAGE_REGION_COUNT', () => {
    const path = plansFile(
      'small-quota.json',
      JSON.stringify({ plans: { [DEFAULT_PLAN]: { rateLimit: 5, burstLimit: 5, quota: { limit: 2, period: 'DAY' } } } }),
    );
    expect(startSettings({ [PLANS_FILE_VARIABLE]: path, STAGE_REGION_COUNT: '2' }).plans[DEFAULT_PLAN]?.quota?.limit).toBe(1);
    expect(refusalOf({ [PLANS_FILE_VARIABLE]: path, STAGE_REGION_COUNT: '3' })).toBe(
      `plan '${DEFAULT_PLAN}': its quota of 2 a day splits to less than 1 request in each of 3 regions: raise the quota to 3 or more: see ${HELP}`,
    );
  });
});
