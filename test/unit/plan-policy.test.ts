/** A plan's RateLimit-Policy as the authorizer states it, the plans it reads from USAGE_PLANS, and how it meters a key's item. */
import { describe, expect, it } from 'vitest';
import { hashApiKey } from '../../shared/api-keys';
import { meteringOf, policiesOf, policiesOfJson, rateLimitPolicyValue, usageKeyBinding } from '../../shared/plan-policy';
import { plans } from '../../shared/plans';
import { homeRegionOf, stageSettings } from '../../infra/stages';
import { buildOpenApiDocument } from '../../tools/openapi/document';

describe('rateLimitPolicyValue', () => {
  it('states the rate per second, and nothing else for a plan without a quota', () => {
    expect(rateLimitPolicyValue('default', { rateLimit: 25, burstLimit: 50 })).toBe('"default";q=25;w=1');
  });

  it('states the quota as a second policy, its window the period in seconds', () => {
    expect(rateLimitPolicyValue('default', { rateLimit: 10, burstLimit: 20, quota: { limit: 100_000, period: 'DAY' } })).toBe(
      '"default";q=10;w=1, "default-quota";q=100000;w=86400',
    );
    expect(rateLimitPolicyValue('weekly', { rateLimit: 1, burstLimit: 1, quota: { limit: 7, period: 'WEEK' } })).toBe(
      '"weekly";q=1;w=1, "weekly-quota";q=7;w=604800',
    );
    expect(rateLimitPolicyValue('partner', { rateLimit: 100, burstLimit: 200, quota: { limit: 5_000_000, period: 'MONTH' } })).toBe(
      '"partner";q=100;w=1, "partner-quota";q=5000000;w=2592000',
    );
  });

  it('never states more than the rate allows: whole requests in a window of whole seconds', () => {
    expect(rateLimitPolicyValue('slow', { rateLimit: 0.5, burstLimit: 1 })).toBe('"slow";q=1;w=2');
    expect(rateLimitPolicyValue('slower', { rateLimit: 0.3, burstLimit: 1 })).toBe('"slower";q=1;w=4');
    expect(rateLimitPolicyValue('odd', { rateLimit: 2.5, burstLimit: 5 })).toBe('"odd";q=2;w=1');
  });

  it('matches what openapi.json documents, for every plan', () => {
    const { pattern, maxLength } = buildOpenApiDocument().components.headers.RateLimitPolicy.schema as {
      pattern: string;
      maxLength: number;
    };
    for (const [name, plan] of Object.entries(plans)) {
      const policy = rateLimitPolicyValue(name, plan);
      expect(policy).toMatch(new RegExp(pattern));
      expect(policy.length).toBeLessThanOrEqual(maxLength);
    }
    const longest = rateLimitPolicyValue('a'.repeat(32), {
      rateLimit: 10_000,
      burstLimit: 5_000,
      quota: { limit: 2 ** 53 - 1, period: 'MONTH' },
    });
    expect(longest).toMatch(new RegExp(pattern));
    expect(longest.length).toBeLessThanOrEqual(maxLength);
  });
});

describe('the plans the authorizer reads (USAGE_PLANS)', () => {
  it("gives each plan's policy by name", () => {
    expect(Object.fromEntries(policiesOfJson(JSON.stringify(plans)))).toEqual({
      default: '"default";q=10;w=1, "default-quota";q=100000;w=86400',
      partner: '"partner";q=50;w=1, "partner-quota";q=5000000;w=2592000',
    });
  });

  it('leaves out what is not a plan, and reads unset or broken JSON as no plans (the header is advice, never a refusal)', () => {
    expect(Object.fromEntries(policiesOf({ default: { rateLimit: 5, burstLimit: 5 }, odd: { rateLimit: 'fast' }, none: null }))).toEqual({
      default: '"default";q=5;w=1',
    });
    expect(policiesOf({ weird: { rateLimit: 5, burstLimit: 5, quota: { limit: 5, period: 'YEAR' } } }).size).toBe(0);
    expect(policiesOfJson(undefined).size).toBe(0);
    expect(policiesOfJson('{not json').size).toBe(0);
    expect(policiesOfJson('[1, 2]').size).toBe(0);
  });
});

describe('meteringOf: the usage key and plan of a key, as its item holds them', () => {
  const keyHash = hashApiKey('petstore_a-key-for-the-test-of-its-metering');
  const item = (usageKeyId: string, usageKey: string, plan = 'partner') => ({
    keyHash,
    plan,
    usageKeyId,
    usageKey,
    usageKeyBinding: usageKeyBinding(keyHash, usageKeyId, usageKey),
  });

  it('meters a key by the usage key written for it, on its plan', () => {
    expect(meteringOf(item('ak-1', 'a'.repeat(40)))).toEqual({ usageKeyId: 'ak-1', usageIdentifierKey: 'a'.repeat(40), plan: 'partner' });
  });

  it('binds a usage key to one key, one id and one value: none may be exchanged', () => {
    const binding = usageKeyBinding(keyHash, 'ak-1', 'a'.repeat(40));
    expect(binding).toMatch(/^[0-9a-f]{64}$/);
    expect(usageKeyBinding(hashApiKey('petstore_another-key-of-the-test'), 'ak-1', 'a'.repeat(40))).not.toBe(binding);
    expect(usageKeyBinding(keyHash, 'ak-2', 'a'.repeat(40))).not.toBe(binding);
    expect(usageKeyBinding(keyHash, 'ak-1', 'b'.repeat(40))).not.toBe(binding);
    // Each part apart: moving a character from the id to the value is another binding.
    expect(usageKeyBinding(keyHash, 'ak-1a', 'a'.repeat(39))).not.toBe(binding);
  });

  it.each([
    ['no usage key', { usageKey: undefined }, 'no-usage-key'],
    ['an empty usage key', { usageKey: '' }, 'no-usage-key'],
    ['a usage key of another type', { usageKey: 12345 }, 'no-usage-key'],
    ['no usage key id', { usageKeyId: undefined }, 'no-usage-key'],
    ["another key's usage key", { usageKey: 'b'.repeat(40) }, 'usage-key-mismatch'],
    ['another usage key id', { usageKeyId: 'ak-2' }, 'usage-key-mismatch'],
    ['no binding', { usageKeyBinding: undefined }, 'usage-key-mismatch'],
    [
      "another key's binding",
      { usageKeyBinding: usageKeyBinding(hashApiKey('petstore_another-key-of-the-test'), 'ak-1', 'a'.repeat(40)) },
      'usage-key-mismatch',
    ],
    ['no plan', { plan: undefined }, 'no-plan'],
    ['an empty plan', { plan: '' }, 'no-plan'],
    ['a plan of another type', { plan: null }, 'no-plan'],
  ] as const)('refuses an item with %s, assuming nothing in its place', (_, change, refused) => {
    expect(meteringOf({ ...item('ak-1', 'a'.repeat(40)), ...change })).toEqual({ refused });
  });
});

describe('meteringOf in a stage of several regions: the usage key is an API key in each', () => {
  const keyHash = hashApiKey('petstore_a-key-for-the-test-of-its-regions');
  const settings = stageSettings('global');
  const others = (settings.regions ?? []).filter((region) => region !== homeRegionOf(settings));
  const regionIds = Object.fromEntries(others.map((region) => [region, `ak-${region}`]));
  const value = 'c'.repeat(40);
  const item = (regionUsageKeyIds: unknown) => ({
    keyHash,
    plan: 'partner',
    usageKeyId: 'ak-home',
    usageKey: value,
    regionUsageKeyIds,
    usageKeyBinding: usageKeyBinding(keyHash, 'ak-home', value, regionIds),
  });

  it('meters it by its value, naming every region’s id', () => {
    expect(others.length).toBeGreaterThan(0);
    expect(meteringOf(item(regionIds))).toEqual({
      usageKeyId: 'ak-home',
      usageIdentifierKey: value,
      plan: 'partner',
      regionUsageKeyIds: regionIds,
    });
  });

  it('binds the region ids too, whatever order the map is stored in; a stage of one region binds as before', () => {
    const reversed = Object.fromEntries(Object.entries(regionIds).reverse());
    expect(usageKeyBinding(keyHash, 'ak-home', value, reversed)).toBe(usageKeyBinding(keyHash, 'ak-home', value, regionIds));
    expect(usageKeyBinding(keyHash, 'ak-home', value, regionIds)).not.toBe(usageKeyBinding(keyHash, 'ak-home', value));
  });

  it.each([
    ['another key’s id in one region', () => ({ ...regionIds, [others[0] ?? '']: 'ak-another' })],
    ['a region fewer', () => Object.fromEntries(Object.entries(regionIds).slice(1))],
    ['the ids removed', () => undefined],
    ['ids of another type', () => ({ [others[0] ?? '']: 42 })],
    ['a list in place of the map', () => Object.values(regionIds)],
  ])('refuses an item with %s', (_, ids) => {
    expect(meteringOf(item(ids()))).toEqual({ refused: 'usage-key-mismatch' });
  });
});
