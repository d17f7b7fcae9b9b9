/**
 * Usage plans in the synthesized stack: one API Gateway usage plan per plan on the stage, and API
 * keys taken from the authorizer, required on every method.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { stageSettings } from '../../infra/stages';
import { plans, USAGE_PLANS_VARIABLE } from '../../shared/plans';
import { STAGE_NAME } from '../../shared/routes';
import { stackOutputs } from '../../shared/stack';
import { keylessMethods, methodsOf, resourcesOf, synthStage } from './synth';

const { template, stack } = synthStage('staging');
const logicalId = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as never);

describe('the API', () => {
  it('takes API keys from the authorizer, never from a header clients send', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER' });
  });

  it('requires an API key on every method but the CORS preflights and the keyless routes', () => {
    const methods = methodsOf(template);
    expect(methods.length).toBeGreaterThan(0);
    for (const method of methods) {
      const { properties } = resourcesOf(template, 'AWS::ApiGateway::Method').find(
        (candidate) => candidate.logicalId === method.logicalId,
      )!;
      expect({ method: `${method.method} ${method.path}`, required: properties.ApiKeyRequired }).toEqual({
        method: `${method.method} ${method.path}`,
        required: method.method !== 'OPTIONS' && !keylessMethods.includes(`${method.method} ${method.path}`),
      });
    }
  });
});

describe('the usage plans', () => {
  it('are one per plan, with its throttle and quota, on the stage', () => {
    const usagePlans = resourcesOf(template, 'AWS::ApiGateway::UsagePlan');
    expect(usagePlans.map(({ properties }) => properties.UsagePlanName)).toEqual(
      Object.keys(plans).map((name) => `pet-store-staging-${name}`),
    );
    for (const [name, plan] of Object.entries(plans)) {
      template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
        UsagePlanName: `pet-store-staging-${name}`,
        Throttle: { RateLimit: plan.rateLimit, BurstLimit: plan.burstLimit },
        Quota: plan.quota ? { Limit: plan.quota.limit, Period: plan.quota.period } : Match.absent(),
        ApiStages: [{ ApiId: { Ref: logicalId(stack.api.api) }, Stage: { Ref: logicalId(stack.api.api.deploymentStage) } }],
      });
    }
  });

  it('hold no API key of the stack: each key has its own, made by the key tool in its plan', () => {
    expect(resourcesOf(template, 'AWS::ApiGateway::ApiKey')).toEqual([]);
    expect(resourcesOf(template, 'AWS::ApiGateway::UsagePlanKey')).toEqual([]);
  });

  it("give the authorizer the stage's plans, overrides included, from which it states each key's RateLimit-Policy", () => {
    const overridden = { ...plans, partner: { rateLimit: 40, burstLimit: 80 } };
    // The authorizer is the one function that has them: the plans as they are, and nothing else metered.
    const plansGiven = (synthesized: { template: typeof template }) =>
      resourcesOf(synthesized.template, 'AWS::Lambda::Function')
        .map(({ properties }) => (properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {})
        .filter((variables) => USAGE_PLANS_VARIABLE in variables)
        .map((variables) => JSON.parse(String(variables[USAGE_PLANS_VARIABLE])) as unknown);
    expect(plansGiven({ template })).toEqual([plans]);
    expect(plansGiven(synthStage('big', { plans: overridden }))).toEqual([overridden]);
  });

  it('are published as an output: each plan’s usage plan id by name', () => {
    const output = template.findOutputs(stackOutputs.usagePlanIds)[stackOutputs.usagePlanIds];
    const rendered = JSON.stringify(output?.Value);
    for (const name of Object.keys(plans)) expect(rendered).toContain(`\\"${name}\\":`);
  });

  it('use the stage name the API is served under', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: STAGE_NAME });
  });
});

describe('stage overrides of the plans', () => {
  it('replace a plan by name and keep the others', () => {
    const settings = stageSettings('big', { big: { plans: { partner: { rateLimit: 40, burstLimit: 80 } } } });
    expect(settings.plans).toEqual({ ...plans, partner: { rateLimit: 40, burstLimit: 80 } });
  });

  it('are refused at synth above the stage throttle, the ceiling over every plan', () => {
    expect(() => stageSettings('big', { big: { plans: { partner: { rateLimit: 500, burstLimit: 1_000 } } } })).toThrow(
      "Stage 'big': plan 'partner' (500/s, bursts of 1000) is above the stage throttle (100/s, bursts of 200), the ceiling over every plan: lower the plan or raise the throttle.",
    );
    for (const stage of ['dev', 'staging', 'prod']) expect(() => stageSettings(stage)).not.toThrow();
  });

  it("are refused at synth when a quota would split below one request in each of the stage's regions", () => {
    const regions = ['us-east-1', 'us-east-2', 'us-west-2'];
    const tiny = { rateLimit: 1, burstLimit: 1, quota: { limit: regions.length - 1, period: 'DAY' as const } };
    expect(() => stageSettings('wide', { wide: { regions, plans: { tiny } } })).toThrow(
      `Stage 'wide': plan 'tiny': its quota of ${tiny.quota.limit} a day splits to less than 1 request in each of ${regions.length} regions: raise the quota to ${regions.length} or more.`,
    );
    expect(() =>
      stageSettings('wide', { wide: { regions, plans: { tiny: { ...tiny, quota: { ...tiny.quota, limit: regions.length } } } } }),
    ).not.toThrow();
  });

  it('are refused at synth when a plan is not valid', () => {
    expect(() => stageSettings('bad', { bad: { plans: { partner: { rateLimit: -1, burstLimit: 1 } } } })).toThrow(
      /Stage 'bad': plans\.partner\.rateLimit/,
    );
  });
});
