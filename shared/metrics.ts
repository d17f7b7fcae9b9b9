/**
 * The service's CloudWatch metrics: what each answer counts, by service and operation (`Errors`
 * by error code too), counted from the functions' access lines by metric filters
 * (infra/constructs/request-metrics.ts), so that a request writes no line for them; and levels the
 * scheduled functions measure, in the Embedded Metric Format (Powertools Metrics). Dimensions stay
 * low-cardinality: never a key id, a request id or a pet id.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { PROJECT_NAME, PROJECT_NAME_PASCAL } from './project';

export const METRICS_NAMESPACE = PROJECT_NAME_PASCAL;
/**
 * The `service` where nothing sets POWERTOOLS_SERVICE_NAME: locally and in the tests. A deployed
 * stage's functions run with their stage's own (`pet-store-<stage>`, infra/pet-store-stack.ts), so
 * that the stages sharing an account never mix their metrics, dashboards or alarms.
 */
export const METRICS_SERVICE = PROJECT_NAME;
/** Powertools' name for the service: a dimension of every metric it writes, and a field of every log line. */
export const SERVICE_DIMENSION = 'service';

/** Every answer (`Requests`), every error answer (`Errors`), and what createPet did: a new pet, or an idempotent replay. */
export type CountName = 'Requests' | 'Errors' | 'PetsCreated' | 'IdempotentReplays';

/**
 * A level measured now, rather than a count of events, by the stage's `service`: `UsageKeys`, the
 * API keys the account holds in the region against API Gateway's quota (shared/usage-key-release.ts),
 * in a stage of several regions by its `Region` too; the idempotency sweep's records deleted in a
 * run, and whether the run stopped at its bound (1) or not (0) (functions/idempotency-sweep.ts);
 * whether the region could read every table it serves from (1) or not (0), each minute
 * (functions/health-probe.ts), which the region's Route 53 health check follows.
 */
export type LevelName = 'UsageKeys' | 'IdempotencyRecordsDeleted' | 'IdempotencySweepCutShort' | 'DatabaseReadable';

/** Powertools' Metrics, telling whether it is switched off by its own rules (env variables). */
class SwitchableMetrics extends Metrics {
  get switchedOff(): boolean {
    return this.isDisabled();
  }
}

/** Publishes a level (one EMF line), by `dimensions` besides the service, unless metrics are switched off (locally). */
export const publishLevel = (name: LevelName, value: number, dimensions: Readonly<Record<string, string>> = {}): void => {
  const metrics = new SwitchableMetrics({
    namespace: METRICS_NAMESPACE,
    serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? METRICS_SERVICE,
  });
  if (metrics.switchedOff) return;
  if (Object.keys(dimensions).length > 0) metrics.addDimensions({ ...dimensions });
  metrics.addMetric(name, MetricUnit.Count, value);
  metrics.publishStoredMetrics();
};
