/** The local gateway's usage-plan meter: per-key token buckets and quotas, as API Gateway meters them. */
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../../shared/plans';
import { createUsageMeter, quotaPeriodStart, usageDay } from '../../../tools/local-server/usage-plans';

const T0 = Date.parse('2026-11-25T10:00:00.000Z'); // a Wednesday

const takeMany = (meter: ReturnType<typeof createUsageMeter>, key: string, plan: Plan, count: number, at: number) =>
  Array.from({ length: count }, () => meter.take(key, plan, at));

describe('the token bucket of a key', () => {
  const plan: Plan = { rateLimit: 2, burstLimit: 3 };

  it('lets a burst through, refuses the next as THROTTLED, and refills at the rate', () => {
    const meter = createUsageMeter();
    expect(takeMany(meter, 'a', plan, 4, T0)).toEqual(['allowed', 'allowed', 'allowed', 'THROTTLED']);
    expect(meter.take('a', plan, T0 + 499)).toBe('THROTTLED');
    expect(meter.take('a', plan, T0 + 500)).toBe('allowed');
    expect(takeMany(meter, 'a', plan, 4, T0 + 10_000)).toEqual(['allowed', 'allowed', 'allowed', 'THROTTLED']);
  });

  it('meters each key apart: one key over its rate leaves another untouched', () => {
    const meter = createUsageMeter();
    takeMany(meter, 'noisy', plan, 50, T0);
    expect(takeMany(meter, 'quiet', plan, 3, T0)).toEqual(['allowed', 'allowed', 'allowed']);
  });
});

describe('the quota of a key', () => {
  const plan: Plan = { rateLimit: 1_000, burstLimit: 1_000, quota: { limit: 2, period: 'DAY' } };

  it('refuses as QUOTA_EXCEEDED past the limit, until the next period', () => {
    const meter = createUsageMeter();
    expect(takeMany(meter, 'a', plan, 3, T0)).toEqual(['allowed', 'allowed', 'QUOTA_EXCEEDED']);
    expect(meter.take('a', plan, Date.parse('2026-11-25T23:59:59.999Z'))).toBe('QUOTA_EXCEEDED');
    expect(meter.take('a', plan, Date.parse('2026-11-26T00:00:00.000Z'))).toBe('allowed');
  });

  it('does not count throttled requests against the quota', () => {
    const meter = createUsageMeter();
    const tight: Plan = { rateLimit: 1, burstLimit: 1, quota: { limit: 2, period: 'DAY' } };
    expect(takeMany(meter, 'a', tight, 5, T0)).toEqual(['allowed', 'THROTTLED', 'THROTTLED', 'THROTTLED', 'THROTTLED']);
    expect(meter.take('a', tight, T0 + 1_000)).toBe('allowed');
    expect(meter.take('a', tight, T0 + 2_000)).toBe('QUOTA_EXCEEDED');
  });
});

describe('a request taken back (the server could not take its body)', () => {
  const plan: Plan = { rateLimit: 1, burstLimit: 1, quota: { limit: 1, period: 'DAY' } };

  it('gives back its token, and its place in the quota and in the day', () => {
    const meter = createUsageMeter();
    expect(meter.take('a', plan, T0)).toBe('allowed');
    meter.giveBack('a', plan, T0);
    expect(meter.usedOn('a', T0)).toBe(0);
    expect(meter.take('a', plan, T0)).toBe('allowed');
    expect(meter.usedOn('a', T0)).toBe(1);
    expect(meter.take('a', plan, T0 + 1_000)).toBe('QUOTA_EXCEEDED');
  });

  it("leaves the next day's count alone when taken back after midnight", () => {
    const meter = createUsageMeter();
    const roomy: Plan = { rateLimit: 1_000, burstLimit: 1_000 };
    const beforeMidnight = Date.parse('2026-11-25T23:59:59.999Z');
    meter.take('a', roomy, beforeMidnight);
    meter.take('a', roomy, T0 + 86_400_000);
    meter.giveBack('a', roomy, beforeMidnight);
    expect(meter.usedOn('a', T0 + 86_400_000)).toBe(1);
  });
});

describe("a key's use per day", () => {
  const plan: Plan = { rateLimit: 1_000, burstLimit: 1_000, quota: { limit: 3, period: 'WEEK' } };

  it('counts the requests let through on each UTC day, not the refused ones, from zero each day', () => {
    const meter = createUsageMeter();
    const tuesdayNight = Date.parse('2026-11-24T23:59:59.000Z');
    expect(takeMany(meter, 'a', plan, 2, tuesdayNight)).toEqual(['allowed', 'allowed']);
    expect(meter.usedOn('a', tuesdayNight)).toBe(2);
    expect(meter.usedOn('a', T0)).toBe(0);
    // The week's quota holds one more: the second request of Wednesday is refused and not counted.
    expect(takeMany(meter, 'a', plan, 2, T0)).toEqual(['allowed', 'QUOTA_EXCEEDED']);
    expect(meter.usedOn('a', T0)).toBe(1);
    expect(meter.usedOn('b', T0)).toBe(0);
    expect(usageDay(T0)).toBe('2026-11-25');
  });
});

describe('quotaPeriodStart', () => {
  it('starts a DAY at 00:00 UTC, a WEEK on Sunday and a MONTH on its first day', () => {
    expect(new Date(quotaPeriodStart('DAY', T0)).toISOString()).toBe('2026-11-25T00:00:00.000Z');
    expect(new Date(quotaPeriodStart('WEEK', T0)).toISOString()).toBe('2026-11-22T00:00:00.000Z');
    expect(new Date(quotaPeriodStart('MONTH', T0)).toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(new Date(quotaPeriodStart('WEEK', Date.parse('2026-11-22T00:00:00.000Z'))).toISOString()).toBe('2026-11-22T00:00:00.000Z');
  });
});
