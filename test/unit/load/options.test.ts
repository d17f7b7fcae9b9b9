/** The command line of npm run load: keys and plans, read and checked before anything starts. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateApiKey } from '../../../shared/api-keys';
import { plans } from '../../../shared/plans';
import { UsageError } from '../../../tools/cli';
import { parseLoadCommand } from '../../../tools/load/options';

const plansFile = (content: unknown) => {
  const path = join(mkdtempSync(join(tmpdir(), 'load-plans-')), 'plans.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
};

const small = { default: { rateLimit: 50, burstLimit: 50 }, small: { rateLimit: 5, burstLimit: 2, quota: { limit: 100, period: 'DAY' } } };

/** The one-line refusal a command line gets, and that it is a usage error (exit status 2). */
const refusal = (args: string[], env: Record<string, string> = {}): string => {
  try {
    parseLoadCommand(args, env);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('the command line was accepted');
};

describe('npm run load on a local server of its own', () => {
  it('uses one key on the default plan of roomy plans unless told otherwise', () => {
    const command = parseLoadCommand([], {});
    expect(command).toMatchObject({ count: 2000, concurrency: 32, json: false, target: { kind: 'local', keys: 1, plan: 'default' } });
    // Roomy: the plans' names, each far above what a run sends, and no quota.
    const roomy = command?.target.kind === 'local' ? command.target.plans : {};
    expect(Object.keys(roomy)).toEqual(Object.keys(plans));
    for (const plan of Object.values(roomy)) {
      expect(plan.rateLimit).toBeGreaterThanOrEqual(10_000);
      expect(plan.quota).toBeUndefined();
    }
  });

  it('spreads over --keys N on --plan NAME', () => {
    expect(parseLoadCommand(['--keys', '4', '--plan', 'partner'], {})?.target).toMatchObject({ kind: 'local', keys: 4, plan: 'partner' });
  });

  it('meters with the plans of PLANS_FILE when it is set', () => {
    const command = parseLoadCommand(['--keys', '2', '--plan', 'small'], { PLANS_FILE: plansFile({ plans: small }) });
    expect(command?.target).toEqual({ kind: 'local', keys: 2, plan: 'small', plans: small });
  });

  it('refuses a --keys that is not a whole number from 1 to 1000', () => {
    for (const keys of ['0', '-1', '2.5', 'many', '1001'])
      expect(refusal([`--keys=${keys}`])).toBe('--keys must be an integer from 1 to 1000: see npm run load -- --help');
  });

  it('refuses a --plan that is not one of the plans in force, naming them', () => {
    expect(refusal(['--plan', 'gold'])).toBe("--plan: unknown plan 'gold': the plans are default, partner.");
    expect(refusal(['--plan', 'toString'])).toContain("unknown plan 'toString'");
    expect(refusal(['--plan', 'partner'], { PLANS_FILE: plansFile({ plans: small }) })).toBe(
      "--plan: unknown plan 'partner': the plans of PLANS_FILE are default, small.",
    );
  });

  it('refuses a PLANS_FILE it cannot use in one line', () => {
    expect(refusal([], { PLANS_FILE: plansFile({ plans: { small: small.small } }) })).toMatch(
      /^PLANS_FILE: .*there must be a 'default' plan/,
    );
  });
});

describe('npm run load against an API at --url', () => {
  const [first, second] = [generateApiKey(), generateApiKey()];

  it('spreads over every --key given, in order', () => {
    expect(parseLoadCommand(['--url', 'https://api.example.com/v1/', '--key', first, '--key', second], {})?.target).toEqual({
      kind: 'url',
      url: 'https://api.example.com/v1',
      keys: [first, second],
    });
  });

  it('refuses --keys and --plan, which are for the local server, without repeating the key', () => {
    for (const extra of [
      ['--keys', '2'],
      ['--plan', 'default'],
    ]) {
      const message = refusal(['--url', 'https://api.example.com/v1', '--key', first, ...extra]);
      expect(message).toContain('--keys and --plan are for the local server started here; with --url, repeat --key');
      expect(message).not.toContain(first);
    }
  });

  it('refuses the same --key twice, without repeating it', () => {
    const message = refusal(['--url', 'https://api.example.com/v1', '--key', first, '--key', first]);
    expect(message).toBe('the same --key is given twice: see npm run load -- --help');
  });

  it.each([
    'ftp://api.example.com/v1',
    'https://user:secret@api.example.com/v1',
    'https://api.example.com/v1?stage=x',
    'https://api.example.com/v1#x',
  ])('refuses --url %s, which the client could not call, as usage', (url) => {
    expect(refusal(['--url', url, '--key', first])).toBe(
      '--url must be an http or https URL ending in /v1, without credentials, query or fragment: see npm run load -- --help',
    );
  });

  it('still needs --url and --key together', () => {
    expect(refusal(['--key', first])).toBe('--url and --key go together: see npm run load -- --help');
  });
});
