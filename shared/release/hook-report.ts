/**
 * How the pre-traffic hook says how a release's checks ended: one log line per check, and the
 * lifecycle event's status to CodeDeploy (Failed stops the deployment), even when it cannot check.
 */
import { PutLifecycleEventHookExecutionStatusCommand, type CodeDeployClient } from '@aws-sdk/client-codedeploy';
import { logger, safeErrorFields } from '../logger';
import type { CheckResult } from '../release-checks';

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

/** One log line per check: passed, or failed and why. */
export const logCheckResults = (results: readonly CheckResult[]): void => {
  for (const { check, passed, problem } of results) {
    if (passed) logger.info('release check passed', { check });
    else logger.error('release check failed', { check, problem });
  }
};

/** Reports the status of the checks' `results` to CodeDeploy, and logs that it did, or why it could not. */
export const reportChecks = async (
  report: ReportStatus,
  event: LifecycleHookEvent,
  status: HookStatus,
  results: readonly CheckResult[],
): Promise<HookResult> => {
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
