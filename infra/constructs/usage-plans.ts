/**
 * UsagePlans: one API Gateway usage plan per plan of shared/plans.ts (with the stage's overrides),
 * each on the API's stage, and the shared usage key of the `default` plan. The API takes its API
 * keys from the authorizer (`usageIdentifierKey`): clients never send `x-api-key`. A key paired with
 * an API Gateway API key of its own (`npm run keys -- set-plan`) is metered on its plan; a key
 * without one (made before plans existed) is metered on the shared key, in the `default` plan.
 */
import { Fn } from 'aws-cdk-lib';
import { ApiKey, Period, UsagePlan, type RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Construct } from 'constructs';
import { DEFAULT_PLAN, type Plans, type QuotaPeriod } from '../../shared/plans';
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
  /**
   * The value of the shared usage key: unique to the stack (its id's UUID) and stable across
   * deployments. It identifies a metering bucket, not a client: API Gateway takes API keys only
   * from the authorizer here, so knowing it grants nothing.
   */
  readonly sharedUsageKeyValue: string;

  constructor(scope: Construct, id: string, { api, namePrefix, plans }: UsagePlansProps) {
    super(scope, id);
    const usagePlans = new Map<string, UsagePlan>();
    for (const [name, plan] of Object.entries(plans)) {
      usagePlans.set(
        name,
        new UsagePlan(this, `${pascalCase(name)}Plan`, {
          name: `${namePrefix}-${name}`,
          description:
            `Pet store plan '${name}': ${plan.rateLimit} requests/s, bursts of ${plan.burstLimit}` +
            (plan.quota ? `, ${plan.quota.limit} requests per ${plan.quota.period.toLowerCase()}` : ', no quota'),
          throttle: { rateLimit: plan.rateLimit, burstLimit: plan.burstLimit },
          ...(plan.quota ? { quota: { limit: plan.quota.limit, period: PERIODS[plan.quota.period] } } : {}),
          apiStages: [{ api, stage: api.deploymentStage }],
        }),
      );
    }
    this.plans = usagePlans;

    const stackUuid = Fn.select(2, Fn.split('/', Fn.ref('AWS::StackId')));
    this.sharedUsageKeyValue = Fn.join('-', ['shared', stackUuid]);
    const sharedKey = new ApiKey(this, 'SharedUsageKey', {
      apiKeyName: `${namePrefix}-shared-default`,
      description: `Meters the pet store keys that have no API key of their own, on the '${DEFAULT_PLAN}' plan.`,
      value: this.sharedUsageKeyValue,
      enabled: true,
    });
    usagePlans.get(DEFAULT_PLAN)?.addApiKey(sharedKey);
  }
}
