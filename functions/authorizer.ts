/**
 * The TOKEN authorizer: allows a request whose bearer key is registered, not revoked and not past
 * its expiry, on the routes its scopes cover (a valid key without the scope is answered 403, not
 * 401), names the API key its usage plan meters (`usageIdentifierKey`), and records the key's last
 * use at most once an hour.
 * It refuses by throwing exactly "Unauthorized", which API Gateway answers with 401; anything
 * else it throws (its database is down) is to API Gateway an AUTHORIZER_CONFIGURATION_ERROR, whose
 * gateway response is a 503 with Retry-After.
 */
import middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { apiKeysRepository, type ApiKeyRecord, type ApiKeysRepository } from '../shared/api-keys-repository';
import { keyState } from '../shared/key-state';
import { bearerKey } from '../shared/api-keys';
import { allowScopedMethods, AuthorizerRefusal } from '../shared/auth-policy';
import { DatabaseUnavailable } from '../shared/dynamodb';
import { authorizerLog } from '../shared/http/authorizer-log';
import type { Clock } from '../shared/http/deprecation';
import { logger } from '../shared/logger';
import {
  meteredPlan,
  ownUsageKey,
  policiesOf,
  policiesOfJson,
  SHARED_USAGE_KEY_VARIABLE,
  USAGE_PLANS_VARIABLE,
} from '../shared/plan-policy';

export interface AuthorizerDependencies {
  readonly keys?: ApiKeysRepository;
  /** The time a key's expiry and last use are read against; injectable so tests can stand past an expiry. */
  readonly now?: Clock;
  /** The value of the `default` plan's shared usage key; by default `SHARED_USAGE_KEY`. */
  readonly sharedUsageKey?: string;
  /** The stage's plans, for the `RateLimit-Policy` each key's answers carry; by default those of `USAGE_PLANS`. */
  readonly plans?: Readonly<Record<string, unknown>>;
}

/** The API key that meters a key, the plan that API key is on, and its id when it is the key's own. */
interface Usage {
  readonly usageIdentifierKey: string | undefined;
  readonly plan: string;
  /** The client a roll keeps: the id of the key's own usage key, which its successor shares. */
  readonly usageKeyId: string | undefined;
}

/**
 * A key with an API key of its own is metered by it, on its plan. A key without one (made before
 * plans, or an item typed in the console) is metered by the shared usage key, which is in the
 * `default` plan whatever plan the item names. Attributes are read as the console may have typed them.
 */
export const usageOf = (record: ApiKeyRecord, sharedUsageKey: string | undefined): Usage => {
  const own = ownUsageKey(record);
  const { usageKeyId } = record as { readonly usageKeyId?: unknown };
  return {
    usageIdentifierKey: own ?? sharedUsageKey,
    plan: meteredPlan(record),
    // As roll hands it on: only with the usage key itself. The shared usage key is no one's own.
    usageKeyId: own !== undefined && typeof usageKeyId === 'string' && usageKeyId !== '' ? usageKeyId : undefined,
  };
};

export const createHandler = ({
  keys = apiKeysRepository(),
  now = () => new Date(),
  sharedUsageKey = process.env[SHARED_USAGE_KEY_VARIABLE],
  plans,
}: AuthorizerDependencies = {}) => {
  const policies = plans === undefined ? policiesOfJson(process.env[USAGE_PLANS_VARIABLE]) : policiesOf(plans);
  return middy<APIGatewayTokenAuthorizerEvent, APIGatewayAuthorizerResult>()
    .use(authorizerLog())
    .handler(async (event) => {
      const key = bearerKey(event.authorizationToken);
      const at = now();

      const record = key === undefined ? undefined : await keys.find(key);
      if (!record) throw new AuthorizerRefusal('unknown');
      const state = keyState(record, at);
      if (state !== 'active') throw new AuthorizerRefusal(state, record.keyId);

      await recordUse(keys, record, at);
      // Without a usage key API Gateway refuses the request (INVALID_API_KEY), as it should.
      const { usageIdentifierKey, plan, usageKeyId } = usageOf(record, sharedUsageKey);
      const rateLimitPolicy = policies.get(plan);
      const allowed = allowScopedMethods(
        event.methodArn,
        {
          keyId: record.keyId,
          keyHash: record.keyHash,
          plan,
          ...(usageKeyId === undefined ? {} : { usageKeyId }),
          ...(rateLimitPolicy === undefined ? {} : { rateLimitPolicy }),
        },
        record.scopes,
      );
      return usageIdentifierKey === undefined ? allowed : { ...allowed, usageIdentifierKey };
    });
};

/**
 * Last use is bookkeeping, so a failed write is one warning and never a refusal. Awaited all the
 * same (Lambda may freeze the process as soon as the handler returns), within a short deadline.
 */
const recordUse = async (keys: ApiKeysRepository, record: ApiKeyRecord, at: Date) => {
  try {
    await keys.recordUse(record, at);
  } catch (error) {
    // The key's id and the kind of failure only: an SDK message may quote the item's key or the table.
    const reason = error instanceof DatabaseUnavailable ? error.reason : error instanceof Error ? error.name : typeof error;
    logger.warn('last use not recorded', { keyId: record.keyId, reason });
  }
};

export const handler = createHandler();
