/**
 * authorizerLog: one line per refusal (with why, and the key's id when the key is known) or
 * failure (with a redacted error). Never the token or its hash. An allow writes no line: the
 * stage's access log names the key (`keyId`, the authorizer's principal) on every request, cached
 * or not, where an authorizer line would come only on a cache miss, for about 15 µs a call.
 */
import type middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { AUTHORIZER_REFUSAL, AuthorizerRefusal } from '../auth-policy';
import { logger, safeErrorFields } from '../logger';

export const authorizerLog = (): middy.MiddlewareObj<APIGatewayTokenAuthorizerEvent, APIGatewayAuthorizerResult> => ({
  onError: async ({ error }) => {
    // Leaves the error in place: API Gateway decides the answer from it.
    if (error instanceof AuthorizerRefusal) {
      logger.info('authorizer', { decision: 'refuse', reason: error.reason, ...(error.keyId === undefined ? {} : { keyId: error.keyId }) });
    } else if (error instanceof Error && error.message === AUTHORIZER_REFUSAL) logger.info('authorizer', { decision: 'refuse' });
    else logger.error('authorizer', { decision: 'fail', ...safeErrorFields(error) });
  },
});
