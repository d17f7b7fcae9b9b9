/**
 * The ceilings beyond one machine, computed from stated parameters (AWS quotas as documented
 * on 2026-11-23, and this stack's settings), plus a small simulation of the status index's hot
 * partition. Nothing here is measured: it is arithmetic anyone can rerun and change.
 */
import { AWS_LIMITS, RCU_PER_SHARD_QUERY, STATUS_INDEX_WCU_PER_CREATE } from '../../infra/capacity';
import { ID_KIND_BITS, ID_RANDOM_BITS, ID_REGION_BITS } from '../../shared/ids';
import { stages, stageSettings } from '../../infra/stages';
import type { PartResult } from './results';
import { round } from '../stats';

/** Workload assumptions, stated so they can be changed. */
const ASSUMPTIONS = {
  /** A stored pet (id, name, categoryId, status, createdAt, writeId) of a typical name is under 1 KB. */
  wcuPerPetWrite: STATUS_INDEX_WCU_PER_CREATE.typical,
  /** Share of new pets that are `available` (the default status). */
  hotStatusShare: 1,
  /** One listing page of one shard: 21 items of ~100 bytes projected, eventually consistent. */
  rcuPerPage: RCU_PER_SHARD_QUERY,
  /** Warm handler duration in ms (Lambda billed duration, DynamoDB round trip included). */
  warmDurationMs: [10, 20, 50],
  /** Distinct API keys in use at once. */
  distinctKeys: [10, 1_000, 10_000],
} as const;

/** The values an id's bits below its time take: its region's and its random bits. */
const LOW_BITS = 2 ** (ID_REGION_BITS + ID_KIND_BITS + ID_RANDOM_BITS);

/**
 * Simulates one second of creates against the status index, sharded `n` ways by `status#(id % n)`:
 * each shard's partition takes what it can (1,000 WCU), the rest is throttled, and GSI
 * back-pressure throttles the table's writes by the same amount.
 */
export const simulateHotStatus = (createsPerSecond: number, shards: number) => {
  const perShard = new Array<number>(shards).fill(0);
  const hot = Math.round(createsPerSecond * ASSUMPTIONS.hotStatusShare);
  for (let write = 0; write < hot; write += 1) {
    const id = 1_000_000 + write * LOW_BITS + ((write * 2_654_435_761) % LOW_BITS); // ids like newPetId: time, then region and random bits
    perShard[id % shards] = (perShard[id % shards] ?? 0) + ASSUMPTIONS.wcuPerPetWrite;
  }
  const throttled = perShard.reduce((sum, units) => sum + Math.max(0, units - AWS_LIMITS.partitionWcuPerSecond), 0);
  return { accepted: createsPerSecond - throttled / ASSUMPTIONS.wcuPerPetWrite, throttled: throttled / ASSUMPTIONS.wcuPerPetWrite };
};

export const runScaling = (): PartResult => {
  const started = Date.now();
  const hotRows = [500, 1_000, 2_000, 5_000].flatMap((rate) =>
    [1, 4, 10].map((shards) => {
      const { accepted, throttled } = simulateHotStatus(rate, shards);
      return [rate, shards, accepted, throttled, shards * AWS_LIMITS.partitionWcuPerSecond, shards];
    }),
  );
  const lambdaRows = ASSUMPTIONS.warmDurationMs.map((ms) => [
    ms,
    AWS_LIMITS.lambdaAccountConcurrency,
    round(AWS_LIMITS.lambdaAccountConcurrency / (ms / 1000), 0),
    round((AWS_LIMITS.apiGatewayRps * ms) / 1000, 0),
  ]);
  const stageNames = ['dev (default)', ...Object.keys(stages)];
  const gatewayRows = stageNames.map((name) => {
    const settings = stageSettings(name === 'dev (default)' ? 'dev' : name);
    return [
      name,
      settings.throttle.rateLimit,
      settings.throttle.burstLimit,
      round((settings.throttle.rateLimit / AWS_LIMITS.apiGatewayRps) * 100, 1),
      settings.authorizerCacheTtlSeconds,
    ];
  });
  const keyRows = stageNames.flatMap((name) => {
    const settings = stageSettings(name === 'dev (default)' ? 'dev' : name);
    return ASSUMPTIONS.distinctKeys.map((keys) => {
      const ttl = settings.authorizerCacheTtlSeconds;
      const reads = ttl === 0 ? settings.throttle.rateLimit : Math.min(settings.throttle.rateLimit, keys / ttl);
      return [name, ttl, keys, round(reads, 2), round(reads * 0.5, 2)];
    });
  });
  const pageRate = AWS_LIMITS.partitionRcuPerSecond / ASSUMPTIONS.rcuPerPage;
  return {
    part: 'scaling',
    measuredAt: new Date().toISOString(),
    seconds: round((Date.now() - started) / 1000, 0),
    checks: [],
    tables: [
      {
        title:
          'Status index hot partition: one second of creates, all of one status, index key sharded n ways ' +
          `(${AWS_LIMITS.partitionWcuPerSecond} WCU/s per partition, ${ASSUMPTIONS.wcuPerPetWrite} WCU a pet)`,
        columns: ['creates/s offered', 'shards n', 'accepted/s', 'throttled/s', 'index ceiling WCU/s', 'Queries per page'],
        rows: hotRows,
      },
      {
        title: 'Lambda concurrency: requests/s = concurrency / duration',
        columns: ['warm duration ms', 'account concurrency', 'req/s at that concurrency', 'concurrency needed for 10,000 req/s'],
        rows: lambdaRows,
      },
      {
        title:
          `API Gateway: stage throttles vs the account's ${AWS_LIMITS.apiGatewayRps} req/s (burst ${AWS_LIMITS.apiGatewayBurst}), ` +
          'shared by every API of the account in the region',
        columns: ['stage', 'rate req/s', 'burst', '% of account rate', 'authorizer cache TTL s'],
        rows: gatewayRows,
      },
      {
        title: 'Authorizer keys-table reads: about distinct keys / TTL per second (capped by the stage rate; TTL 0 = one read per request)',
        columns: ['stage', 'TTL s', 'distinct keys', 'keys reads/s', 'RCU/s (eventually consistent)'],
        rows: keyRows,
      },
    ],
    notes: [
      `Reads on the hot status: one partition serves ${AWS_LIMITS.partitionRcuPerSecond} RCU/s = ${pageRate} listing pages/s ` +
        `of one status before sharding (${ASSUMPTIONS.rcuPerPage} RCU a page, measured by \`npm run bench -- reads\`).`,
      `Lambda scaling: from the first burst, each function adds ${AWS_LIMITS.lambdaScalingPer10s} concurrent executions every 10 s ` +
        `up to the account's ${AWS_LIMITS.lambdaAccountConcurrency}; the authorizer only runs on cache misses.`,
      'Ids in the simulation follow newPetId (milliseconds, then 12 bits of region index and random draw), so `id % n` spreads writes evenly over the shards.',
    ],
  };
};
