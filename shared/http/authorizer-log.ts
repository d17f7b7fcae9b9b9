/**
 * authorizerLog: one line per refusal (with why, and the key's id when the key is known; a warning
 * when its item was changed so that it cannot be metered) or failure (with a redacted error).
 * Never the token or its hash. An allow writes no line: the stage's access log names the key
 * (`keyId`, the authorizer's principal) on every request, cached or not, where an authorizer line
 * would come only on a cache miss, for about 15 µs a call.
 */
import type middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { AUTHORIZER_REFUSAL, AuthorizerRefusal, type RefusalReason } from '../auth-policy';
import { logger, safeErrorFields } from '../logger';

/**
 * What marks the line of an authorizer failure (never a refusal's): the field and value that the
 * stack's metric filter on the authorizer's log group counts as `AuthorizerFailures`, and alarms
 * on (infra/constructs/monitoring.ts). Lambda's own Errors cannot tell the two apart.
 */
export const AUTHORIZER_FAILURE_LINE = { field: 'decision', value: 'fail', metricName: 'AuthorizerFailures' } as const;

/** The refusals of a key whose item cannot be metered (shared/plan-policy.ts): logged as warnings. */
const ITEM_REFUSALS: ReadonlySet<RefusalReason> = new Set(['no-usage-key', 'usage-key-mismatch', 'no-plan']);

export const authorizerLog = (): middy.MiddlewareObj<APIGatewayTokenAuthorizerEvent, APIGatewayAuthorizerResult> => ({
  onError: async ({ error }) => {
    // Leaves the error in place: API Gateway decides the answer from it.
    if (error instanceof AuthorizerRefusal) {
      const fields = { decision: 'refuse', reason: error.reason, ...(error.keyId === undefined ? {} : { keyId: error.keyId }) };
      // A key refused for its item (changed by hand) is for an operator to look at, not a client's mistake.
      if (ITEM_REFUSALS.has(error.reason)) logger.warn('authorizer', fields);
      else logger.info('authorizer', fields);
    } else if (error instanceof Error && error.message === AUTHORIZER_REFUSAL) logger.info('authorizer', { decision: 'refuse' });
    else logger.error('authorizer', { [AUTHORIZER_FAILURE_LINE.field]: AUTHORIZER_FAILURE_LINE.value, ...safeErrorFields(error) });
  },
});
