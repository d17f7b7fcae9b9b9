/**
 * authorizerLog: one line per authorizer decision: allowed (with the key's id), refused (with why,
 * and the key's id when the key is known), or failed (with a redacted error). Never the token or
 * its hash.
 */
import type middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { AUTHORIZER_REFUSAL, AuthorizerRefusal } from '../auth-policy';
import { logger, safeErrorFields } from '../logger';

export const authorizerLog = (): middy.MiddlewareObj<APIGatewayTokenAuthorizerEvent, APIGatewayAuthorizerResult> => ({
  after: async ({ response }) => {
    logger.info('authorizer', { decision: 'allow', keyId: response?.principalId });
  },
  onError: async ({ error }) => {
    // Leaves the error in place: API Gateway decides the answer from it.
    if (error instanceof AuthorizerRefusal) {
      logger.info('authorizer', { decision: 'refuse', reason: error.reason, ...(error.keyId === undefined ? {} : { keyId: error.keyId }) });
    } else if (error instanceof Error && error.message === AUTHORIZER_REFUSAL) logger.info('authorizer', { decision: 'refuse' });
    else logger.error('authorizer', { decision: 'fail', ...safeErrorFields(error) });
  },
});
