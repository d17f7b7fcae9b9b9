/**
 * What a stage costs, from the same sources as its capacity (infra/capacity.ts): its settings
 * (infra/stages.ts), its synthesized templates (what it keeps running with no traffic: alarms,
 * dashboards, health checks, scheduled functions and the metrics they publish), what each operation
 * reads, writes and logs (measured by running the handlers against DynamoDB Local:
 * tools/costs/measure.ts), and AWS's list prices (infra/prices.ts). `npm run costs` writes the
 * table to generated/costs.md; a test fails when the code, a template or a price no longer gives it.
 */
import { WARM_DURATION_MS } from './capacity';
import { PRICES } from './prices';
import type { TracingSample } from './stages';

/** What one request of an operation uses, as measured. */
export interface OperationUsage {
  /** DynamoDB read request units, the sweep's reads of its records included. */
  readonly readUnits: number;
  /** DynamoDB write request units in one region (tables and their indexes), the sweep's later deletes included. */
  readonly writeUnits: number;
  /** Bytes of items it writes, which a stage in several regions replicates to each other region. */
  readonly writtenBytes: number;
  /** Log bytes: the function's access line, and the API stage's. */
  readonly logBytes: number;
}

/** A function run on a schedule: its runs go on whether or not anyone calls the API. */
export interface ScheduledFunction {
  /** The construct that runs it (HealthProbe, KeyAudit, IdempotencySweep). */
  readonly name: string;
  readonly runsPerMonth: number;
  readonly memoryMb: number;
  /** Whether Lambda traces each run itself (active tracing): a trace each run. */
  readonly traced: boolean;
  /** Whether Lambda writes its START and REPORT lines for each run. */
  readonly platformLines: boolean;
  /** Custom metrics it publishes whatever the traffic (each counts as one a month). */
  readonly metrics: number;
}

/** What a stage keeps, whatever its traffic: read from its synthesized templates, every region's. */
export interface StageResources {
  readonly regions: number;
  /** Metrics in its alarms (an alarm on metric math pays for each metric in it). */
  readonly alarmMetrics: number;
  readonly dashboards: number;
  readonly healthChecks: number;
  readonly scheduled: readonly ScheduledFunction[];
  /** Memory of the request path's functions, in MB. */
  readonly functionMemoryMb: number;
  /** Whether Lambda writes its START and REPORT lines for each request's run. */
  readonly requestPathPlatformLines: boolean;
  readonly tracing: TracingSample;
}

export const SECONDS_PER_MONTH = 730 * 3600;
const GB = 1e9;
const MB_PER_GB = 1024;

/**
 * Lambda's START and REPORT lines of one run, in the JSON log format, in bytes: the sizes of the
 * `platform.start` and `platform.report` records AWS documents
 * (https://docs.aws.amazon.com/lambda/latest/dg/telemetry-schema-reference.html), as they arrive
 * in CloudWatch Logs. Estimated: no Lambda runs here.
 */
export const PLATFORM_LINES_BYTES = 150 + 400;
/** A scheduled run's own line (a sweep's counts), estimated as one access line. */
export const SCHEDULED_RUN_LOG_BYTES = 300;

/** Dollars of one Lambda run of `memoryMb` for the warm duration the capacity table assumes. */
const lambdaRun = (memoryMb: number) =>
  PRICES.lambdaRequest.usd + (memoryMb / MB_PER_GB) * (WARM_DURATION_MS / 1000) * PRICES.lambdaArmGbSecond.usd;

/** Dollars a month a stage costs with no traffic. */
export const fixedMonthlyCost = (stage: StageResources): number => {
  const scheduled = stage.scheduled.reduce((total, fn) => {
    const perRun =
      lambdaRun(fn.memoryMb) +
      (fn.traced ? PRICES.xrayTraceRecorded.usd : 0) +
      ((SCHEDULED_RUN_LOG_BYTES + (fn.platformLines ? PLATFORM_LINES_BYTES : 0)) / GB) * PRICES.logsIngestionGb.usd;
    return total + fn.runsPerMonth * perRun + fn.metrics * PRICES.customMetricMonth.usd;
  }, 0);
  return (
    stage.alarmMetrics * PRICES.alarmMetricMonth.usd +
    stage.dashboards * PRICES.dashboardMonth.usd +
    stage.healthChecks * PRICES.route53HealthCheckMonth.usd +
    scheduled
  );
};

/**
 * Dollars of one request of an operation on a stage: API Gateway, the function's run, its reads,
 * its writes in every region (a global table bills each replica's writes, and each replica's
 * index writes, at the single-region price), the bytes replicated, its log bytes and its share of
 * traces. A key's first request in each authorizer cache period runs the authorizer too: not
 * counted here (a key in use hits the cache).
 */
export const requestCost = (
  usage: OperationUsage,
  stage: Pick<StageResources, 'regions' | 'functionMemoryMb' | 'tracing' | 'requestPathPlatformLines'>,
): number =>
  PRICES.apiGatewayRestRequest.usd +
  lambdaRun(stage.functionMemoryMb) +
  usage.readUnits * PRICES.dynamodbReadRequestUnit.usd +
  usage.writeUnits * stage.regions * PRICES.dynamodbReplicatedWriteRequestUnit.usd +
  ((usage.writtenBytes * (stage.regions - 1)) / GB) * PRICES.interRegionTransferGb.usd +
  ((usage.logBytes + (stage.requestPathPlatformLines ? PLATFORM_LINES_BYTES : 0)) / GB) * PRICES.logsIngestionGb.usd +
  stage.tracing.fixedRate * PRICES.xrayTraceRecorded.usd;

/**
 * X-Ray's reservoir under steady traffic: a trace each second of the month, in each region, for
 * each request a second it keeps. Not in the fixed cost (no traffic, no trace) nor in a request's.
 */
export const reservoirMonthlyCost = (stage: Pick<StageResources, 'regions' | 'tracing'>): number =>
  stage.tracing.reservoirPerSecond * SECONDS_PER_MONTH * stage.regions * PRICES.xrayTraceRecorded.usd;

/**
 * What the stages promise to cost at most (issue 36): dollars per million requests of the stated
 * mix (tools/costs/table.ts), and dollars a month with no traffic. The costs test holds them.
 */
export const COST_LIMITS: Readonly<Record<string, { readonly perMillionRequests: number; readonly monthWithoutTraffic: number }>> = {
  prod: { perMillionRequests: 5.6, monthWithoutTraffic: 8 },
  global: { perMillionRequests: 7.5, monthWithoutTraffic: 25 },
};

/** A share of requests, by operation, that the table states a cost for. */
export interface MixShare<Operation extends string> {
  readonly operationId: Operation;
  readonly share: number;
}

/** Dollars per million requests of a mix. */
export const mixCostPerMillion = <Operation extends string>(
  mix: ReadonlyArray<MixShare<Operation>>,
  costOf: (operationId: Operation) => number,
): number => mix.reduce((total, { operationId, share }) => total + share * costOf(operationId), 0) * 1_000_000;
