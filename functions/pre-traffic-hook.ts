/**
 * The pre-traffic hook of a CodeDeploy release (infra/constructs/release.ts): before the `live`
 * alias sends a new version any request, CodeDeploy runs this, which invokes the new versions
 * (their ARNs are in its environment) with the requests of shared/release-checks.ts and reports
 * Succeeded only when every answer is right. Failed stops the release: the alias stays on the old
 * version. One log line per check; it reports even when a check cannot run.
 */
import { CodeDeployClient, PutLifecycleEventHookExecutionStatusCommand } from '@aws-sdk/client-codedeploy';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { z } from 'zod';
import type { Environment } from '../shared/config';
import { logger, safeErrorFields } from '../shared/logger';
import {
  InvocationFailed,
  releaseChecks,
  runReleaseChecks,
  VERSION_ARN_VARIABLES,
  type CheckedOperation,
  type Invoke,
} from '../shared/release-checks';

/** What CodeDeploy sends a lifecycle hook. */
export interface LifecycleHookEvent {
  readonly DeploymentId: string;
  readonly LifecycleEventHookExecutionId: string;
}

export type HookStatus = 'Succeeded' | 'Failed';

/** Tells CodeDeploy how the lifecycle event ended. */
export type ReportStatus = (event: LifecycleHookEvent, status: HookStatus) => Promise<void>;

/** The answer a proxy integration expects of a function (the fields the checks read). */
const ProxyAnswer = z.object({
  statusCode: z.number(),
  body: z.string(),
  headers: z.optional(z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]))),
  isBase64Encoded: z.optional(z.boolean()),
});

/**
 * Invokes a version with Lambda's Invoke (synchronous) and decodes its answer. A function that
 * crashed (FunctionError) or answered something API Gateway could not use is an InvocationFailed
 * naming only the kind of failure, never the function's message.
 */
export const lambdaInvoke =
  (client: Pick<LambdaClient, 'send'>): Invoke =>
  async (functionArn, event) => {
    const output = await client.send(
      new InvokeCommand({ FunctionName: functionArn, Payload: new TextEncoder().encode(JSON.stringify(event)) }),
    );
    const text = output.Payload === undefined ? '' : new TextDecoder().decode(output.Payload);
    if (output.FunctionError !== undefined) {
      const errorType = z.object({ errorType: z.string() }).safeParse(parseJson(text));
      throw new InvocationFailed(`function error ${errorType.success ? errorType.data.errorType : output.FunctionError}`);
    }
    const answer = ProxyAnswer.safeParse(parseJson(text));
    if (!answer.success) throw new InvocationFailed('the function answered something that is not an API Gateway proxy answer');
    return answer.data as APIGatewayProxyResult;
  };

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
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

/** The new version ARNs the stack put in the environment, by operation. */
export const versionArnsOf = (env: Environment): Partial<Record<CheckedOperation, string>> =>
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
    invoke = lambdaInvoke(new LambdaClient({})),
    report = codeDeployReport(new CodeDeployClient({})),
    env = process.env,
    now = () => new Date(),
  }: PreTrafficHookDependencies = {}) =>
  async (event: LifecycleHookEvent): Promise<{ status: HookStatus }> => {
    const results = await runReleaseChecks(releaseChecks(now()), versionArnsOf(env), invoke);
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
      throw new Error('the release checks could not be reported to CodeDeploy: the line before says why');
    }
    logger.info('release checks reported', { status, passed: results.filter(({ passed }) => passed).length, of: results.length });
    return { status };
  };

export const handler = createHandler();
