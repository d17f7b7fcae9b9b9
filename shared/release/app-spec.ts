/**
 * What a CodeDeploy deployment releases, read from the deployment itself: its AppSpec (JSON or
 * YAML), which names the function and the version its alias moves to (the TargetVersion: the new
 * version in a release, the older one in a rollback). The pre-traffic hook checks that version.
 */
import {
  GetApplicationRevisionCommand,
  GetDeploymentCommand,
  type CodeDeployClient,
  type RevisionLocation,
} from '@aws-sdk/client-codedeploy';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { Environment } from '../config';
import { logger, safeErrorFields } from '../logger';
import { FUNCTION_NAME_VARIABLES, withinDeadline, type CheckedFunction } from '../release-checks';
import { LIVE_ALIAS } from '../stack';

/**
 * Reads the AppSpec of a deployment: its text, JSON or YAML. Throws when CodeDeploy cannot be
 * asked, or gives no AppSpec (a revision in S3 or GitHub: never a Lambda deployment's here).
 */
export type ReadAppSpec = (deploymentId: string, signal: AbortSignal) => Promise<string>;

/** A deployment the hook cannot check, and why: the message is the log line's `problem`. */
export class ReleaseNotReadable extends Error {
  constructor(problem: string) {
    super(problem);
    this.name = 'ReleaseNotReadable';
  }
}

/** The fields of a deployment the hook reads (CodeDeploy's DeploymentInfo). */
const DeploymentInfo = z.object({ applicationName: z.string().min(1) });
/** An AppSpec given inline: a revision of type AppSpecContent or String. */
const InlineRevision = z.union([
  z.object({ appSpecContent: z.object({ content: z.string() }) }),
  z.object({ string: z.object({ content: z.string() }) }),
]);
const inlineContent = (revision: unknown): string | undefined => {
  const inline = InlineRevision.safeParse(revision);
  if (!inline.success) return undefined;
  return 'appSpecContent' in inline.data ? inline.data.appSpecContent.content : inline.data.string.content;
};

/**
 * The AppSpec as CodeDeploy holds it. GetDeployment gives the revision's location, and for an
 * AppSpecContent revision not its content (CodeDeploy's API reference: always null there; its
 * sha256 locates it), which GetApplicationRevision gives. An AppSpec GetDeployment does give
 * (a String revision) is taken as it is.
 */
export const codeDeployAppSpec =
  (client: Pick<CodeDeployClient, 'send'>): ReadAppSpec =>
  async (deploymentId, signal) => {
    const { deploymentInfo } = await client.send(new GetDeploymentCommand({ deploymentId }), { abortSignal: signal });
    const revision: RevisionLocation | undefined = deploymentInfo?.revision;
    const inline = inlineContent(revision);
    if (inline !== undefined) return inline;
    // Only these two hold an AppSpec (S3 and GitHub hold a bundle CodeDeploy would read itself).
    if (revision?.revisionType !== 'AppSpecContent' && revision?.revisionType !== 'String') {
      throw new ReleaseNotReadable(`the deployment's revision (${revision?.revisionType ?? 'none'}) holds no AppSpec`);
    }
    const deployment = DeploymentInfo.safeParse(deploymentInfo);
    if (!deployment.success) throw new ReleaseNotReadable('the deployment names no application');
    const output = await client.send(new GetApplicationRevisionCommand({ applicationName: deployment.data.applicationName, revision }), {
      abortSignal: signal,
    });
    const content = inlineContent(output.revision);
    if (content === undefined) throw new ReleaseNotReadable(`the application revision (${revision.revisionType}) holds no AppSpec`);
    return content;
  };

/** A published version's number, as the AppSpec gives it (a JSON string, or a YAML number). */
const VersionNumber = z
  .union([z.string(), z.int()])
  .transform(String)
  .pipe(z.string().regex(/^[1-9][0-9]*$/, 'not a published version'));

/**
 * A function's name, or its ARN (full or partial), unqualified: Lambda's FunctionName forms,
 * which the AppSpec's Name may take. Its one group captures the name.
 */
const FUNCTION_NAME = /^(?:(?:arn:[a-z0-9-]+:lambda:[a-z0-9-]+:)?\d{12}:function:)?([A-Za-z0-9_-]{1,64})$/;

/** The AppSpec of a Lambda deployment (CodeDeploy's AppSpec reference): the fields the hook reads. */
const LambdaAppSpec = z.object({
  version: z.union([z.literal('0.0'), z.literal(0)]),
  Resources: z.array(
    z.record(
      z.string(),
      z.object({
        Type: z.literal('AWS::Lambda::Function'),
        Properties: z.object({
          Name: z.string().regex(FUNCTION_NAME, 'not a function name or ARN'),
          Alias: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'not an alias name'),
          // Only logged: whatever it is, it does not decide what is checked.
          CurrentVersion: z.optional(z.union([z.string(), z.number()]).transform(String)),
          TargetVersion: VersionNumber,
        }),
      }),
    ),
  ),
});

/** What a deployment releases, from its AppSpec: a function the hook checks, and the version its alias moves to. */
export interface ReleaseTarget {
  readonly checked: CheckedFunction;
  /** The version to invoke: the AppSpec's Name, qualified by its TargetVersion. */
  readonly version: string;
  readonly currentVersion?: string;
  readonly targetVersion: string;
}

/** The AppSpec's text as data: JSON is YAML, so one parser reads both. */
const appSpecData = (text: string): unknown => {
  try {
    // Errors thrown, warnings not printed.
    return parseYaml(text, { logLevel: 'error' }) as unknown;
  } catch (error) {
    // The error's kind and place, never its text, which quotes the AppSpec.
    const code = (error as { code?: unknown }).code;
    const line = (error as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    throw new ReleaseNotReadable(
      `the AppSpec is neither JSON nor YAML (${typeof code === 'string' ? code : error instanceof Error ? error.name : typeof error}${line === undefined ? '' : ` at line ${line}`})`,
    );
  }
};

/**
 * The release target of an AppSpec, given the names of the checked functions (the environment);
 * throws ReleaseNotReadable when it is not a Lambda AppSpec of one function, the function is not
 * one the hook checks, or the alias is not `live`.
 */
export const releaseTargetOf = (appSpec: string, env: Environment): ReleaseTarget => {
  const parsed = LambdaAppSpec.safeParse(appSpecData(appSpec));
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    throw new ReleaseNotReadable(`the AppSpec is not a Lambda AppSpec (${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''})`);
  }
  const resources = parsed.data.Resources.flatMap((resource) => Object.values(resource));
  // Each deployment group releases one function.
  const [resource] = resources;
  if (resource === undefined || resources.length > 1) {
    throw new ReleaseNotReadable(`the AppSpec names ${resources.length} functions, expected one`);
  }
  const { Name, Alias, CurrentVersion, TargetVersion } = resource.Properties;
  const functionName = FUNCTION_NAME.exec(Name)?.[1];
  const checked = (Object.entries(FUNCTION_NAME_VARIABLES) as Array<[CheckedFunction, string]>).find(
    ([, variable]) => functionName !== undefined && env[variable] === functionName,
  )?.[0];
  if (checked === undefined)
    throw new ReleaseNotReadable(`the deployment releases ${functionName ?? Name}, a function the hook does not check`);
  if (Alias !== LIVE_ALIAS) throw new ReleaseNotReadable(`the deployment moves the alias ${Alias}, not ${LIVE_ALIAS}`);
  return {
    checked,
    version: `${Name}:${TargetVersion}`,
    targetVersion: TargetVersion,
    ...(CurrentVersion === undefined ? {} : { currentVersion: CurrentVersion }),
  };
};

/**
 * The release target of the deployment, read within `deadlineMs`, or, logged as the one line
 * saying why, undefined: the hook then reports Failed, as it does for a check that fails.
 */
export const readReleaseTarget = async (
  deploymentId: string,
  readAppSpec: ReadAppSpec,
  env: Environment,
  deadlineMs: number,
): Promise<ReleaseTarget | undefined> => {
  try {
    const target = releaseTargetOf(await withinDeadline((signal) => readAppSpec(deploymentId, signal), deadlineMs), env);
    const { checked, currentVersion, targetVersion } = target;
    logger.info('release target', { deploymentId, function: checked, currentVersion, targetVersion });
    return target;
  } catch (error) {
    if (error instanceof ReleaseNotReadable) logger.error('release not checked', { deploymentId, problem: error.message });
    else logger.error('release not checked', { deploymentId, problem: 'the deployment could not be read', ...safeErrorFields(error) });
    return undefined;
  }
};
