/**
 * Usage plans in the synthesized stack: one API Gateway usage plan per plan on the stage, API keys
 * taken from the authorizer, required on every method, and the shared key of the default plan.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { stageSettings } from '../../infra/stages';
import { plans, SHARED_USAGE_KEY_VARIABLE, USAGE_PLANS_VARIABLE } from '../../shared/plans';
import { STAGE_NAME } from '../../shared/routes';
import { stackOutputs } from '../../shared/stack';
import { methodsOf, resourcesOf, synthStage } from './synth';

const { template, stack } = synthStage('staging');
const logicalId = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as never);

describe('the API', () => {
  it('takes API keys from the authorizer, never from a header clients send', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER' });
  });

  it('requires an API key on every method but the CORS preflights', () => {
    const methods = methodsOf(template);
    expect(methods.length).toBeGreaterThan(0);
    for (const method of methods) {
      const { properties } = resourcesOf(template, 'AWS::ApiGateway::Method').find(
        (candidate) => candidate.logicalId === method.logicalId,
      )!;
      expect({ method: `${method.method} ${method.path}`, required: properties.ApiKeyRequired }).toEqual({
        method: `${method.method} ${method.path}`,
        required: method.method !== 'OPTIONS',
      });
    }
  });
});

describe('a stage from before plans, deployed first with enforceUsagePlans off', () => {
  const first = synthStage('staging', { enforceUsagePlans: false });

  it('requires no API key yet, so that API Gateway refuses no one while the plans and the shared key appear', () => {
    const required = resourcesOf(first.template, 'AWS::ApiGateway::Method').map(({ properties }) => properties.ApiKeyRequired ?? false);
    expect(required.length).toBeGreaterThan(0);
    expect(required.every((value) => value === false)).toBe(true);
  });

  it('already has every usage plan and the shared usage key, for the deploy that turns it on', () => {
    expect(resourcesOf(first.template, 'AWS::ApiGateway::UsagePlan')).toHaveLength(Object.keys(plans).length + 1);
    expect(resourcesOf(first.template, 'AWS::ApiGateway::ApiKey')).toHaveLength(1);
  });
});

describe('the usage plans', () => {
  it('are one per plan, with its throttle and quota, on the stage', () => {
    const usagePlans = resourcesOf(template, 'AWS::ApiGateway::UsagePlan');
    expect(usagePlans.map(({ properties }) => properties.UsagePlanName)).toEqual([
      ...Object.keys(plans).map((name) => `pet-store-staging-${name}`),
      'pet-store-staging-shared',
    ]);
    for (const [name, plan] of Object.entries(plans)) {
      template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
        UsagePlanName: `pet-store-staging-${name}`,
        Throttle: { RateLimit: plan.rateLimit, BurstLimit: plan.burstLimit },
        Quota: plan.quota ? { Limit: plan.quota.limit, Period: plan.quota.period } : Match.absent(),
        ApiStages: [{ ApiId: { Ref: logicalId(stack.api.api) }, Stage: { Ref: logicalId(stack.api.api.deploymentStage) } }],
      });
    }
  });

  it('give the keys from before plans a plan of their own: the stage throttle, no quota, as before plans', () => {
    const { throttle } = stageSettings('staging');
    template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      UsagePlanName: 'pet-store-staging-shared',
      Throttle: { RateLimit: throttle.rateLimit, BurstLimit: throttle.burstLimit },
      Quota: Match.absent(),
    });
  });

  it('put the shared usage key in the shared plan, and give its value to the authorizer', () => {
    const [sharedKey] = resourcesOf(template, 'AWS::ApiGateway::ApiKey');
    expect(sharedKey?.properties.Enabled).toBe(true);
    template.hasResourceProperties('AWS::ApiGateway::UsagePlanKey', {
      KeyType: 'API_KEY',
      KeyId: { Ref: sharedKey?.logicalId },
      UsagePlanId: { Ref: logicalId(stack.api.usagePlans.sharedPlan) },
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ [SHARED_USAGE_KEY_VARIABLE]: sharedKey?.properties.Value }) },
    });
    expect(JSON.stringify(sharedKey?.properties.Value)).toContain('AWS::StackId');
  });

  it("give the authorizer the stage's plans, overrides included, from which it states each key's RateLimit-Policy", () => {
    const overridden = { ...plans, partner: { rateLimit: 40, burstLimit: 80 } };
    const shared = (throttle: { rateLimit: number; burstLimit: number }) => ({ shared: { ...throttle } });
    const variablesOf = (synthesized: { template: typeof template }) =>
      resourcesOf(synthesized.template, 'AWS::Lambda::Function')
        .map(({ properties }) => (properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {})
        .find((variables) => SHARED_USAGE_KEY_VARIABLE in variables);
    const { throttle } = stageSettings('staging');
    expect(JSON.parse(String(variablesOf({ template })?.[USAGE_PLANS_VARIABLE]))).toEqual({ ...plans, ...shared(throttle) });
    expect(JSON.parse(String(variablesOf(synthStage('big', { plans: overridden }))?.[USAGE_PLANS_VARIABLE]))).toEqual({
      ...overridden,
      ...shared(stageSettings('big').throttle),
    });
  });

  it('are published as an output: each plan’s usage plan id by name', () => {
    const output = template.findOutputs(stackOutputs.usagePlanIds)[stackOutputs.usagePlanIds];
    const rendered = JSON.stringify(output?.Value);
    for (const name of Object.keys(plans)) expect(rendered).toContain(`\\"${name}\\":`);
    // No key is put on the shared plan: it is not one of the plans to choose from.
    expect(rendered).not.toContain('\\"shared\\":');
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
      "Stage 'big': plan 'partner' (500/s, bursts of 1000) is above the stage throttle (50/s, bursts of 100), the ceiling over every plan: lower the plan or raise the throttle.",
    );
    for (const stage of ['dev', 'staging', 'prod']) expect(() => stageSettings(stage)).not.toThrow();
  });

  it("refuse a plan named 'shared', the shared usage key's", () => {
    expect(() => stageSettings('bad', { bad: { plans: { shared: { rateLimit: 1, burstLimit: 1 } } } })).toThrow(/'shared' is reserved/);
  });

  it('are refused at synth when a plan is not valid', () => {
    expect(() => stageSettings('bad', { bad: { plans: { partner: { rateLimit: -1, burstLimit: 1 } } } })).toThrow(
      /Stage 'bad': plans\.partner\.rateLimit/,
    );
  });
});
