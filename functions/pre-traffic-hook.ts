/**
 * The pre-traffic hook of a CodeDeploy release (infra/constructs/release.ts): before the `live`
 * alias sends a new version any request, CodeDeploy runs this, which invokes the new versions
 * (their ARNs are in its environment) with the requests of shared/release-checks.ts and reports
 * Succeeded only when every answer is right. Failed stops the release: the alias stays on the old
 * version. One log line per check; it reports even when a check cannot run, and each invocation
 * has a deadline that leaves it the time to report, whatever the version does.
 */
import { CodeDeployClient, PutLifecycleEventHookExecutionStatusCommand } from '@aws-sdk/client-codedeploy';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { Context } from 'aws-lambda';
import { z } from 'zod';
import type { Environment } from '../shared/config';
import { logger, safeErrorFields } from '../shared/logger';
import {
  parsedJson,
  releaseChecks,
  runReleaseChecks,
  VERSION_ARN_VARIABLES,
  type CheckedFunction,
  type Invoke,
} from '../shared/release-checks';

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
  async (functionArn, event, signal) => {
    const output = await client.send(
      new InvokeCommand({ FunctionName: functionArn, Payload: new TextEncoder().encode(JSON.stringify(event)) }),
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

/** The new version ARNs the stack put in the environment, by function. */
const versionArnsOf = (env: Environment): Partial<Record<CheckedFunction, string>> =>
  Object.fromEntries(
    Object.entries(VERSION_ARN_VARIABLES).flatMap(([operation, variable]) => (env[variable] ? [[operation, env[variable]]] : [])),
  );

export interface PreTrafficHookDependencies {
  readonly invoke?: Invoke;
  readonly report?: ReportStatus;
  readonly env?: Environment;
  readonly now?: () => Date;
}

export const createHandler =
  ({
    invoke = lambdaInvoke(new LambdaClient({ maxAttempts: 2 })),
    report = codeDeployReport(new CodeDeployClient({})),
    env = process.env,
    now = () => new Date(),
  }: PreTrafficHookDependencies = {}) =>
  async (event: LifecycleHookEvent, context: Pick<Context, 'getRemainingTimeInMillis'>): Promise<HookResult> => {
    const deadlineMs = checkDeadlineMs(context.getRemainingTimeInMillis());
    const results = await runReleaseChecks(releaseChecks(now()), versionArnsOf(env), invoke, deadlineMs);
    for (const { check, passed, problem } of results) {
      if (passed) logger.info('release check passed', { check });
      else logger.error('release check failed', { check, problem });
    }
    const status: HookStatus = results.every(({ passed }) => passed) ? 'Succeeded' : 'Failed';
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
