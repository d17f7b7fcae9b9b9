/**
 * The ceilings of a stage, computed from its own settings (infra/stages.ts) and AWS's documented
 * limits: creates of one status the status index takes, listing pages of one status a second,
 * and the Lambda concurrency the stage throttle can call for. docs/architecture.md (Scaling)
 * cites each limit's source and holds the table `npm run openapi` generates from these.
 */

/** AWS's default limits relied on (most can be raised on request). */
export const AWS_LIMITS = {
  /** DynamoDB: per partition, of a table or of a global secondary index. */
  partitionWcuPerSecond: 1_000,
  partitionRcuPerSecond: 3_000,
  /** Lambda: concurrent executions per account and region. */
  lambdaAccountConcurrency: 1_000,
  /** Lambda: each function may add this many concurrent executions every 10 seconds. */
  lambdaScalingPer10s: 1_000,
  /** API Gateway REST: the account's throttle per region, every API together. */
  apiGatewayRps: 10_000,
  apiGatewayBurst: 5_000,
} as const;

/**
 * Write units one create costs the status index (a write costs 1 per KB of item, rounded up).
 * A pet whose 256-character name is ASCII fits 1 KB; 256 four-byte characters take 2. Measured
 * on DynamoDB Local through the repository (test/integration/status-shards.test.ts).
 */
export const STATUS_INDEX_WCU_PER_CREATE = { typical: 1, largest: 2 } as const;

/**
 * Read units of one Query of one shard for a default page (21 items of a typical pet, under 4 KB,
 * eventually consistent: half a unit). `npm run bench -- reads` measures a page at 1, 4 and 8 shards.
 */
export const RCU_PER_SHARD_QUERY = 0.5;

/** Warm duration of a function, DynamoDB round trip included, for concurrency = requests/s × duration. */
export const WARM_DURATION_MS = 50;

/** Creates of one status a second the status index takes before it throttles, at the largest pet. */
export const statusCreatesCeiling = (shards: number): number =>
  (shards * AWS_LIMITS.partitionWcuPerSecond) / STATUS_INDEX_WCU_PER_CREATE.largest;

/**
 * Listing pages of one status a second before a shard's partition throttles reads: a page sends
 * one Query to each shard, so each shard's partition serves every page.
 */
export const statusPagesCeiling = (): number => AWS_LIMITS.partitionRcuPerSecond / RCU_PER_SHARD_QUERY;

/** The concurrent executions `requestsPerSecond` warm requests keep busy. */
export const concurrencyAt = (requestsPerSecond: number): number => Math.ceil((requestsPerSecond * WARM_DURATION_MS) / 1000);

export interface StageCapacity {
  readonly shards: number;
  readonly createsOfOneStatus: number;
  readonly pagesOfOneStatus: number;
  readonly rcuPerPage: number;
  readonly concurrencyAtRate: number;
}

/** A stage's ceilings from its shards and its throttle. */
export const stageCapacity = ({
  statusIndexShards,
  throttle,
}: {
  readonly statusIndexShards: number;
  readonly throttle: { readonly rateLimit: number };
}): StageCapacity => ({
  shards: statusIndexShards,
  createsOfOneStatus: statusCreatesCeiling(statusIndexShards),
  pagesOfOneStatus: statusPagesCeiling(),
  rcuPerPage: statusIndexShards * RCU_PER_SHARD_QUERY,
  concurrencyAtRate: concurrencyAt(throttle.rateLimit),
});
