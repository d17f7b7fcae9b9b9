/**
 * The pre-traffic hook's time: each call it makes has a deadline that leaves it the time to
 * report, whatever the call does (its timeout is PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS in shared/stack.ts).
 */

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

/** The deadline to read the AppSpec in: as a check's, and never more than its own cap. */
export const readDeadlineMs = (remainingMs: number): number => Math.min(READ_DEADLINE_CAP_MS, checkDeadlineMs(remainingMs));
