/**
 * Synthesizes a stage's stack the way `cdk synth` does, minus bundling and minus the CDK's
 * built-in CloudFormation validation (test/infra/cdk-cli.test.ts runs the real CLI with both, and
 * test/infra/cfn-lint.test.ts runs AWS's linter), and reads things back out of the template.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PetStoreStack, type PetStoreStackProps } from '../../infra/pet-store-stack';
import { stageSettings, type StageSettings } from '../../infra/stages';
import { isKeyed, routes, type Route } from '../../shared/routes';
import { stackName } from '../../shared/stack';

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
  // The built-in validation only reports (its errors become warnings unless a flag says otherwise),
  // and its WebAssembly rules engine is most of a synth's time: five seconds in each test file.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const settings = { ...stageSettings(stage), ...overrides };
  const stack = new PetStoreStack(app, stackName(stage), {
    stage,
    settings,
    ...deploy,
    env: { account: '123456789012', region: 'eu-west-1' },
  });
  return { app, stack, template: Template.fromStack(stack), settings };
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

/** Each stage's stack in each region, synthesized once per test file: a stage in several regions has one stack a region. */
const stagesInRegions = new Map<string, SynthesizedStage>();

/** The stage's stack in `region` (one of its regions), as `cdk synth -c stage=<stage>` makes it for that region. */
export const synthStageIn = (stage: string, region: string): SynthesizedStage => {
  const id = `${stage} ${region}`;
  const cached = stagesInRegions.get(id);
  if (cached) return cached;
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
  const settings = stageSettings(stage);
  const stack = new PetStoreStack(app, `${stackName(stage)}-${region}`, { stage, settings, env: { account: '123456789012', region } });
  const synthesized = { app, stack, template: Template.fromStack(stack), settings };
  stagesInRegions.set(id, synthesized);
  return synthesized;
};
