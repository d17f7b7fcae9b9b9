/**
 * Usage plans: how fast, and how much, each client may call. Defined once here; the stack makes
 * each plan an API Gateway usage plan on the stage, and the local gateway enforces the same values.
 * Field names are API Gateway's (`rateLimit`, `burstLimit`, `quota.limit`, `quota.period`).
 * Each key names its plan; a new key is on `default` unless it is given another.
 */
import { readFileSync } from 'node:fs';
import * as z from 'zod/mini';
import { DEFAULT_PLAN, QUOTA_PERIODS } from './plan-policy';

// Defined with what the authorizer reads (shared/plan-policy.ts, without zod), and offered here too.
export { DEFAULT_PLAN, QUOTA_PERIODS, USAGE_PLANS_VARIABLE, type QuotaPeriod } from './plan-policy';

/** The name of a plan: what the key tool accepts and the keys table stores. */
export const PLAN_NAME_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;

export const Plan = z.strictObject({
  /** Steady requests per second a key may send. */
  rateLimit: z.number().check(z.positive(), z.lte(10_000)),
  /** Requests a key may send at once above the steady rate. */
  burstLimit: z.int().check(z.positive(), z.lte(5_000)),
  /** Requests a key may send per period; none means no quota. */
  quota: z.optional(z.strictObject({ limit: z.int().check(z.positive()), period: z.enum(QUOTA_PERIODS) })),
});
export type Plan = z.infer<typeof Plan>;

export const Plans = z
  .record(z.string().check(z.regex(PLAN_NAME_PATTERN, 'a plan name is 1-32 lower-case letters, digits or hyphens')), Plan)
  .check(z.refine((plans) => Object.hasOwn(plans, DEFAULT_PLAN), `there must be a '${DEFAULT_PLAN}' plan`));
export type Plans = z.infer<typeof Plans>;

/** The plans every stage has unless it overrides them (infra/stages.ts). */
export const plans: Plans = {
  default: { rateLimit: 10, burstLimit: 20, quota: { limit: 100_000, period: 'DAY' } },
  // At most the smallest stage throttle (infra/stages.ts), the ceiling over every plan.
  partner: { rateLimit: 50, burstLimit: 100, quota: { limit: 5_000_000, period: 'MONTH' } },
};

/** The variable naming a JSON file of plans that replaces these, for trying things out and for tests. */
export const PLANS_FILE_VARIABLE = 'PLANS_FILE';

const PlansFile = z.strictObject({ plans: Plans });

/** The plans in force: those of `PLANS_FILE` when it is set, else the ones above. Throws one line naming the problem. */
export const plansInForce = (env: Readonly<Record<string, string | undefined>> = process.env): Plans => {
  const path = env[PLANS_FILE_VARIABLE];
  if (!path) return plans;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new Error(`${PLANS_FILE_VARIABLE}: cannot read ${path}.`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${PLANS_FILE_VARIABLE}: ${path} is not JSON.`);
  }
  const parsed = PlansFile.safeParse(json);
  if (parsed.success) return parsed.data.plans;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join('.') : 'the file';
  throw new Error(
    `${PLANS_FILE_VARIABLE}: ${path}: ${where}: ${issue?.message ?? 'not a plans file'} (expected {"plans": {"NAME": {"rateLimit", "burstLimit", "quota"?}}}).`,
  );
};

/**
 * The plans as each region of a stage in `regionCount` regions meters them. API Gateway's usage
 * plans are per region, and a client may call any region: each region keeps the plan's rate and
 * burst as they are (a rate limit applies per region) and an even share of its quota,
 * `floor(quota / regionCount)`, so that a client's quota over every region together is at most the
 * plan's. One region: the plans as they are. Throws, naming the plan, when a quota would split to
 * less than one request a region.
 */
export const regionalPlans = (stagePlans: Plans, regionCount: number): Plans => {
  if (!Number.isInteger(regionCount) || regionCount < 1) throw new Error(`A stage runs in 1 region or more, not ${regionCount}.`);
  if (regionCount === 1) return stagePlans;
  return Object.fromEntries(
    Object.entries(stagePlans).map(([name, plan]) => {
      if (plan.quota === undefined) return [name, plan];
      const share = Math.floor(plan.quota.limit / regionCount);
      if (share < 1) {
        throw new Error(
          `plan '${name}': its quota of ${plan.quota.limit} a ${plan.quota.period.toLowerCase()} splits to less than 1 request ` +
            `in each of ${regionCount} regions: raise the quota to ${regionCount} or more.`,
        );
      }
      return [name, { ...plan, quota: { ...plan.quota, limit: share } }];
    }),
  );
};
