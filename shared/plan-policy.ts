/**
 * What the authorizer needs to know of the usage plans, without zod or the file system (its
 * bundle stays lean): the names of its settings, the `default` plan, how a key's item names the
 * API key that meters it, and a plan's `RateLimit-Policy` (IETF httpapi ratelimit-headers draft).
 * shared/plans.ts defines the plans.
 */
import { hash } from 'node:crypto';

export const DEFAULT_PLAN = 'default';

export const QUOTA_PERIODS = ['DAY', 'WEEK', 'MONTH'] as const;
export type QuotaPeriod = (typeof QUOTA_PERIODS)[number];

/** A plan's limits, with API Gateway's field names (shared/plans.ts checks them). */
export interface PlanLimits {
  readonly rateLimit: number;
  readonly burstLimit: number;
  readonly quota?: { readonly limit: number; readonly period: QuotaPeriod };
}

/** The variable that gives the authorizer the stage's plans, as JSON `{"NAME": {rateLimit, burstLimit, quota?}}`. */
export const USAGE_PLANS_VARIABLE = 'USAGE_PLANS';

export const RATE_LIMIT_POLICY_HEADER = 'RateLimit-Policy';

/** A quota period's window in seconds, as the policy states it (a MONTH as 30 days). */
export const QUOTA_PERIOD_SECONDS: Readonly<Record<QuotaPeriod, number>> = { DAY: 86_400, WEEK: 604_800, MONTH: 2_592_000 };

/**
 * A plan's `RateLimit-Policy` value: its steady rate as `"NAME";q=…;w=…` (whole requests in a
 * window of whole seconds, never more than the rate allows), and its quota, if any, as
 * `"NAME-quota";q=…;w=…`. The burst is not stated: it is a grace, not a rate to plan on.
 */
export const rateLimitPolicyValue = (name: string, plan: PlanLimits): string => {
  const window = Math.max(1, Math.ceil(1 / plan.rateLimit));
  const rate = `"${name}";q=${Math.max(1, Math.floor(plan.rateLimit * window))};w=${window}`;
  return plan.quota ? `${rate}, "${name}-quota";q=${plan.quota.limit};w=${QUOTA_PERIOD_SECONDS[plan.quota.period]}` : rate;
};

const isPlanLimits = (value: unknown): value is PlanLimits => {
  if (typeof value !== 'object' || value === null) return false;
  const { rateLimit, burstLimit, quota } = value as Record<string, unknown>;
  if (typeof rateLimit !== 'number' || !(rateLimit > 0) || typeof burstLimit !== 'number' || !(burstLimit > 0)) return false;
  if (quota === undefined) return true;
  if (typeof quota !== 'object' || quota === null) return false;
  const { limit, period } = quota as Record<string, unknown>;
  return typeof limit === 'number' && limit > 0 && typeof period === 'string' && period in QUOTA_PERIOD_SECONDS;
};

/**
 * Each plan's `RateLimit-Policy`, from the JSON of `USAGE_PLANS`. What is not a plan is left out
 * (its keys' answers go without the header): the header is advice, never a reason to refuse.
 */
export const policiesOfJson = (json: string | undefined): ReadonlyMap<string, string> => {
  let parsed: unknown;
  try {
    parsed = json === undefined ? {} : JSON.parse(json);
  } catch {
    parsed = {};
  }
  return policiesOf(typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {});
};

export const policiesOf = (plans: Readonly<Record<string, unknown>>): ReadonlyMap<string, string> =>
  new Map(
    Object.entries(plans).flatMap(([name, plan]): Array<[string, string]> =>
      isPlanLimits(plan) ? [[name, rateLimitPolicyValue(name, plan)]] : [],
    ),
  );

/** The usage key's ids in a stage's other regions, by region (API Gateway API keys are regional). */
export type RegionUsageKeyIds = Readonly<Record<string, string>>;

/**
 * What ties a key's usage key to the key: the SHA-256 of the key's hash, the usage key's id and its
 * value, and, in a stage of several regions, its ids in the other regions, written with them
 * (`usageKeyBinding`) when the key is created or rolled. A usage key copied from another key's
 * item, with or without its ids and binding, does not match it, so no release of this key deletes
 * another key's API key in any region. It is no MAC: it makes the item's attributes agree, and
 * someone who may write the table could compute one.
 */
export const usageKeyBinding = (keyHash: string, usageKeyId: string, usageKey: string, regionUsageKeyIds?: RegionUsageKeyIds): string =>
  hash(
    'sha256',
    JSON.stringify(
      regionUsageKeyIds === undefined
        ? [keyHash, usageKeyId, usageKey]
        : // By region name: the map's order as stored is no part of it.
          [keyHash, usageKeyId, usageKey, Object.entries(regionUsageKeyIds).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))],
    ),
    'hex',
  );

/**
 * Why a key's item cannot be metered, so that the authorizer refuses it: no usage key (or no id
 * of one), a usage key that was not written for this key, or no plan. Every key has all three from
 * its creation; an item without them was changed by hand.
 */
export type MeteringRefusal = 'no-usage-key' | 'usage-key-mismatch' | 'no-plan';

/**
 * How a key is metered: the API key API Gateway meters on the key's plan (its id, and its value,
 * the authorizer's `usageIdentifierKey`); or why it cannot be.
 */
export type Metering =
  | {
      readonly usageKeyId: string;
      readonly usageIdentifierKey: string;
      readonly plan: string;
      /** Its ids in the stage's other regions, each an API key of the same value: none in a stage of one region. */
      readonly regionUsageKeyIds?: RegionUsageKeyIds;
    }
  | { readonly refused: MeteringRefusal };

/** An attribute as a non-empty string, as the console may have typed it otherwise. */
const textOf = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** A stored `regionUsageKeyIds`: a map of texts, or undefined for anything else a console edit left. */
const regionIdsOf = (value: unknown): RegionUsageKeyIds | undefined => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  return entries.every(([, id]) => textOf(id) !== undefined) ? Object.fromEntries(entries) : undefined;
};

/**
 * A key item's metering, from its `usageKeyId`, `usageKey`, `regionUsageKeyIds`, `usageKeyBinding`
 * and `plan`: nothing is assumed for a missing one.
 */
export const meteringOf = (record: {
  readonly keyHash: string;
  readonly plan?: unknown;
  readonly usageKeyId?: unknown;
  readonly usageKey?: unknown;
  readonly regionUsageKeyIds?: unknown;
  readonly usageKeyBinding?: unknown;
}): Metering => {
  const usageKeyId = textOf(record.usageKeyId);
  const usageKey = textOf(record.usageKey);
  if (usageKeyId === undefined || usageKey === undefined) return { refused: 'no-usage-key' };
  const regionUsageKeyIds = regionIdsOf(record.regionUsageKeyIds);
  if (record.regionUsageKeyIds !== undefined && regionUsageKeyIds === undefined) return { refused: 'usage-key-mismatch' };
  if (record.usageKeyBinding !== usageKeyBinding(record.keyHash, usageKeyId, usageKey, regionUsageKeyIds)) {
    return { refused: 'usage-key-mismatch' };
  }
  const plan = textOf(record.plan);
  if (plan === undefined) return { refused: 'no-plan' };
  return { usageKeyId, usageIdentifierKey: usageKey, plan, ...(regionUsageKeyIds === undefined ? {} : { regionUsageKeyIds }) };
};
