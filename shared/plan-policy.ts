/**
 * What the authorizer needs to know of the usage plans, without zod or the file system (its
 * bundle stays lean): the names of its settings, the `default` plan, and a plan's
 * `RateLimit-Policy` (IETF httpapi ratelimit-headers draft). shared/plans.ts defines the plans.
 */

export const DEFAULT_PLAN = 'default';

/**
 * The plan of the shared usage key, which meters together the keys that have no API key of their
 * own (made before plans, until set-plan pairs them): the stage's throttle and no quota, so that
 * such clients are limited on deploy exactly as before plans. A reserved name: no plan of
 * shared/plans.ts may take it, and no key may be put on it.
 */
export const SHARED_PLAN = 'shared';

export const QUOTA_PERIODS = ['DAY', 'WEEK', 'MONTH'] as const;
export type QuotaPeriod = (typeof QUOTA_PERIODS)[number];

/** A plan's limits, with API Gateway's field names (shared/plans.ts checks them). */
export interface PlanLimits {
  readonly rateLimit: number;
  readonly burstLimit: number;
  readonly quota?: { readonly limit: number; readonly period: QuotaPeriod };
}

/**
 * The variable that gives the authorizer the value of the `default` plan's shared usage key, which
 * meters the keys that have no API Gateway API key of their own.
 */
export const SHARED_USAGE_KEY_VARIABLE = 'SHARED_USAGE_KEY';

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

/** A key's own usage key (its API Gateway API key's value), when its item holds one: a non-empty string. */
export const ownUsageKey = (record: { readonly usageKey?: unknown }): string | undefined =>
  typeof record.usageKey === 'string' && record.usageKey !== '' ? record.usageKey : undefined;

/** Whether a key is metered on the shared usage key: it has none of its own (a key from before plans, until set-plan). */
export const onSharedUsageKey = (record: { readonly usageKey?: unknown }): boolean => ownUsageKey(record) === undefined;

/**
 * The plan a key is metered on: with a usage key of its own, its `plan` (the plan that key is in;
 * `default` when it names none); without one, the shared plan.
 */
export const meteredPlan = (record: { readonly usageKey?: unknown; readonly plan?: unknown }): string => {
  if (onSharedUsageKey(record)) return SHARED_PLAN;
  return typeof record.plan !== 'string' || record.plan === '' ? DEFAULT_PLAN : record.plan;
};

/** The plans with the shared plan added: the stage's throttle (the ceiling over every plan), and no quota. */
export const withSharedPlan = <P extends PlanLimits>(
  plans: Readonly<Record<string, P>>,
  stageThrottle: { readonly rateLimit: number; readonly burstLimit: number },
): Readonly<Record<string, P | PlanLimits>> => ({
  ...plans,
  [SHARED_PLAN]: { rateLimit: stageThrottle.rateLimit, burstLimit: stageThrottle.burstLimit },
});
