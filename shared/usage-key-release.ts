/**
 * A usage key is never spent forever: API Gateway holds at most API_KEYS_PER_REGION API keys per
 * account and region, a quota that cannot be raised, so the usage key of a key that has ended
 * (revoked, or expired: a roll's grace ending is an expiry) is deleted once no live key of its
 * rolls uses it. The key's record stays, with `usageKeyDeletedAt`, which the audit trail shows.
 * The key tool's revoke and the expiry sweep both release through here; the sweep retries what
 * a failed delete left in the release index. In a stage of several regions the usage key is an API
 * key in each region (one value, an id per region): it is deleted in every one, and recorded as
 * deleted only once every region's delete succeeded.
 */
import { DeleteApiKeyCommand, paginateGetApiKeys, type APIGatewayClient } from '@aws-sdk/client-api-gateway';
import type { Actor, ApiKeyRecord, ApiKeysRepository } from './api-keys-repository';
import { keyState } from './key-state';
import { meteringOf, type RegionUsageKeyIds } from './plan-policy';

/**
 * API keys per account and region: API Gateway's quota, which cannot be increased
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html).
 */
export const API_KEYS_PER_REGION = 10_000;

/** The share of API_KEYS_PER_REGION in use at which the UsageKeysNearLimit alarm fires. */
export const USAGE_KEYS_ALARM_SHARE = 0.8;

/** The dimension that tells apart the regions' UsageKeys in a stage of several regions (each region holds its own API keys). */
export const USAGE_KEYS_REGION_DIMENSION = 'Region';

/**
 * The variable that gives the expiry sweep and the key-audit function their stage's regions,
 * comma-separated, the home region first: set by the stack for a stage of several regions only.
 */
export const STAGE_REGIONS_VARIABLE = 'STAGE_REGIONS';

/** The stage's regions the environment names: none for a stage in one region. */
export const stageRegionsOf = (env: Readonly<Record<string, string | undefined>> = process.env): string[] =>
  (env[STAGE_REGIONS_VARIABLE] ?? '')
    .split(',')
    .map((region) => region.trim())
    .filter((region) => region !== '');

/** What API Gateway's CreateApiKey answers when the account and region hold API_KEYS_PER_REGION API keys already. */
export const API_KEYS_FULL = 'LimitExceededException';

/** GetApiKeys' largest page (https://docs.aws.amazon.com/apigateway/latest/api/API_GetApiKeys.html): 20 calls count 10,000 keys. */
const API_KEYS_PAGE_SIZE = 500;

/** Deletes an API key on API Gateway; one already gone (deleted by an earlier try, or in the console) counts as deleted. */
export const deleteApiKey = async (apiGateway: APIGatewayClient, usageKeyId: string): Promise<void> => {
  await apiGateway.send(new DeleteApiKeyCommand({ apiKey: usageKeyId })).catch((error: unknown) => {
    if (!(error instanceof Error && error.name === 'NotFoundException')) throw error;
  });
};

/**
 * The API keys the account holds in this region, every stage's and any made by hand: what
 * API_KEYS_PER_REGION limits. GetApiKeys pages of 500, so at most 20 calls of the control plane's
 * shared 10 requests per second.
 */
export const countApiKeys = async (apiGateway: APIGatewayClient): Promise<number> => (await listApiKeys(apiGateway)).length;

/** Every API key of the account in the client's region, its id and name (never its value), in pages of API_KEYS_PAGE_SIZE. */
export const listApiKeys = async (apiGateway: APIGatewayClient): Promise<Array<{ readonly id?: string; readonly name?: string }>> => {
  const keys: Array<{ id?: string; name?: string }> = [];
  for await (const page of paginateGetApiKeys({ client: apiGateway, pageSize: API_KEYS_PAGE_SIZE }, {})) {
    for (const { id, name } of page.items ?? []) keys.push({ id, name });
  }
  return keys;
};

/**
 * Deletes one API key: `region` names one of the stage's other regions (its `regionUsageKeyIds`);
 * undefined is the region of the key's `usageKeyId` (the home region, or the stage's one region).
 */
export type DeleteUsageKey = (usageKeyId: string, region?: string) => Promise<void>;

/** A usage key some of whose regions' deletes failed: each such region, with the failure's kind (its name, never its message). */
export class UsageKeyNotDeletedEverywhere extends Error {
  override readonly name = 'UsageKeyNotDeletedEverywhere';

  constructor(
    /** The failures, by region, each already one line. */
    readonly failures: ReadonlyArray<{ readonly region: string; readonly error: unknown }>,
  ) {
    super(failures.map(({ error }) => (error instanceof Error ? error.message : String(error)).replace(/\.$/, '')).join('; ') + '.');
  }

  /** The regions and the failures' kinds, as the sweep logs them: `us-east-2: TooManyRequestsException`. */
  get kinds(): string {
    return this.failures.map(({ region, error }) => `${region}: ${error instanceof Error ? error.name : typeof error}`).join(', ');
  }
}

/** What a release did: deleted the usage key, kept it for the live keys that share it, or had none to delete. */
export type UsageKeyRelease =
  | {
      readonly outcome: 'deleted';
      readonly usageKeyId: string;
      /** Its ids in the stage's other regions, deleted too: none in a stage of one region. */
      readonly regionUsageKeyIds?: RegionUsageKeyIds;
    }
  | { readonly outcome: 'shared'; readonly usageKeyId: string; readonly sharing: readonly ApiKeyRecord[] }
  | { readonly outcome: 'nothing' };

/**
 * The usage key the item holds, in every region, if it was written for this key: an id a console
 * edit put there may be another key's, which no release of this one may delete. Its plan is no
 * part of it: a key whose plan was removed by hand still releases its usage key.
 */
const ownUsageKey = (record: ApiKeyRecord): { usageKeyId: string; regionUsageKeyIds?: RegionUsageKeyIds } | undefined => {
  const metering = meteringOf({ ...record, plan: 'any' });
  return 'refused' in metering ? undefined : { usageKeyId: metering.usageKeyId, regionUsageKeyIds: metering.regionUsageKeyIds };
};

/**
 * Deletes the usage key in every region it is in, each tried whatever the others did (one already
 * gone counts as deleted: `deleteApiKey` takes it so). A single region's failure rejects as it
 * failed; failures in a stage of several regions as UsageKeyNotDeletedEverywhere.
 */
const deleteEverywhere = async (
  { usageKeyId, regionUsageKeyIds = {} }: { usageKeyId: string; regionUsageKeyIds?: RegionUsageKeyIds },
  deleteApiKey: DeleteUsageKey,
  homeRegion: string,
): Promise<void> => {
  const others = Object.entries(regionUsageKeyIds);
  if (others.length === 0) return deleteApiKey(usageKeyId);
  const deletes: Array<[string, Promise<void>]> = [
    [homeRegion, deleteApiKey(usageKeyId)],
    ...others.map(([region, id]): [string, Promise<void>] => [region, deleteApiKey(id, region)]),
  ];
  const settled = await Promise.allSettled(deletes.map(([, deleted]) => deleted));
  const failures = settled.flatMap((result, index) =>
    result.status === 'rejected' ? [{ region: deletes[index]?.[0] ?? '', error: result.reason as unknown }] : [],
  );
  if (failures.length > 0) throw new UsageKeyNotDeletedEverywhere(failures);
};

/** How a release names the region of a key's `usageKeyId` in its failures: the home region, where the keys are written. */
const HOME_REGION = 'the home region';

/**
 * Releases the usage key of `record`, read a moment ago: deleted (by `deleteApiKey`, which takes
 * an API key already gone as deleted) when the key has ended and no live key of its rolls shares
 * it, and so recorded; otherwise the key leaves the release index as it is. A failed delete
 * rejects, leaving the key in the index for the next sweep.
 */
export const releaseUsageKey = async (
  keys: ApiKeysRepository,
  record: ApiKeyRecord,
  deleteApiKey: DeleteUsageKey,
  changedBy: Actor,
  now = new Date(),
  homeRegion = HOME_REGION,
): Promise<UsageKeyRelease> => {
  const own = ownUsageKey(record);
  if (own === undefined || record.usageKeyDeletedAt !== undefined || keyState(record, now) === 'active') {
    await keys.keepUsageKey(record);
    return { outcome: 'nothing' };
  }
  // Strongly consistent, through the roll lineage: a successor written a moment ago is among them.
  const sharing = await keys.othersSharingUsageKey(record, now);
  const { usageKeyId, regionUsageKeyIds } = own;
  if (sharing.length > 0) {
    await keys.keepUsageKey(record);
    return { outcome: 'shared', usageKeyId, sharing };
  }
  // Recorded only once every region's is gone: until then the key stays in the release index.
  await deleteEverywhere(own, deleteApiKey, homeRegion);
  await keys.recordUsageKeyDeleted(record, changedBy, now);
  return { outcome: 'deleted', usageKeyId, ...(regionUsageKeyIds === undefined ? {} : { regionUsageKeyIds }) };
};

/** What a sweep's releases came to: the usage keys deleted, and the keys whose delete failed (by the error's kind). */
export interface ReleaseSweep {
  readonly deleted: readonly string[];
  readonly failures: ReadonlyArray<{ readonly keyId: string; readonly reason: string }>;
}

/** Releases the usage key of every key in the release index; a failure stops that key only. */
export const releaseUsageKeys = async (
  keys: ApiKeysRepository,
  deleteApiKey: DeleteUsageKey,
  changedBy: Actor,
  now = new Date(),
  homeRegion = HOME_REGION,
): Promise<ReleaseSweep> => {
  const deleted: string[] = [];
  const failures: Array<{ keyId: string; reason: string }> = [];
  for (const record of await keys.usageKeysToRelease()) {
    try {
      const release = await releaseUsageKey(keys, record, deleteApiKey, changedBy, now, homeRegion);
      if (release.outcome === 'deleted') deleted.push(release.usageKeyId);
    } catch (error) {
      const reason = error instanceof UsageKeyNotDeletedEverywhere ? error.kinds : error instanceof Error ? error.name : typeof error;
      failures.push({ keyId: record.keyId, reason });
    }
  }
  return { deleted, failures };
};
