/**
 * CodeDeploy's side of a Lambda deployment for the pre-traffic hook's tests, in the shapes its API
 * reference documents: GetDeployment gives the revision's location (an AppSpecContent's content is
 * always null there), and GetApplicationRevision gives the AppSpec (JSON or YAML) for it.
 */
import {
  GetApplicationRevisionCommand,
  GetDeploymentCommand,
  type CodeDeployClient,
  type RevisionLocation,
} from '@aws-sdk/client-codedeploy';
import type { AwsClientStub } from 'aws-sdk-client-mock';
import { createHash } from 'node:crypto';

export interface LambdaRelease {
  /** The AppSpec's Name: the function's name (CloudFormation's) or its ARN. */
  readonly name: string;
  readonly currentVersion: string;
  readonly targetVersion: string;
  readonly alias?: string;
}

/** A Lambda AppSpec as CloudFormation writes it for an alias update: JSON, one function, the hook before traffic. */
export const appSpecJson = ({ name, currentVersion, targetVersion, alias = 'live' }: LambdaRelease): string =>
  JSON.stringify({
    version: '0.0',
    Resources: [
      {
        ReleasedFunction: {
          Type: 'AWS::Lambda::Function',
          Properties: { Name: name, Alias: alias, CurrentVersion: currentVersion, TargetVersion: targetVersion },
        },
      },
    ],
    Hooks: [{ BeforeAllowTraffic: 'pet-store-test-preTrafficHook' }],
  });

/** The same AppSpec in YAML, as the AppSpec reference writes it (the versions as numbers). */
export const appSpecYaml = ({ name, currentVersion, targetVersion, alias = 'live' }: LambdaRelease): string =>
  [
    'version: 0.0',
    'Resources:',
    '  - ReleasedFunction:',
    '      Type: AWS::Lambda::Function',
    '      Properties:',
    `        Name: ${name}`,
    `        Alias: ${alias}`,
    `        CurrentVersion: ${currentVersion}`,
    `        TargetVersion: ${targetVersion}`,
    'Hooks:',
    '  - BeforeAllowTraffic: pet-store-test-preTrafficHook',
    '',
  ].join('\n');

export const APPLICATION_NAME = 'pet-store-test';

/** How the deployment holds its AppSpec. */
export type RevisionShape =
  /** A revision of type AppSpecContent (CloudFormation's): GetDeployment gives its sha256 only, GetApplicationRevision the content, as a String revision. */
  | 'AppSpecContent'
  /** The same, GetApplicationRevision giving the content as an AppSpecContent revision. */
  | 'AppSpecContent, read back as AppSpecContent'
  /** A revision of type String (a Lambda deployment's other inline form): GetDeployment gives it whole. */
  | 'String';

const sha256 = (content: string) => createHash('sha256').update(content).digest('hex');

/** Has the mocked CodeDeploy answer for a deployment whose AppSpec is `content`, held in the given shape. */
export const mockDeployment = (
  codeDeploy: AwsClientStub<CodeDeployClient>,
  deploymentId: string,
  content: string,
  shape: RevisionShape = 'AppSpecContent',
): void => {
  const location: RevisionLocation =
    shape === 'String'
      ? { revisionType: 'String', string: { content, sha256: sha256(content) } }
      : { revisionType: 'AppSpecContent', appSpecContent: { sha256: sha256(content) } };
  codeDeploy.on(GetDeploymentCommand, { deploymentId }).resolves({
    deploymentInfo: {
      applicationName: APPLICATION_NAME,
      deploymentGroupName: 'pet-store-test-ReleasedFunction',
      deploymentId,
      computePlatform: 'Lambda',
      creator: 'CloudFormation',
      status: 'InProgress',
      deploymentStyle: { deploymentType: 'BLUE_GREEN', deploymentOption: 'WITH_TRAFFIC_CONTROL' },
      revision: location,
    },
  });
  const stored: RevisionLocation =
    shape === 'AppSpecContent, read back as AppSpecContent'
      ? { revisionType: 'AppSpecContent', appSpecContent: { content, sha256: sha256(content) } }
      : { revisionType: 'String', string: { content, sha256: sha256(content) } };
  codeDeploy.on(GetApplicationRevisionCommand, { applicationName: APPLICATION_NAME, revision: location }).resolves({
    applicationName: APPLICATION_NAME,
    revision: stored,
    revisionInfo: { description: 'Application revision registered by Deployment ID: ' + deploymentId },
  });
};
