/**
 * The pre-traffic hook of a CodeDeploy release (infra/constructs/release.ts): before the `live`
 * alias sends a version any request, CodeDeploy runs this, which reads from the deployment itself
 * which function it releases and the version the alias moves to (shared/release/app-spec.ts),
 * invokes that version with the function's requests of shared/release-checks.ts, and reports
 * Succeeded only when every answer is right. Failed stops the deployment. One log line per check;
 * it reports even when it cannot check, and each call has a deadline that leaves it the time to
 * report (shared/release/hook-deadlines.ts), whatever the version does.
 */
import { CodeDeployClient } from '@aws-sdk/client-codedeploy';
import { LambdaClient } from '@aws-sdk/client-lambda';
import type { Context } from 'aws-lambda';
import type { Environment } from '../shared/config';
import { codeDeployAppSpec, readReleaseTarget, type ReadAppSpec } from '../shared/release/app-spec';
import { checkDeadlineMs, readDeadlineMs } from '../shared/release/hook-deadlines';
import {
  codeDeployReport,
  logCheckResults,
  reportChecks,
  type HookResult,
  type HookStatus,
  type LifecycleHookEvent,
  type ReportStatus,
} from '../shared/release/hook-report';
import { lambdaInvoke } from '../shared/release/lambda-invoke';
import { releaseChecks, runReleaseChecks, type CheckResult, type Invoke } from '../shared/release-checks';

/** The handler's event and answer, for its callers. */
export type { HookResult, LifecycleHookEvent };

export interface PreTrafficHookDependencies {
  readonly invoke?: Invoke;
  /** The client the hook reads the deployment with, and reports with (unless `readAppSpec` and `report` are given). */
  readonly codeDeploy?: Pick<CodeDeployClient, 'send'>;
  readonly readAppSpec?: ReadAppSpec;
  readonly report?: ReportStatus;
  readonly env?: Environment;
  readonly now?: () => Date;
}

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
    const target = await readReleaseTarget(event.DeploymentId, readAppSpec, env, readDeadlineMs(context.getRemainingTimeInMillis()));
    let results: CheckResult[] = [];
    if (target !== undefined) {
      const checks = releaseChecks(now()).filter((check) => check.target === target.checked);
      results = await runReleaseChecks(checks, target.version, invoke, checkDeadlineMs(context.getRemainingTimeInMillis()));
      logCheckResults(results);
    }
    // No target, or no check for it, is not a pass: a version the hook did not try never takes traffic.
    const status: HookStatus = results.length > 0 && results.every(({ passed }) => passed) ? 'Succeeded' : 'Failed';
    return reportChecks(report, event, status, results);
  };

export const handler = createHandler();
