/**
 * The local gateway's usage plans, as API Gateway meters a usage plan's API key: a token bucket per
 * key at its plan's rate and burst, then a quota counter per key and period. Quota periods start as
 * API Gateway's do with no offset: a DAY at 00:00 UTC, a WEEK on Sunday, a MONTH on its first day.
 */
import { randomBytes } from 'node:crypto';
import type { ApiKeyRecord, UsageKey } from '../../shared/api-keys-repository';
import { API_KEYS_PER_REGION } from '../../shared/usage-key-release';
import type { PlanLimits } from '../../shared/plan-policy';
import { plans, type Plans, type QuotaPeriod } from '../../shared/plans';

/**
 * A usage key of the local gateway's own, as the key tool pairs a key locally (there is no API
 * Gateway here): a random value, never the bearer key, and a local id.
 */
export const localUsageKey = (): UsageKey => ({
  usageKeyId: `local-${randomBytes(6).toString('hex')}`,
  usageKey: randomBytes(20).toString('hex'),
});

/** The variable that sets how many API keys the local gateway holds, as API Gateway holds API_KEYS_PER_REGION: a test sets a few. */
export const LOCAL_API_KEY_LIMIT_VARIABLE = 'LOCAL_API_KEY_LIMIT';

/** How many API keys the local gateway holds: LOCAL_API_KEY_LIMIT, by default API Gateway's quota. */
export const localApiKeyLimit = (env: Readonly<Record<string, string | undefined>>): number => {
  const value = env[LOCAL_API_KEY_LIMIT_VARIABLE];
  if (value === undefined || value === '') return API_KEYS_PER_REGION;
  if (!/^[1-9]\d{0,8}$/.test(value)) throw new Error(`${LOCAL_API_KEY_LIMIT_VARIABLE} must be a whole number of API keys, 1 or more.`);
  return Number(value);
};

/**
 * The local gateway's API keys: each usage key the keys table names and has not deleted, once. The
 * keys of a roll share one, and its deletion is recorded on the key whose release deleted it only
 * (the last of them to end): a usage key any record has recorded deleted is held by none, as
 * API Gateway holds no API key once it is deleted.
 */
export const localApiKeysHeld = (records: readonly ApiKeyRecord[]): number => {
  const deleted = new Set(records.filter((record) => record.usageKeyDeletedAt !== undefined).map((record) => record.usageKeyId));
  return new Set(records.map((record) => record.usageKeyId).filter((id) => id !== undefined && !deleted.has(id))).size;
};

/**
 * Every plan of shared/plans.ts at the most API Gateway allows a plan, without a quota: for the
 * tests and measurements that are not about plans, so that a plan never shapes their results.
 */
export const ROOMY_PLANS: Plans = Object.fromEntries(Object.keys(plans).map((name) => [name, { rateLimit: 10_000, burstLimit: 5_000 }]));

/** What the meter says of one request: let it through, or which refusal (the gateway response type). */
export type Metered = 'allowed' | 'THROTTLED' | 'QUOTA_EXCEEDED';

export interface UsageMeter {
  /** Meters one request of the key `usageKey` on `plan` at `at` (epoch milliseconds). */
  take(usageKey: string, plan: PlanLimits, at: number): Metered;
  /** The requests of `usageKey` let through on the UTC day of `at`, as GetUsage counts a day's use. */
  usedOn(usageKey: string, at: number): number;
  /** Takes back a request `take` let through at `at`: its token, and its place in the quota and the day's count. */
  giveBack(usageKey: string, plan: PlanLimits, at: number): void;
}

/** The UTC day of `at` (epoch milliseconds) as API Gateway's usage names days: YYYY-MM-DD. */
export const usageDay = (at: number): string => new Date(at).toISOString().slice(0, 10);

/** The start of the quota period that `at` falls in, in epoch milliseconds (UTC). */
export const quotaPeriodStart = (period: QuotaPeriod, at: number): number => {
  const day = new Date(at);
  day.setUTCHours(0, 0, 0, 0);
  if (period === 'WEEK') day.setUTCDate(day.getUTCDate() - day.getUTCDay());
  if (period === 'MONTH') day.setUTCDate(1);
  return day.getTime();
};

interface KeyUsage {
  tokens: number;
  refilledAt: number;
  periodStart: number;
  used: number;
  /** The start of the day `usedThatDay` counts, in epoch milliseconds (UTC). */
  day: number;
  usedThatDay: number;
}

export const createUsageMeter = (): UsageMeter => {
  const usage = new Map<string, KeyUsage>();

  return {
    take(usageKey, plan, at) {
      const periodStart = plan.quota ? quotaPeriodStart(plan.quota.period, at) : 0;
      const day = quotaPeriodStart('DAY', at);
      const current = usage.get(usageKey) ?? { tokens: plan.burstLimit, refilledAt: at, periodStart, used: 0, day, usedThatDay: 0 };
      usage.set(usageKey, current);

      const elapsed = Math.max(0, at - current.refilledAt); // a clock may step back
      current.tokens = Math.min(plan.burstLimit, current.tokens + (elapsed / 1000) * plan.rateLimit);
      current.refilledAt = at;
      if (current.tokens < 1) return 'THROTTLED';

      if (current.periodStart !== periodStart) {
        current.periodStart = periodStart;
        current.used = 0;
      }
      if (plan.quota && current.used >= plan.quota.limit) return 'QUOTA_EXCEEDED';

      if (current.day !== day) {
        current.day = day;
        current.usedThatDay = 0;
      }
      current.tokens -= 1;
      current.used += 1;
      current.usedThatDay += 1;
      return 'allowed';
    },
    giveBack(usageKey, plan, at) {
      const current = usage.get(usageKey);
      if (current === undefined) return;
      current.tokens = Math.min(plan.burstLimit, current.tokens + 1);
      if (current.periodStart === (plan.quota ? quotaPeriodStart(plan.quota.period, at) : 0)) current.used = Math.max(0, current.used - 1);
      if (current.day === quotaPeriodStart('DAY', at)) current.usedThatDay = Math.max(0, current.usedThatDay - 1);
    },
    usedOn(usageKey, at) {
      const current = usage.get(usageKey);
      return current !== undefined && current.day === quotaPeriodStart('DAY', at) ? current.usedThatDay : 0;
    },
  };
};
