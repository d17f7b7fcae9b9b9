/**
 * Usage plans in the synthesized stack: one API Gateway usage plan per plan on the stage, API keys
 * taken from the authorizer, required on every method, and the shared key of the default plan.
 */
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { stageSettings } from '../../infra/stages';
import { DEFAULT_PLAN, plans, SHARED_USAGE_KEY_VARIABLE, USAGE_PLANS_VARIABLE } from '../../shared/plans';
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

  it('put the shared usage key in the default plan, and give its value to the authorizer', () => {
    const [sharedKey] = resourcesOf(template, 'AWS::ApiGateway::ApiKey');
    expect(sharedKey?.properties.Enabled).toBe(true);
    template.hasResourceProperties('AWS::ApiGateway::UsagePlanKey', {
      KeyType: 'API_KEY',
      KeyId: { Ref: sharedKey?.logicalId },
      UsagePlanId: { Ref: logicalId(stack.api.usagePlans.plans.get(DEFAULT_PLAN)!) },
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ [SHARED_USAGE_KEY_VARIABLE]: sharedKey?.properties.Value }) },
    });
    expect(JSON.stringify(sharedKey?.properties.Value)).toContain('AWS::StackId');
  });

  it("give the authorizer the stage's plans, overrides included, from which it states each key's RateLimit-Policy", () => {
    const overridden = { ...plans, partner: { rateLimit: 500, burstLimit: 1_000 } };
    const variablesOf = (synthesized: { template: typeof template }) =>
      resourcesOf(synthesized.template, 'AWS::Lambda::Function')
        .map(({ properties }) => (properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {})
        .find((variables) => SHARED_USAGE_KEY_VARIABLE in variables);
    expect(JSON.parse(String(variablesOf({ template })?.[USAGE_PLANS_VARIABLE]))).toEqual(plans);
    expect(JSON.parse(String(variablesOf(synthStage('big', { plans: overridden }))?.[USAGE_PLANS_VARIABLE]))).toEqual(overridden);
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
    const settings = stageSettings('big', { big: { plans: { partner: { rateLimit: 500, burstLimit: 1_000 } } } });
    expect(settings.plans).toEqual({ ...plans, partner: { rateLimit: 500, burstLimit: 1_000 } });
  });

  it('are refused at synth when a plan is not valid', () => {
    expect(() => stageSettings('bad', { bad: { plans: { partner: { rateLimit: -1, burstLimit: 1 } } } })).toThrow(
      /Stage 'bad': plans\.partner\.rateLimit/,
    );
  });
});
