/**
 * Synthesizes a stage's stack the way `cdk synth` does, minus bundling and minus the CDK's
 * built-in CloudFormation validation (test/infra/cdk-cli.test.ts runs the real CLI with both, and
 * test/infra/cfn-lint.test.ts runs AWS's linter), and reads things back out of the template.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { ApiFunction } from '../../infra/constructs/api-function';
import { PetStoreStack, type PetStoreStackProps } from '../../infra/pet-store-stack';
import { stageStacks } from '../../infra/stage-stacks';
import { isMultiRegion, stages, stageSettings, type StageSettings } from '../../infra/stages';
import { isKeyed, routes, type Route } from '../../shared/routes';
import { stackName } from '../../shared/stack';
import { ACCOUNT, REGION } from '../support/iam-simulation';

export interface SynthesizedStage {
  readonly app: App;
  readonly stack: PetStoreStack;
  readonly template: Template;
  readonly settings: StageSettings;
}

/** `deploy` holds what a deploy's context says besides the stage (`-c ignoreReleaseAlarms=true`). */
export const synthStage = (
  stage: string,
  overrides: Partial<StageSettings> = {},
  deploy: Pick<PetStoreStackProps, 'ignoreReleaseAlarms'> = {},
): SynthesizedStage => {
  const app = testApp();
  const settings = { ...stageSettings(stage), ...overrides };
  const stack = new PetStoreStack(app, stackName(stage), {
    stage,
    settings,
    ...deploy,
    env: { account: TEST_ACCOUNT, region: TEST_REGION },
  });
  return { app, stack, template: Template.fromStack(stack), settings };
};

/** The account and the region (of a stage in one region) the tests synthesize for: the IAM simulation's. */
export const TEST_ACCOUNT = ACCOUNT;
export const TEST_REGION = REGION;

// The built-in validation only reports (its errors become warnings unless a flag says otherwise),
// and its WebAssembly rules engine is most of a synth's time: five seconds in each test file.
const testApp = () => new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });

/**
 * Every stack of a stage, as the app builds them (infra/stage-stacks.ts): one per region of a stage
 * with regions, in the order of its regions, all in one app; one in the deployer's region
 * (`defaultRegion`, TEST_REGION unless given) for the others.
 */
export const synthStageStacks = (
  stage: string,
  overrides: Partial<StageSettings> = {},
  defaultRegion: string = TEST_REGION,
): SynthesizedStage[] => {
  const app = testApp();
  const settings = { ...stageSettings(stage), ...overrides };
  return stageStacks(app, { stage, settings, account: TEST_ACCOUNT, defaultRegion }).map((stack) => ({
    app,
    stack,
    template: Template.fromStack(stack),
    settings,
  }));
};

const stageStacksByName = new Map<string, SynthesizedStage[]>();
/** `synthStageStacks(stage)`, synthesized once in a test file however many of its tests read it. */
export const stageStacksOf = (stage: string): SynthesizedStage[] => {
  let stacks = stageStacksByName.get(stage);
  if (!stacks) {
    stacks = synthStageStacks(stage);
    stageStacksByName.set(stage, stacks);
  }
  return stacks;
};

/** The stages whose settings list several regions: their every region's stack is checked like a stage's one. */
export const multiRegionStages = (): string[] => Object.keys(stages).filter((stage) => isMultiRegion(stageSettings(stage)));

/**
 * Every region's stack of every stage in several regions, each named `<stage> in <region>`: what the
 * checks of AWS's rules run on besides the stages in one region.
 */
export const multiRegionStacks = (): Array<[string, SynthesizedStage]> =>
  multiRegionStages().flatMap((stage) =>
    stageStacksOf(stage).map((synthesized): [string, SynthesizedStage] => [`${stage} in ${synthesized.stack.region}`, synthesized]),
  );

/** A stack's key expiry sweep, which a stack of its stage's home region (or of a stage in one region) has. */
export const expirySweepOf = ({ stack }: Pick<SynthesizedStage, 'stack'>): ApiFunction => {
  const sweep = stack.keyAudit.expirySweep;
  if (!sweep) throw new Error(`${stack.node.id} runs no expiry sweep: it is not its stage's home region`);
  return sweep;
};

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown>; DeletionPolicy?: string }>;

export const resourcesOf = (template: Template, type: string) =>
  Object.entries(template.findResources(type) as Resources).map(([logicalId, resource]) => ({
    logicalId,
    properties: resource.Properties ?? {},
    deletionPolicy: resource.DeletionPolicy,
  }));

/** `METHOD /path` for every API Gateway method, its path rebuilt from the resource tree. */
export const methodsOf = (template: Template) => {
  const resources = new Map(resourcesOf(template, 'AWS::ApiGateway::Resource').map((r) => [r.logicalId, r.properties]));
  const pathOf = (resourceId: unknown): string => {
    const ref = (resourceId as { Ref?: string }).Ref;
    const resource = ref === undefined ? undefined : resources.get(ref);
    if (!resource) return ''; // the root resource (Fn::GetAtt RootResourceId)
    return `${pathOf(resource.ParentId)}/${String(resource.PathPart)}`;
  };
  return resourcesOf(template, 'AWS::ApiGateway::Method').map(({ logicalId, properties }) => ({
    logicalId,
    method: String(properties.HttpMethod),
    path: pathOf(properties.ResourceId),
    properties,
  }));
};

/** `METHOD /path` of each keyless route (shared/routes.ts): the methods without an authorizer or a key, besides the preflights. */
export const keylessMethods: readonly string[] = (routes as readonly Route[])
  .filter((route) => !isKeyed(route))
  .map((route) => `${route.method} ${route.path}`);

/** The statements of the inline policy attached to a role. */
export const policyStatementsOf = (template: Template, roleLogicalId: string) =>
  resourcesOf(template, 'AWS::IAM::Policy')
    .filter(({ properties }) => JSON.stringify(properties.Roles) === JSON.stringify([{ Ref: roleLogicalId }]))
    .flatMap(({ properties }) => (properties.PolicyDocument as { Statement: Array<Record<string, unknown>> }).Statement);

/** The stage's stack in `region` (one of its regions), as `cdk synth -c stage=<stage>` makes it for that region. */
export const synthStageIn = (stage: string, region: string): SynthesizedStage => {
  const found = stageStacksOf(stage).find(({ stack }) => stack.region === region);
  if (!found) throw new Error(`Stage ${stage} has no stack in ${region}`);
  return found;
};
