/**
 * The TOKEN authorizer: allows a request whose bearer key is registered, not revoked and not past
 * its expiry, on the routes its scopes cover (a valid key without the scope is answered 403, not
 * 401), names the API key its usage plan meters (`usageIdentifierKey`), and records the key's last
 * use at most once an hour, in the last-use table: it never writes the key's item, so that no
 * write of its can undo a revoke (docs/architecture.md, "Keys across regions"). A key whose item
 * names no usage key of its own, one not written for it, or no plan is refused: nothing is assumed
 * for an attribute that was removed by hand.
 * It refuses by throwing exactly "Unauthorized", which API Gateway answers with 401; anything
 * else it throws (its database is down) is to API Gateway an AUTHORIZER_CONFIGURATION_ERROR, whose
 * gateway response is a 503 with Retry-After.
 */
import middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import type { ApiKeyRecord } from '../shared/api-keys-repository';
import { keyReads, type KeyReads } from '../shared/key-reads';
import { keyState } from '../shared/key-state';
import { bearerKey } from '../shared/api-keys';
import { allowScopedMethods, AuthorizerRefusal } from '../shared/auth-policy';
import { DatabaseUnavailable } from '../shared/dynamodb';
import { authorizerLog } from '../shared/http/authorizer-log';
import type { Clock } from '../shared/http/deprecation';
import { logger } from '../shared/logger';
import { meteringOf, policiesOf, policiesOfJson, USAGE_PLANS_VARIABLE } from '../shared/plan-policy';

export interface AuthorizerDependencies {
  /** Its reads of the key tables (a key repository has them too). */
  readonly keys?: KeyReads;
  /** The time a key's expiry and last use are read against; injectable so tests can stand past an expiry. */
  readonly now?: Clock;
  /** The stage's plans, for the `RateLimit-Policy` each key's answers carry; by default those of `USAGE_PLANS`. */
  readonly plans?: Readonly<Record<string, unknown>>;
}

export const createHandler = ({ keys = keyReads(), now = () => new Date(), plans }: AuthorizerDependencies = {}) => {
  const policies = plans === undefined ? policiesOfJson(process.env[USAGE_PLANS_VARIABLE]) : policiesOf(plans);
  return middy<APIGatewayTokenAuthorizerEvent, APIGatewayAuthorizerResult>()
    .use(authorizerLog())
    .handler(async (event) => {
      const key = bearerKey(event.authorizationToken);
      const at = now();

      // The key and its last use, read at once: one round trip on a cache miss.
      const [record, lastUse] = key === undefined ? [] : await Promise.all([keys.find(key), readLastUse(keys, key)]);
      if (!record || !lastUse) throw new AuthorizerRefusal('unknown');
      const state = keyState(record, at);
      if (state !== 'active') throw new AuthorizerRefusal(state, record.keyId);

      // Refused before its use is recorded, as a revoked key is.
      const metering = meteringOf(record);
      if ('refused' in metering) throw new AuthorizerRefusal(metering.refused, record.keyId);

      await recordUse(keys, record, lastUse, at);
      const { usageKeyId, usageIdentifierKey, plan } = metering;
      const rateLimitPolicy = policies.get(plan);
      const allowed = allowScopedMethods(
        event.methodArn,
        {
          keyId: record.keyId,
          keyHash: record.keyHash,
          plan,
          usageKeyId,
          ...(rateLimitPolicy === undefined ? {} : { rateLimitPolicy }),
        },
        record.scopes,
      );
      return { ...allowed, usageIdentifierKey };
    });
};

/** A key's last use as read, or why it could not be read. */
type LastUse = { readonly lastUsedAt: ApiKeyRecord['lastUsedAt'] } | { readonly unread: string };

/** The kind of a failure only: an SDK message may quote the item's key or the table. */
const reasonOf = (error: unknown): string =>
  error instanceof DatabaseUnavailable ? error.reason : error instanceof Error ? error.name : typeof error;

/** Last use is bookkeeping: a failed read of it is no refusal of the key, only no write. */
const readLastUse = (keys: KeyReads, key: string): Promise<LastUse> =>
  keys.lastUseOf(key).then(
    (lastUsedAt) => ({ lastUsedAt }),
    (error: unknown) => ({ unread: reasonOf(error) }),
  );

/**
 * Last use is bookkeeping, so a failed read or write is one warning (the key's id and the kind of
 * failure only) and never a refusal. Awaited all the same (Lambda may freeze the process as soon
 * as the handler returns), within a short deadline.
 */
const recordUse = async (keys: KeyReads, record: ApiKeyRecord, lastUse: LastUse, at: Date) => {
  const reason =
    'unread' in lastUse
      ? lastUse.unread
      : await keys.recordUse({ ...record, lastUsedAt: lastUse.lastUsedAt }, at).then(() => undefined, reasonOf);
  if (reason !== undefined) logger.warn('last use not recorded', { keyId: record.keyId, reason });
};

export const handler = createHandler();
