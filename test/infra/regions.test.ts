/**
 * A stage in several regions: each function that creates pets is told its region's index, which
 * the ids it mints carry, and a stack whose region has no index of its own is refused at synth.
 */
import { App, Stack } from 'aws-cdk-lib';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { PetStoreStack } from '../../infra/pet-store-stack';
import { stageSettings } from '../../infra/stages';
import { REGION_INDEX_VARIABLE } from '../../shared/ids';
import { routes, type Route } from '../../shared/routes';
import { stackName } from '../../shared/stack';
import { resourcesOf, synthStage, type SynthesizedStage } from './synth';

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

/** prod in REGIONS, its stack in eu-west-1: a region of the stage other than its home. */
let awayFromHome: SynthesizedStage | undefined;
const synthAwayFromHome = () => (awayFromHome ??= synthStage('prod', { regions: REGIONS }));

describe('the region index of a stage in several regions', () => {
  it("tells each function that creates pets its region's position in the stage's regions, and no other function", () => {
    expectOnlyCreatorsToHave(synthAwayFromHome(), '1');
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

describe('jobs that run once per stage', () => {
  const functionNames = ({ template }: SynthesizedStage) =>
    resourcesOf(template, 'AWS::Lambda::Function').map(({ properties }) => String(properties.FunctionName));
  const sweepName = 'pet-store-prod-idempotencySweep';

  it("builds the idempotency sweep and its schedule in the stage's home region (its first) only", () => {
    const away = synthAwayFromHome();
    expect(away.stack.idempotencySweep).toBeUndefined();
    expect(functionNames(away)).not.toContain(sweepName);
    const home = synthStage('prod', { regions: ['eu-west-1', 'us-east-1'] });
    expect(functionNames(home)).toContain(sweepName);
    expect(home.stack.idempotencySweep).toBeDefined();
    expect(resourcesOf(away.template, 'AWS::Events::Rule').length).toBe(resourcesOf(home.template, 'AWS::Events::Rule').length - 1);
  });
});
