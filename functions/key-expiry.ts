/**
 * The expiry sweep, run on a schedule: marks each key whose expiry has passed with `expiredAt`,
 * as `system:key-expiry`. A key stops working at its `expiresAt` without this; the mark is a
 * write to the keys table, and so a stream record and a line of the audit trail ("expired"),
 * within one schedule interval of the expiry. Once it has marked a key, it flushes the stage's
 * authorizer cache, whose answer from before the expiry would let the key in for the rest of the TTL.
 *
 * Then it deletes the usage key (API Gateway API key) of each key revoked or marked expired that
 * no live key of its rolls uses any more (shared/usage-key-release.ts): API Gateway holds 10,000
 * per account and region, for good. A delete that failed, here or in the key tool's revoke, is
 * tried again by the next sweep. Once an hour it counts the account's API keys (GetApiKeys, at
 * most 20 calls of the control plane's shared 10 per second) and publishes the count as the
 * UsageKeys metric, which the UsageKeysNearLimit alarm watches.
 *
 * In a stage of several regions (STAGE_REGIONS, set by the stack; the sweep runs in the home
 * region only) a usage key is an API key in every region: it deletes each region's, and counts
 * each region's API keys, published as UsageKeys with that region as its `Region` dimension, as
 * each region holds its own 10,000.
 */
import middy from '@middy/core';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import type { ScheduledEvent } from 'aws-lambda';
import { apiKeysRepository, KeysNotMarked, type ApiKeyRecord, type ApiKeysRepository } from '../shared/api-keys-repository';
import { apiStageOf, stageAuthorizerCacheFlush } from '../shared/authorizer-cache';
import { logger, safeErrorFields } from '../shared/logger';
import { publishLevel } from '../shared/metrics';
import {
  countApiKeys,
  deleteApiKey,
  releaseUsageKeys,
  stageRegionsOf,
  USAGE_KEYS_REGION_DIMENSION,
  type DeleteUsageKey,
  type ReleaseSweep,
} from '../shared/usage-key-release';

/** Who the audit trail names for an expiry reached. */
export const EXPIRY_SWEEP_ACTOR = 'system:key-expiry';

export interface KeyExpiryDependencies {
  readonly keys?: ApiKeysRepository;
  readonly now?: () => Date;
  /**
   * Flushes the stage's authorizer cache. By default that of the stage the environment names
   * (REST_API_ID, API_STAGE_NAME, set by the stack); none where it names none (locally, where the
   * local gateway drops a changed key's answers as it reads the keys table's stream).
   */
  readonly flushAuthorizerCache?: () => Promise<void>;
  /**
   * Deletes an API key no live key uses any more, in `region` (one of the stage's other regions;
   * undefined: this one). By default API Gateway's DeleteApiKey there where the environment names
   * a stage; locally nothing (a local usage key is only a value: its record's `usageKeyDeletedAt`
   * is its deletion).
   */
  readonly deleteApiKey?: DeleteUsageKey;
  /**
   * The API keys the account holds in `region` (undefined: this one): by default GetApiKeys there
   * where the environment names a stage; none locally.
   */
  readonly countApiKeys?: (region?: string) => Promise<number>;
  /** The stage's regions, its home (this one) first, when it runs in several: by default STAGE_REGIONS. */
  readonly regions?: readonly string[];
}

export interface KeyExpiryResult {
  /** Ids of the keys marked expired by this run. */
  readonly marked: readonly string[];
  /** Ids of the usage keys (API Gateway API keys) this run deleted. */
  readonly usageKeysDeleted: readonly string[];
  /** The API keys the account holds in the region, when this run counted them (once an hour), in a stage of one region. */
  readonly usageKeys?: number;
  /** In a stage of several regions, the API keys the account holds in each region this run counted, by region. */
  readonly usageKeysByRegion?: Readonly<Record<string, number>>;
}

/** Keys whose usage key could not be deleted: they stay in the release index, for the next sweep. */
export class UsageKeysNotDeleted extends Error {
  override readonly name = 'UsageKeysNotDeleted';

  constructor(failures: ReleaseSweep['failures']) {
    super(
      `the usage keys of ${failures.length} key(s) not deleted: ${failures.map(({ keyId, reason }) => `${keyId} (${reason})`).join(', ')}`,
    );
  }
}

/**
 * What the sweep throws when it fails, in place of the error itself: the Lambda runtime logs a
 * thrown error's message and stack, and an SDK message may quote the table or the role. Thrown
 * still, so the invocation fails and the KeyExpiryErrors alarm fires.
 */
export class ExpirySweepFailed extends Error {
  constructor() {
    super('the expiry sweep failed: the line before says why');
    this.name = 'ExpirySweepFailed';
    this.stack = `${this.name}: ${this.message}`;
  }
}

/** The keys are marked, but API Gateway may still let them in on an answer it cached before their expiry. */
export class AuthorizerCacheNotFlushed extends Error {
  override readonly name = 'AuthorizerCacheNotFlushed';

  constructor(cause: unknown) {
    super(
      `the keys marked expired are refused within the stage's authorizer cache TTL: API Gateway did not flush the cache (${
        cause instanceof Error ? cause.name : typeof cause
      })`,
    );
  }
}

/** One safe line for a failed sweep (safeErrorFields), then a failure that carries nothing else. */
const sweepFailureLog = (): middy.MiddlewareObj<ScheduledEvent | Record<string, never>, KeyExpiryResult> => ({
  onError: async (request) => {
    logger.error('expiry sweep failed', safeErrorFields(request.error));
    request.error = new ExpirySweepFailed();
  },
});

/** One API Gateway client per container and region, made at its first call (undefined: this region's). */
const apiGatewayClients = new Map<string | undefined, APIGatewayClient>();
const apiGateway = (region?: string): APIGatewayClient => {
  let client = apiGatewayClients.get(region);
  if (client === undefined) {
    client = new APIGatewayClient(region === undefined ? {} : { region });
    apiGatewayClients.set(region, client);
  }
  return client;
};

/** On a stage, API Gateway's DeleteApiKey in the region named; locally nothing to delete. */
const stageDeleteApiKey = (): DeleteUsageKey =>
  apiStageOf() === undefined ? async () => undefined : (usageKeyId, region) => deleteApiKey(apiGateway(region), usageKeyId);

/** On a stage, GetApiKeys' count in the region named; locally none. */
const stageCountApiKeys = (): ((region?: string) => Promise<number>) | undefined =>
  apiStageOf() === undefined ? undefined : (region) => countApiKeys(apiGateway(region));

/** A count refused (the control plane's shared rate) is missing from the graph for an hour, and fails nothing. */
const countOrNothing = (count: (region?: string) => Promise<number>, region?: string): Promise<number | undefined> =>
  count(region).catch((error: unknown) => {
    logger.warn('usage keys not counted', { ...safeErrorFields(error), ...(region === undefined ? {} : { region }) });
    return undefined;
  });

/**
 * The API keys held, counted and published: in a stage of one region, UsageKeys by its service;
 * in a stage of several, UsageKeys of each region by its service and region.
 */
const countUsageKeys = async (
  count: (region?: string) => Promise<number>,
  regions: readonly string[],
): Promise<Pick<KeyExpiryResult, 'usageKeys' | 'usageKeysByRegion'>> => {
  if (regions.length === 0) {
    const usageKeys = await countOrNothing(count);
    if (usageKeys === undefined) return {};
    publishLevel('UsageKeys', usageKeys);
    return { usageKeys };
  }
  // The first region is this one, whose client is the default one.
  const counts = await Promise.all(regions.map((region, index) => countOrNothing(count, index === 0 ? undefined : region)));
  const byRegion = Object.fromEntries(regions.flatMap((region, index) => (counts[index] === undefined ? [] : [[region, counts[index]]])));
  for (const [region, held] of Object.entries(byRegion)) publishLevel('UsageKeys', held, { [USAGE_KEYS_REGION_DIMENSION]: region });
  return Object.keys(byRegion).length === 0 ? {} : { usageKeysByRegion: byRegion };
};

/**
 * Whether this run counts the API keys: the run scheduled for the first minute of each hour. By the
 * schedule's own time (EventBridge's `time`), so that a run that starts late, or is retried, still
 * counts; by the clock for an event without one.
 */
const countsThisRun = (event: ScheduledEvent | Record<string, never>, at: Date): boolean => {
  const scheduled = typeof event.time === 'string' ? new Date(event.time) : at;
  return (Number.isNaN(scheduled.getTime()) ? at : scheduled).getUTCMinutes() === 0;
};

export const createHandler = ({
  keys = apiKeysRepository(),
  now = () => new Date(),
  flushAuthorizerCache: flush = stageAuthorizerCacheFlush(process.env, () => apiGateway()),
  deleteApiKey: deleteUsageKey = stageDeleteApiKey(),
  countApiKeys: count = stageCountApiKeys(),
  regions = stageRegionsOf(),
}: KeyExpiryDependencies = {}) =>
  middy<ScheduledEvent | Record<string, never>, KeyExpiryResult>()
    .use(sweepFailureLog())
    .handler(async (event) => {
      const at = now();
      // Keys it could not mark fail the run, after the cache is flushed for those it did mark.
      const { marked, notMarked } = await keys.markExpired(at, EXPIRY_SWEEP_ACTOR).then(
        (records): { marked: readonly ApiKeyRecord[]; notMarked?: KeysNotMarked } => ({ marked: records }),
        (error: unknown) => {
          if (error instanceof KeysNotMarked) return { marked: error.marked, notMarked: error };
          throw error;
        },
      );
      const keyIds = marked.map((record) => record.keyId);
      if (keyIds.length > 0) {
        logger.info('keys marked expired', { keyIds });
        await flush?.().catch((error: unknown) => {
          throw new AuthorizerCacheNotFlushed(error);
        });
      }
      // After the marks, so that a key expired in this run has its usage key deleted in it too.
      const { deleted, failures } = await releaseUsageKeys(keys, deleteUsageKey, EXPIRY_SWEEP_ACTOR, at, regions[0]);
      if (deleted.length > 0) logger.info('usage keys deleted', { usageKeyIds: deleted });
      // A count refused neither hides the failures above nor fails the run, which EventBridge would retry whole.
      const counted = count !== undefined && countsThisRun(event, at) ? await countUsageKeys(count, regions) : {};
      // Keys not marked, or usage keys not deleted, fail the run once the rest is done.
      if (notMarked !== undefined) throw notMarked;
      if (failures.length > 0) throw new UsageKeysNotDeleted(failures);
      return { marked: keyIds, usageKeysDeleted: deleted, ...counted };
    });

export const handler = createHandler();
