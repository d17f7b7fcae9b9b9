/**
 * UsagePlans: one API Gateway usage plan per plan of shared/plans.ts (with the stage's overrides),
 * each on the API's stage. The API takes its API keys from the authorizer (`usageIdentifierKey`):
 * clients never send `x-api-key`. Each key has an API Gateway API key of its own, made by
 * `npm run keys -- create` in the key's plan, which meters it there.
 */
import { Period, UsagePlan, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import type { PlanLimits } from '../../shared/plan-policy';
import type { Plans, QuotaPeriod } from '../../shared/plans';
import { pascalCase } from './pet-store-functions';

export interface UsagePlansProps {
  readonly api: RestApi;
  /** Names the plans `<namePrefix>-<plan>` in the console. */
  readonly namePrefix: string;
  readonly plans: Plans;
}

const PERIODS: Readonly<Record<QuotaPeriod, Period>> = { DAY: Period.DAY, WEEK: Period.WEEK, MONTH: Period.MONTH };

export class UsagePlans extends Construct {
  /** Each plan's usage plan, by plan name. */
  readonly plans: ReadonlyMap<string, UsagePlan>;

  constructor(scope: Construct, id: string, { api, namePrefix, plans }: UsagePlansProps) {
    super(scope, id);
    const usagePlan = (name: string, plan: PlanLimits) =>
      new UsagePlan(this, `${pascalCase(name)}Plan`, {
        name: `${namePrefix}-${name}`,
        description:
          `Pet store plan '${name}': ${plan.rateLimit} requests/s, bursts of ${plan.burstLimit}` +
          (plan.quota ? `, ${plan.quota.limit} requests per ${plan.quota.period.toLowerCase()}` : ', no quota'),
        throttle: { rateLimit: plan.rateLimit, burstLimit: plan.burstLimit },
        ...(plan.quota ? { quota: { limit: plan.quota.limit, period: PERIODS[plan.quota.period] } } : {}),
        apiStages: [{ api, stage: api.deploymentStage }],
      });
    this.plans = new Map(Object.entries(plans).map(([name, plan]) => [name, usagePlan(name, plan)]));
  }
}
