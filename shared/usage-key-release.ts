/**
 * A usage key is never spent forever: API Gateway holds at most API_KEYS_PER_REGION API keys per
 * account and region, a quota that cannot be raised, so the usage key of a key that has ended
 * (revoked, or expired: a roll's grace ending is an expiry) is deleted once no live key of its
 * rolls uses it. The key's record stays, with `usageKeyDeletedAt`, which the audit trail shows.
 * The key tool's revoke and the expiry sweep both release through here; the sweep retries what
 * a failed delete left in the release index.
 */
import { DeleteApiKeyCommand, paginateGetApiKeys, type APIGatewayClient } from '@aws-sdk/client-api-gateway';
import type { Actor, ApiKeyRecord, ApiKeysRepository } from './api-keys-repository';
import { keyState } from './key-state';
import { usageKeyBinding } from './plan-policy';

/**
 * API keys per account and region: API Gateway's quota, which cannot be increased
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html).
 */
export const API_KEYS_PER_REGION = 10_000;

/** The share of API_KEYS_PER_REGION in use at which the UsageKeysNearLimit alarm fires. */
export const USAGE_KEYS_ALARM_SHARE = 0.8;

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
export const countApiKeys = async (apiGateway: APIGatewayClient): Promise<number> => {
  let count = 0;
  for await (const page of paginateGetApiKeys({ client: apiGateway, pageSize: API_KEYS_PAGE_SIZE }, {})) count += page.items?.length ?? 0;
  return count;
};

/** What a release did: deleted the usage key, kept it for the live keys that share it, or had none to delete. */
export type UsageKeyRelease =
  | { readonly outcome: 'deleted'; readonly usageKeyId: string }
  | { readonly outcome: 'shared'; readonly usageKeyId: string; readonly sharing: readonly ApiKeyRecord[] }
  | { readonly outcome: 'nothing' };

/**
 * The usage key the item holds, if it was written for this key: an id a console edit put there
 * may be another key's, which no release of this one may delete.
 */
const ownUsageKeyId = ({ keyHash, usageKeyId, usageKey, usageKeyBinding: binding }: ApiKeyRecord): string | undefined =>
  typeof usageKeyId === 'string' && typeof usageKey === 'string' && binding === usageKeyBinding(keyHash, usageKeyId, usageKey)
    ? usageKeyId
    : undefined;

/**
 * Releases the usage key of `record`, read a moment ago: deleted (by `deleteApiKey`, which takes
 * an API key already gone as deleted) when the key has ended and no live key of its rolls shares
 * it, and so recorded; otherwise the key leaves the release index as it is. A failed delete
 * rejects, leaving the key in the index for the next sweep.
 */
export const releaseUsageKey = async (
  keys: ApiKeysRepository,
  record: ApiKeyRecord,
  deleteApiKey: (usageKeyId: string) => Promise<void>,
  changedBy: Actor,
  now = new Date(),
): Promise<UsageKeyRelease> => {
  const usageKeyId = ownUsageKeyId(record);
  if (usageKeyId === undefined || record.usageKeyDeletedAt !== undefined || keyState(record, now) === 'active') {
    await keys.keepUsageKey(record);
    return { outcome: 'nothing' };
  }
  // Strongly consistent, through the roll lineage: a successor written a moment ago is among them.
  const sharing = await keys.othersSharingUsageKey(record, now);
  if (sharing.length > 0) {
    await keys.keepUsageKey(record);
    return { outcome: 'shared', usageKeyId, sharing };
  }
  await deleteApiKey(usageKeyId);
  await keys.recordUsageKeyDeleted(record, changedBy, now);
  return { outcome: 'deleted', usageKeyId };
};

/** What a sweep's releases came to: the usage keys deleted, and the keys whose delete failed (by the error's kind). */
export interface ReleaseSweep {
  readonly deleted: readonly string[];
  readonly failures: ReadonlyArray<{ readonly keyId: string; readonly reason: string }>;
}

/** Releases the usage key of every key in the release index; a failure stops that key only. */
export const releaseUsageKeys = async (
  keys: ApiKeysRepository,
  deleteApiKey: (usageKeyId: string) => Promise<void>,
  changedBy: Actor,
  now = new Date(),
): Promise<ReleaseSweep> => {
  const deleted: string[] = [];
  const failures: Array<{ keyId: string; reason: string }> = [];
  for (const record of await keys.usageKeysToRelease()) {
    try {
      const release = await releaseUsageKey(keys, record, deleteApiKey, changedBy, now);
      if (release.outcome === 'deleted') deleted.push(release.usageKeyId);
    } catch (error) {
      failures.push({ keyId: record.keyId, reason: error instanceof Error ? error.name : typeof error });
    }
  }
  return { deleted, failures };
};
