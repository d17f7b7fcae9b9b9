/**
 * UsagePlans: one API Gateway usage plan per plan of shared/plans.ts (with the stage's overrides),
 * each on the API's stage, and the `shared` plan with its one API key. The API takes its API keys
 * from the authorizer (`usageIdentifierKey`): clients never send `x-api-key`. A key paired with an
 * API Gateway API key of its own (`npm run keys -- create` or `set-plan`) is metered on its plan; a
 * key without one (made before plans existed) on the shared key, whose plan is the stage throttle
 * with no quota: on deploy, such clients are limited exactly as before.
 */
import { Fn } from 'aws-cdk-lib';
import { ApiKey, Period, UsagePlan, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { SHARED_PLAN, type PlanLimits } from '../../shared/plan-policy';
import type { Plans, QuotaPeriod } from '../../shared/plans';
import { pascalCase } from './pet-store-functions';

export interface UsagePlansProps {
  readonly api: RestApi;
  /** Names the plans `<namePrefix>-<plan>` in the console. */
  readonly namePrefix: string;
  readonly plans: Plans;
  /** The stage throttle: the shared plan's limits. */
  readonly stageThrottle: { readonly rateLimit: number; readonly burstLimit: number };
}

const PERIODS: Readonly<Record<QuotaPeriod, Period>> = { DAY: Period.DAY, WEEK: Period.WEEK, MONTH: Period.MONTH };

export class UsagePlans extends Construct {
  /** Each plan's usage plan, by plan name (the shared plan apart). */
  readonly plans: ReadonlyMap<string, UsagePlan>;
  /** The shared usage key's plan. */
  readonly sharedPlan: UsagePlan;
  /**
   * The value of the shared usage key: unique to the stack (its id's UUID) and stable across
   * deployments. It identifies a metering bucket, not a client: API Gateway takes API keys only
   * from the authorizer here, so knowing it grants nothing.
   */
  readonly sharedUsageKeyValue: string;

  constructor(scope: Construct, id: string, { api, namePrefix, plans, stageThrottle }: UsagePlansProps) {
    super(scope, id);
    const usagePlan = (name: string, plan: PlanLimits, what: string) =>
      new UsagePlan(this, `${pascalCase(name)}Plan`, {
        name: `${namePrefix}-${name}`,
        description:
          `Pet store ${what}: ${plan.rateLimit} requests/s, bursts of ${plan.burstLimit}` +
          (plan.quota ? `, ${plan.quota.limit} requests per ${plan.quota.period.toLowerCase()}` : ', no quota'),
        throttle: { rateLimit: plan.rateLimit, burstLimit: plan.burstLimit },
        ...(plan.quota ? { quota: { limit: plan.quota.limit, period: PERIODS[plan.quota.period] } } : {}),
        apiStages: [{ api, stage: api.deploymentStage }],
      });
    this.plans = new Map(Object.entries(plans).map(([name, plan]) => [name, usagePlan(name, plan, `plan '${name}'`)]));
    this.sharedPlan = usagePlan(SHARED_PLAN, stageThrottle, 'keys without an API key of their own, together (the stage throttle)');

    const stackUuid = Fn.select(2, Fn.split('/', Fn.ref('AWS::StackId')));
    this.sharedUsageKeyValue = Fn.join('-', ['shared', stackUuid]);
    const sharedKey = new ApiKey(this, 'SharedUsageKey', {
      apiKeyName: `${namePrefix}-shared`,
      description: `Meters together the pet store keys that have no API key of their own, on the '${SHARED_PLAN}' plan.`,
      value: this.sharedUsageKeyValue,
      enabled: true,
    });
    this.sharedPlan.addApiKey(sharedKey);
  }
}
