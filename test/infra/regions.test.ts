/**
 * A stage in several regions: one stack per region, named alike, the home region's first, defining
 * the global tables (replicated; the idempotency records strongly consistent) that the others
 * import, and running the once-only jobs; each function that creates pets is told its region's
 * index, which the ids it mints carry, and a stack whose region has no index of its own is refused
 * at synth; each region's key audit knows the home region and flushes its own stage; each region's
 * usage plans carry its share of every quota. A stage in one region is one stack, as before.
 */
import { App, Stack } from 'aws-cdk-lib';
import type { CfnRestApi } from 'aws-cdk-lib/aws-apigateway';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { PetStoreStack } from '../../infra/pet-store-stack';
import { regionalStackId } from '../../infra/stage-stacks';
import { homeRegionOf, MRSC_REGION_SETS, stageSettings, type StageOverrides } from '../../infra/stages';
import { API_STAGE_NAME_VARIABLE, REST_API_ID_VARIABLE } from '../../shared/authorizer-cache';
import { REGION_INDEX_VARIABLE } from '../../shared/ids';
import { HOME_REGION_VARIABLE } from '../../shared/key-audit';
import { policiesOf, policiesOfJson } from '../../shared/plan-policy';
import { USAGE_PLANS_VARIABLE } from '../../shared/plans';
import { PROJECT_NAME } from '../../shared/project';
import { routes, STAGE_NAME, type Route } from '../../shared/routes';
import { deployedTableName, stackName, stackOutputs } from '../../shared/stack';
import { apiKeysTable, idempotencyTable, petsTable, tableDefinitions } from '../../shared/tables';
import { templateResolver, type CfnTemplate, type PolicyDocument } from '../support/iam-simulation';
import {
  multiRegionStages,
  resourcesOf,
  stageStacksOf,
  synthStage,
  synthStageIn,
  synthStageStacks,
  TEST_ACCOUNT,
  TEST_REGION,
  type SynthesizedStage,
} from './synth';

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

// synthStage deploys to eu-west-1, here the second of one region set.
const REGIONS = ['eu-west-2', 'eu-west-1', 'eu-central-1'];

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
      /^Stage 'prod' runs in eu-west-2, eu-west-1, eu-central-1: deploy it to one of them/,
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
/** The functions a schedule (an EventBridge rule) runs in a stack: the name of each rule's target, once per rule. */
const scheduledFunctionNames = ({ template, stack }: SynthesizedStage) => {
  const resolver = templateResolver(template.toJSON() as CfnTemplate, stack.region);
  return resourcesOf(template, 'AWS::Events::Rule').flatMap(({ properties }) =>
    (properties.Targets as Array<{ Arn: unknown }>).map(({ Arn }) =>
      String(resolver.resolve(Arn)).replace(/^arn:aws:lambda:[^:]+:[^:]+:function:([^:]+)(:.*)?$/, '$1'),
    ),
  );
};

describe('jobs that run once per stage', () => {
  const functionNames = ({ template }: SynthesizedStage) =>
    resourcesOf(template, 'AWS::Lambda::Function').map(({ properties }) => String(properties.FunctionName));
  const sweepName = 'pet-store-prod-idempotencySweep';

  it("builds the idempotency sweep and its schedule in the stage's home region (its first) only", () => {
    const away = synthAwayFromHome();
    expect(away.stack.idempotencySweep).toBeUndefined();
    expect(functionNames(away)).not.toContain(sweepName);
    expect(scheduledFunctionNames(away)).not.toContain(sweepName);
    // The same regions with this stack's first: its home.
    const home = synthStage('prod', { regions: [TEST_REGION, ...REGIONS.filter((region) => region !== TEST_REGION)] });
    expect(home.stack.isHomeRegion).toBe(true);
    expect(home.stack.idempotencySweep).toBeDefined();
    expect(functionNames(home)).toContain(sweepName);
    expect(scheduledFunctionNames(home).filter((name) => name === sweepName)).toHaveLength(1);
  });
});

/** The stage the checks below run on: every stage whose settings list several regions. */
const [STAGE = ''] = multiRegionStages();
const settings = () => stageSettings(STAGE);
const stacks = () => stageStacksOf(STAGE);
const home = () => {
  const found = stacks().find(({ stack }) => stack.region === homeRegionOf(settings()));
  if (!found) throw new Error(`no stack in ${STAGE}'s home region`);
  return found;
};
const others = () => stacks().filter((synthesized) => synthesized !== home());
/** The functions a stack's schedules run, each by its name in the stack (`keyExpiry`), through its alias. */
const scheduledFunctions = (synthesized: SynthesizedStage): string[] => {
  const functionOfAlias = new Map(
    resourcesOf(synthesized.template, 'AWS::Lambda::Alias').map(({ logicalId, properties }) => [
      logicalId,
      (properties.FunctionName as { Ref?: string }).Ref,
    ]),
  );
  const nameOf = new Map(
    resourcesOf(synthesized.template, 'AWS::Lambda::Function').map(({ logicalId, properties }) => [
      logicalId,
      String(properties.FunctionName).replace(`${PROJECT_NAME}-${STAGE}-`, ''),
    ]),
  );
  return resourcesOf(synthesized.template, 'AWS::Events::Rule').flatMap(({ properties }) =>
    (properties.Targets as Array<{ Arn: { Ref?: string } }>).map(
      (target) => nameOf.get(functionOfAlias.get(target.Arn.Ref ?? '') ?? '') ?? 'unknown',
    ),
  );
};
const resourcesOfType = (synthesized: SynthesizedStage, type: string) => resourcesOf(synthesized.template, type);
const functionNamed = (synthesized: SynthesizedStage, name: string) =>
  resourcesOfType(synthesized, 'AWS::Lambda::Function').find(
    ({ properties }) => properties.FunctionName === `${PROJECT_NAME}-${synthesized.stack.stage}-${name}`,
  );
const tablesOf = (synthesized: SynthesizedStage) =>
  new Map(resourcesOfType(synthesized, 'AWS::DynamoDB::GlobalTable').map(({ properties }) => [String(properties.TableName), properties]));
const variablesOf = (properties: Record<string, unknown> | undefined) =>
  (properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};

describe('a stage in several regions', () => {
  it('is in the stages, in several regions', () => {
    expect(STAGE).not.toBe('');
    expect(settings().regions?.length).toBeGreaterThan(1);
  });

  it('has one stack per region, in the order of its regions, all named PetStore-<stage>, each with its own construct id', () => {
    expect(stacks().map(({ stack }) => stack.region)).toEqual(settings().regions);
    for (const { stack } of stacks()) {
      expect(stack.stackName).toBe(stackName(STAGE));
      expect(stack.node.id).toBe(`${stackName(STAGE)}-${stack.region}`);
      expect(stack.account).toBe(TEST_ACCOUNT);
    }
  });

  it("deploys the home region's stack first, then one region at a time in the order of the stage's regions, whatever --concurrency", () => {
    expect(home().stack.dependencies).toEqual([]);
    expect(others().length).toBe(stacks().length - 1);
    const regions = settings().regions ?? [];
    expect(regions.length).toBeGreaterThan(2);
    const stackIn = (region: string | undefined) => stacks().find(({ stack }) => stack.region === region)?.stack;
    regions.forEach((region, position) => {
      const before = position === 0 ? [] : [stackIn(regions[position - 1])];
      expect(stackIn(region)?.dependencies, region).toEqual(before);
    });
    // What `cdk deploy --all` reads: each region's stack waits for the one before it, so no two release at once.
    const manifest = home().app.synth();
    regions.slice(1).forEach((region, position) => {
      const artifact = manifest.getStackArtifact(regionalStackId(STAGE, region));
      expect(artifact.dependencies.map((dependency) => dependency.id)).toContain(regionalStackId(STAGE, regions[position] ?? ''));
    });
  });

  it("defines every table in the home region's stack, with a replica in each region of the stage, the idempotency records strongly consistent and without TTL", () => {
    const tables = tablesOf(home());
    expect([...tables.keys()].sort()).toEqual(
      Object.values(tableDefinitions)
        .map((table) => deployedTableName(STAGE, table))
        .sort(),
    );
    for (const [name, properties] of tables) {
      const regions = (properties.Replicas as Array<{ Region: string }>).map(({ Region }) => Region);
      expect(regions.sort(), name).toEqual([...(settings().regions ?? [])].sort());
      const strong = name === deployedTableName(STAGE, idempotencyTable);
      expect(properties.MultiRegionConsistency, name).toBe(strong ? 'STRONG' : undefined);
      if (strong) expect(properties.TimeToLiveSpecification, name).toBeUndefined();
    }
  });

  it("imports this region's replica in every other region's stack: no table of its own, every table grant and name its replica's", () => {
    for (const synthesized of others()) {
      const { stack, template } = synthesized;
      expect(resourcesOfType(synthesized, 'AWS::DynamoDB::GlobalTable')).toEqual([]);
      expect(resourcesOfType(synthesized, 'AWS::DynamoDB::Table')).toEqual([]);
      const json = template.toJSON() as CfnTemplate;
      const resolver = templateResolver(json, stack.region);
      const tableArns = resourcesOfType(synthesized, 'AWS::IAM::Policy')
        .flatMap(({ properties }) => (resolver.resolve(properties.PolicyDocument) as PolicyDocument).Statement)
        .flatMap((statement) => [statement.Resource].flat())
        .filter((resource) => resource.startsWith('arn:aws:dynamodb:'));
      expect(tableArns.length).toBeGreaterThan(0);
      const replicas = Object.values(tableDefinitions).map(
        (table) => `arn:aws:dynamodb:${stack.region}:${TEST_ACCOUNT}:table/${deployedTableName(STAGE, table)}`,
      );
      for (const arn of tableArns)
        expect(
          replicas.some((replica) => arn === replica || arn.startsWith(`${replica}/`)),
          arn,
        ).toBe(true);
      // The functions are told the replicas' names.
      const names = new Set(Object.values(tableDefinitions).map((table) => deployedTableName(STAGE, table)));
      for (const { properties } of resourcesOfType(synthesized, 'AWS::Lambda::Function')) {
        for (const table of Object.values(tableDefinitions)) {
          const value = variablesOf(properties)[table.nameVariable];
          if (value !== undefined) expect(names.has(String(value)), String(value)).toBe(true);
        }
      }
    }
  });

  it("reads the audit trail from this region's replica's stream, which DescribeTable names at deploy", () => {
    for (const synthesized of others()) {
      const { stack, template } = synthesized;
      const resolver = templateResolver(template.toJSON() as CfnTemplate, stack.region);
      const [mapping, ...more] = resourcesOfType(synthesized, 'AWS::Lambda::EventSourceMapping');
      expect(more).toEqual([]);
      expect(resolver.resolve(mapping?.properties.EventSourceArn)).toMatch(
        new RegExp(`^arn:aws:dynamodb:${stack.region}:${TEST_ACCOUNT}:table/${deployedTableName(STAGE, apiKeysTable)}/stream/`),
      );
      const [describe, ...moreCalls] = resourcesOfType(synthesized, 'Custom::AWS');
      expect(moreCalls).toEqual([]);
      expect(JSON.parse(String(describe?.properties.Create))).toMatchObject({
        service: 'DynamoDB',
        action: 'describeTable',
        parameters: { TableName: deployedTableName(STAGE, apiKeysTable) },
      });
    }
  });

  it('outputs the same names in every region, the table names the fixed ones', () => {
    for (const { template } of stacks()) {
      const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
      expect(Object.keys(outputs).sort()).toEqual(Object.values(stackOutputs).sort());
    }
    for (const { template } of others()) {
      const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
      expect(outputs[stackOutputs.petsTableName]?.Value).toBe(deployedTableName(STAGE, petsTable));
      expect(outputs[stackOutputs.apiKeysTableName]?.Value).toBe(deployedTableName(STAGE, apiKeysTable));
    }
  });

  it('runs the key expiry sweep in the home region only, and tells every region’s audit writer the home region', () => {
    const sweepName = `${PROJECT_NAME}-${STAGE}-keyExpiry`;
    expect(functionNamed(home(), 'keyExpiry')).toBeDefined();
    // The sweeps are scheduled in the home region only; every region's health probe in each.
    expect(scheduledFunctions(home()).sort()).toEqual(['healthProbe', 'idempotencySweep', 'keyExpiry']);
    for (const synthesized of others()) {
      expect(functionNamed(synthesized, 'keyExpiry')).toBeUndefined();
      expect(scheduledFunctions(synthesized)).toEqual(['healthProbe']);
      expect(synthesized.stack.isHomeRegion).toBe(false);
    }
    expect(home().stack.isHomeRegion).toBe(true);
    for (const synthesized of stacks()) {
      expect(variablesOf(functionNamed(synthesized, 'keyAudit')?.properties)[HOME_REGION_VARIABLE]).toBe(homeRegionOf(settings()));
    }
  });
});

describe('a stage in two regions and a witness', () => {
  const [first, second, witness] = MRSC_REGION_SETS.EU ?? [];
  const pair = synthStageStacks('prod', { regions: [first ?? '', second ?? ''], witnessRegion: witness });

  it('has two stacks, and a witness of the strongly consistent table only, in the home region’s stack', () => {
    expect(pair.map(({ stack }) => stack.region)).toEqual([first, second]);
    for (const [name, properties] of tablesOf(pair[0] as SynthesizedStage)) {
      const strong = name === deployedTableName('prod', idempotencyTable);
      expect(properties.GlobalTableWitnesses, name).toEqual(strong ? [{ Region: witness }] : undefined);
    }
  });
});

describe('the regions a stage may list', () => {
  const withRegions = (overrides: StageOverrides) => () => stageSettings('fixture-stage', { 'fixture-stage': overrides });

  it.each(Object.entries(MRSC_REGION_SETS))('takes three regions of the %s region set, or two and a witness of it', (_name, set) => {
    const [a = '', b = '', c = ''] = set;
    expect(withRegions({ regions: [a, b, c] })().regions).toEqual([a, b, c]);
    expect(withRegions({ regions: [a, b], witnessRegion: c })().witnessRegion).toBe(c);
  });

  it.each([
    ['regions of two sets', { regions: [MRSC_REGION_SETS.US?.[0], MRSC_REGION_SETS.EU?.[0], MRSC_REGION_SETS.US?.[1]] }],
    ['two regions without a witness', { regions: MRSC_REGION_SETS.US?.slice(0, 2) }],
    ['four regions', { regions: MRSC_REGION_SETS.EU }],
    ['a witness of another set', { regions: MRSC_REGION_SETS.US?.slice(0, 2), witnessRegion: MRSC_REGION_SETS.EU?.[0] }],
    ['a witness that is one of the regions', { regions: MRSC_REGION_SETS.US?.slice(0, 2), witnessRegion: MRSC_REGION_SETS.US?.[0] }],
    ['three regions and a witness', { regions: MRSC_REGION_SETS.EU?.slice(0, 3), witnessRegion: MRSC_REGION_SETS.EU?.[3] }],
    ['regions of no set', { regions: ['ap-southeast-2', 'sa-east-1', 'ca-central-1'] }],
  ])('refuses %s in one line, naming the sets', (_case, overrides) => {
    const refusal = (() => {
      try {
        withRegions(overrides as StageOverrides)();
        return '';
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    })();
    expect(refusal).toMatch(/^Stage 'fixture-stage': regions .+ are not a region set of strongly consistent global tables: .+\.$/);
    expect(refusal).not.toContain('\n');
    for (const region of Object.values(MRSC_REGION_SETS).flat()) expect(refusal).toContain(region);
  });

  it('refuses a witness for a stage in one region', () => {
    expect(withRegions({ witnessRegion: MRSC_REGION_SETS.US?.[0] })).toThrow(
      /^Stage 'fixture-stage': witnessRegion us-east-1 is for a stage in two regions/,
    );
  });
});

describe('a stage in one region', () => {
  const [single, ...more] = synthStageStacks('staging');

  it('is one stack, PetStore-<stage>, in the deployer’s region, depending on none', () => {
    expect(more).toEqual([]);
    expect(single?.stack.node.id).toBe(stackName('staging'));
    expect(single?.stack.region).toBe(TEST_REGION);
    expect(single?.stack.dependencies).toEqual([]);
  });

  it('defines its tables with no replica elsewhere, none strongly consistent, runs the sweep, and tells no function a home region', () => {
    const synthesized = single as SynthesizedStage;
    for (const [name, properties] of tablesOf(synthesized)) {
      expect(properties.Replicas, name).toEqual([expect.objectContaining({ Region: TEST_REGION })]);
      expect(properties.MultiRegionConsistency, name).toBeUndefined();
    }
    expect(synthesized.stack.isHomeRegion).toBe(true);
    expect(functionNamed(synthesized, 'keyExpiry')).toBeDefined();
    for (const { properties } of resourcesOfType(synthesized, 'AWS::Lambda::Function'))
      expect(variablesOf(properties)).not.toHaveProperty(HOME_REGION_VARIABLE);
    expect(resourcesOfType(synthesized, 'Custom::AWS')).toEqual([]);
  });
});
