/**
 * A stage in several regions: each function that creates pets is told its region's index, which
 * the ids it mints carry, and a stack whose region has no index of its own is refused at synth;
 * each region's key audit knows the home region and flushes its own stage; each region's usage
 * plans carry its share of every quota.
 */
import { App, Stack } from 'aws-cdk-lib';
import type { CfnRestApi } from 'aws-cdk-lib/aws-apigateway';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { PetStoreStack } from '../../infra/pet-store-stack';
import { stageSettings } from '../../infra/stages';
import { API_STAGE_NAME_VARIABLE, REST_API_ID_VARIABLE } from '../../shared/authorizer-cache';
import { REGION_INDEX_VARIABLE } from '../../shared/ids';
import { policiesOf, policiesOfJson } from '../../shared/plan-policy';
import { USAGE_PLANS_VARIABLE } from '../../shared/plans';
import { HOME_REGION_VARIABLE } from '../../shared/key-audit';
import { routes, STAGE_NAME, type Route } from '../../shared/routes';
import { stackName } from '../../shared/stack';
import { resourcesOf, synthStage, synthStageIn, type SynthesizedStage } from './synth';

/** The operations whose route grants a put on the pets table: they create pets, so they mint ids. */
const petCreators = routes
  .filter((route: Route) =>
    (route.tableAccess ?? []).some(({ table, index, actions }) => table === 'pets' && !index && actions.includes('dynamodb:PutItem')),
  )
  .map(({ operationId }) => operationId);

/** The synthesized stage's region index variable, by function logical id, for every function that has one. */
const regionIndexes = ({ template }: SynthesizedStage) =>
  Object.fromEntries(
    resourcesOf(template, 'AWS::Lambda::Function').flatMap(({ logicalId, properties }) => {
      const variables = (properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
      return REGION_INDEX_VARIABLE in variables ? [[logicalId, variables[REGION_INDEX_VARIABLE]]] : [];
    }),
  );

const creatorLogicalIds = ({ stack }: SynthesizedStage) =>
  petCreators.map((operationId) => {
    const fn = stack.functions.operations.get(operationId);
    if (!fn) throw new Error(`no function for ${operationId}`);
    return Stack.of(fn).getLogicalId(fn.function.node.defaultChild as CfnFunction);
  });

const expectOnlyCreatorsToHave = (synthesized: SynthesizedStage, value: string) => {
  expect(petCreators.length).toBeGreaterThan(0);
  expect(regionIndexes(synthesized)).toEqual(Object.fromEntries(creatorLogicalIds(synthesized).map((id) => [id, value])));
};

// synthStage deploys to eu-west-1.
const REGIONS = ['us-east-1', 'eu-west-1', 'ap-southeast-2'];

describe('the region index of a stage in several regions', () => {
  it("tells each function that creates pets its region's position in the stage's regions, and no other function", () => {
    expectOnlyCreatorsToHave(synthStage('prod', { regions: REGIONS }), '1');
  });

  it('is 0 on a stage in one region', () => {
    expect(stageSettings('prod').regions).toBeUndefined();
    expectOnlyCreatorsToHave(synthStage('prod'), '0');
  });

  it("refuses at synth a region the stage's regions do not name", () => {
    expect(() => synthStage('prod', { regions: ['us-east-1', 'ap-southeast-2'] })).toThrow(
      /^Stage 'prod' runs in us-east-1, ap-southeast-2, not in eu-west-1: add eu-west-1 at the end of its regions \(infra\/stages\.ts\) first\.$/,
    );
  });

  it('refuses at synth a stage in several regions deployed to no region in particular', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const settings = { ...stageSettings('prod'), regions: REGIONS };
    expect(() => new PetStoreStack(app, stackName('prod'), { stage: 'prod', settings })).toThrow(
      /^Stage 'prod' runs in us-east-1, eu-west-1, ap-southeast-2: deploy it to one of them/,
    );
  });
});

describe('the key audit of a stage in several regions', () => {
  /** The key-audit function's environment in a synthesized stack. */
  const auditVariables = ({ stack, template }: SynthesizedStage) => {
    const logicalId = Stack.of(stack).getLogicalId(stack.keyAudit.writer.function.node.defaultChild as CfnFunction);
    const audit = resourcesOf(template, 'AWS::Lambda::Function').find((fn) => fn.logicalId === logicalId);
    return (audit?.properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
  };
  const restApiOf = ({ stack }: SynthesizedStage) => ({ Ref: Stack.of(stack).getLogicalId(stack.api.api.node.defaultChild as CfnRestApi) });
  const regions = stageSettings('global').regions ?? [];

  it.each(regions)(
    "in %s names the stage's home region, which records the unstamped changes, and its own region's stage to flush",
    (region) => {
      const synthesized = synthStageIn('global', region);
      expect(auditVariables(synthesized)).toMatchObject({
        [HOME_REGION_VARIABLE]: regions[0],
        [REST_API_ID_VARIABLE]: restApiOf(synthesized),
        [API_STAGE_NAME_VARIABLE]: STAGE_NAME,
      });
    },
  );

  it('names no home region on a stage in one region, whose audit records every change', () => {
    const synthesized = synthStage('prod');
    expect(auditVariables(synthesized)).not.toHaveProperty(HOME_REGION_VARIABLE);
    expect(auditVariables(synthesized)).toMatchObject({
      [REST_API_ID_VARIABLE]: restApiOf(synthesized),
      [API_STAGE_NAME_VARIABLE]: STAGE_NAME,
    });
  });
});

describe('the usage plans of a stage in several regions', () => {
  const settings = stageSettings('global');
  const regions = settings.regions ?? [];
  /** A plan as each region must meter it: the plan's rate and burst, its quota's even share (rounded down). */
  const share = (limit: number) => Math.floor(limit / regions.length);

  it.each(regions)(
    "carry in %s each plan's rate and burst as they are, and its quota's share: the quota over the regions, rounded down",
    (region) => {
      expect(regions.length).toBeGreaterThan(1);
      const { template: regional } = synthStageIn('global', region);
      const usagePlans = resourcesOf(regional, 'AWS::ApiGateway::UsagePlan').map(({ properties }) => properties);
      expect(usagePlans.map((plan) => plan.UsagePlanName)).toEqual(Object.keys(settings.plans).map((name) => `pet-store-global-${name}`));
      for (const [name, plan] of Object.entries(settings.plans)) {
        expect(usagePlans.find((usagePlan) => usagePlan.UsagePlanName === `pet-store-global-${name}`)).toMatchObject({
          Throttle: { RateLimit: plan.rateLimit, BurstLimit: plan.burstLimit },
          ...(plan.quota ? { Quota: { Limit: share(plan.quota.limit), Period: plan.quota.period } } : {}),
        });
      }
    },
  );

  it.each(regions)(
    "give the authorizer in %s the region's plans, so that RateLimit-Policy states the region's share of each quota",
    (region) => {
      const { template: regional } = synthStageIn('global', region);
      const [given] = resourcesOf(regional, 'AWS::Lambda::Function')
        .map(({ properties }) => (properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {})
        .filter((variables) => USAGE_PLANS_VARIABLE in variables)
        .map((variables) => String(variables[USAGE_PLANS_VARIABLE]));
      const policies = policiesOfJson(given);
      // As a one-region stage states it, but for the quota: the region's share.
      const whole = policiesOf(settings.plans);
      expect(Object.values(settings.plans).some((plan) => plan.quota !== undefined)).toBe(true);
      for (const [name, plan] of Object.entries(settings.plans)) {
        const quotaOf = (limit: number) => `"${name}-quota";q=${limit};`;
        const expected = plan.quota
          ? whole.get(name)?.replace(quotaOf(plan.quota.limit), quotaOf(share(plan.quota.limit)))
          : whole.get(name);
        expect(policies.get(name)).toBe(expected);
      }
    },
  );
});
