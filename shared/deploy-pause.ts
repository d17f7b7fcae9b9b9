/**
 * The deploy pause's contract (functions/deploy-pause.ts, infra/constructs/domain-order.ts): the
 * custom resource property that gives its wait, and the longest wait it takes.
 */

/** The resource property that gives the seconds to wait. */
export const PAUSE_SECONDS_PROPERTY = 'PauseSeconds';
/** The longest wait the function takes; its timeout is set above it. */
export const MAX_PAUSE_SECONDS = 120;
