/**
 * The pre-traffic hook of a CodeDeploy release (infra/constructs/release.ts): before the `live`
 * alias sends a version any request, CodeDeploy runs this, which reads from the deployment itself
 * which function it releases and the version the alias moves to (the AppSpec's TargetVersion: the
 * new version in a release, the older one in a rollback), invokes that version with the function's
 * requests of shared/release-checks.ts, and reports Succeeded only when every answer is right.
 * Failed stops the deployment. One log line per check; it reports even when it cannot check, and
 * each call has a deadline that leaves it the time to report, whatever the version does.
 */
import {
  CodeDeployClient,
  GetApplicationRevisionCommand,
  GetDeploymentCommand,
  PutLifecycleEventHookExecutionStatusCommand,
  type RevisionLocation,
} from '@aws-sdk/client-codedeploy';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { Context } from 'aws-lambda';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { Environment } from '../shared/config';
import { logger, safeErrorFields } from '../shared/logger';
import {
  FUNCTION_NAME_VARIABLES,
  parsedJson,
  releaseChecks,
  runReleaseChecks,
  withinDeadline,
  type CheckedFunction,
  type CheckResult,
  type Invoke,
} from '../shared/release-checks';
import { LIVE_ALIAS } from '../shared/stack';

/** What CodeDeploy sends a lifecycle hook. */
export interface LifecycleHookEvent {
  readonly DeploymentId: string;
  readonly LifecycleEventHookExecutionId: string;
}

export type HookStatus = 'Succeeded' | 'Failed';

/**
 * What the hook ends with: the status, and whether CodeDeploy was told it. Unreported, the hook
 * still ends normally (its log line says why): a thrown error would add only a stack trace.
 */
export interface HookResult {
  readonly status: HookStatus;
  readonly reported: boolean;
}

/** Tells CodeDeploy how the lifecycle event ended. */
export type ReportStatus = (event: LifecycleHookEvent, status: HookStatus) => Promise<void>;

/**
 * Reads the AppSpec of a deployment: its text, JSON or YAML. Throws when CodeDeploy cannot be
 * asked, or gives no AppSpec (a revision in S3 or GitHub: never a Lambda deployment's here).
 */
export type ReadAppSpec = (deploymentId: string, signal: AbortSignal) => Promise<string>;

/**
 * The time kept back from the hook's own timeout for reporting (CodeDeploy's call, with its
 * retries) once the checks are over or given up on: a hook Lambda ends before it reports leaves
 * CodeDeploy waiting an hour for the lifecycle event.
 */
export const REPORT_MARGIN_MS = 15_000;
/**
 * The most a check's invocation may take: a cold start, then at most the function's own timeout
 * (10 s, after which Lambda ends it with an error), with room to spare. Longer is an invocation
 * that hangs (throttled, retried): a failed check, not a reason to wait.
 */
export const CHECK_DEADLINE_CAP_MS = 25_000;
/**
 * The most reading the deployment's AppSpec may take (CodeDeploy's GetDeployment, then
 * GetApplicationRevision): two small reads. With the checks' cap and the margin to report, within
 * the hook's timeout.
 */
export const READ_DEADLINE_CAP_MS = 10_000;

/** Each check's deadline: what the hook has left, less the margin to report, and never more than the cap. */
export const checkDeadlineMs = (remainingMs: number): number =>
  Math.max(0, Math.min(CHECK_DEADLINE_CAP_MS, remainingMs - REPORT_MARGIN_MS));

/** Lambda's report of a function error: its payload names the error's type and message. */
const ErrorPayload = z.object({ errorType: z.optional(z.string()), errorMessage: z.optional(z.string()) });

/**
 * Invokes a version with Lambda's Invoke (synchronous), aborted by `signal`, and returns how it
 * ended: its payload parsed (undefined when it is not JSON), or its function error. One retry at
 * most: the check's deadline, not the client's backoff, bounds the wait.
 */
export const lambdaInvoke =
  (client: Pick<LambdaClient, 'send'>): Invoke =>
  async (version, event, signal) => {
    const output = await client.send(
      new InvokeCommand({ FunctionName: version, Payload: new TextEncoder().encode(JSON.stringify(event)) }),
      { abortSignal: signal },
    );
    const payload = parsedJson(output.Payload === undefined ? '' : new TextDecoder().decode(output.Payload));
    if (output.FunctionError !== undefined) {
      const error = ErrorPayload.safeParse(payload);
      const { errorType = output.FunctionError, errorMessage = '' } = error.success ? error.data : {};
      return { functionError: { errorType, errorMessage } };
    }
    return { answer: payload };
  };

/** Reports with CodeDeploy's PutLifecycleEventHookExecutionStatus. */
export const codeDeployReport =
  (client: Pick<CodeDeployClient, 'send'>): ReportStatus =>
  async ({ DeploymentId, LifecycleEventHookExecutionId }, status) => {
    await client.send(
      new PutLifecycleEventHookExecutionStatusCommand({
        deploymentId: DeploymentId,
        lifecycleEventHookExecutionId: LifecycleEventHookExecutionId,
        status,
      }),
    );
  };

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

export interface PreTrafficHookDependencies {
  readonly invoke?: Invoke;
  /** The client the hook reads the deployment with, and reports with (unless `readAppSpec` and `report` are given). */
  readonly codeDeploy?: Pick<CodeDeployClient, 'send'>;
  readonly readAppSpec?: ReadAppSpec;
  readonly report?: ReportStatus;
  readonly env?: Environment;
  readonly now?: () => Date;
}

/**
 * The release target of the deployment, or, logged as the one line saying why, undefined: the
 * hook then reports Failed, as it does for a check that fails.
 */
const readReleaseTarget = async (
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

export const createHandler =
  ({
    invoke = lambdaInvoke(new LambdaClient({ maxAttempts: 2 })),
    codeDeploy = new CodeDeployClient({}),
    readAppSpec = codeDeployAppSpec(codeDeploy),
    report = codeDeployReport(codeDeploy),
    env = process.env,
    now = () => new Date(),
  }: PreTrafficHookDependencies = {}) =>
  async (event: LifecycleHookEvent, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<HookResult> => {
    const readDeadlineMs = Math.min(READ_DEADLINE_CAP_MS, checkDeadlineMs(context.getRemainingTimeInMillis()));
    const target = await readReleaseTarget(event.DeploymentId, readAppSpec, env, readDeadlineMs);
    let results: CheckResult[] = [];
    if (target !== undefined) {
      const checks = releaseChecks(now()).filter((check) => check.target === target.checked);
      results = await runReleaseChecks(checks, target.version, invoke, checkDeadlineMs(context.getRemainingTimeInMillis()));
      for (const { check, passed, problem } of results) {
        if (passed) logger.info('release check passed', { check });
        else logger.error('release check failed', { check, problem });
      }
    }
    // No target, or no check for it, is not a pass: a version the hook did not try never takes traffic.
    const status: HookStatus = results.length > 0 && results.every(({ passed }) => passed) ? 'Succeeded' : 'Failed';
    try {
      await report(event, status);
    } catch (error) {
      // Unreported, the lifecycle event fails when CodeDeploy's wait for it runs out (an hour).
      logger.error('release checks could not be reported', { status, ...safeErrorFields(error) });
      return { status, reported: false };
    }
    logger.info('release checks reported', { status, passed: results.filter(({ passed }) => passed).length, of: results.length });
    return { status, reported: true };
  };

export const handler = createHandler();
