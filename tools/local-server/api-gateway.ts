/**
 * The local gateway's stand-in for API Gateway's control plane, for the one call a function makes
 * of it: FlushStageAuthorizersCache of the local stage, which empties the gateway's authorizer
 * cache whole, as the call empties a deployed stage's. The key-audit function's flush
 * (shared/authorizer-cache.ts stageAuthorizerCacheFlush) runs on it unchanged.
 */
import { NotFoundException } from '@aws-sdk/client-api-gateway';
import { API_STAGE_NAME_VARIABLE, REST_API_ID_VARIABLE, type AuthorizerCacheFlushCalls } from '../../shared/authorizer-cache';
import { LOCAL_API_ID } from '../../shared/gateway-events';
import { STAGE_NAME } from '../../shared/routes';

/** The environment a deployed function gets from its stack to name its stage, naming the local one. */
export const LOCAL_STAGE_ENV: Readonly<Record<string, string>> = {
  [REST_API_ID_VARIABLE]: LOCAL_API_ID,
  [API_STAGE_NAME_VARIABLE]: STAGE_NAME,
};

/** The control plane of a local gateway whose cache `flush` empties; a stage other than the local one is not found, as in AWS. */
export const localApiGateway = (flush: () => void): AuthorizerCacheFlushCalls => ({
  send: async (command) => {
    const { restApiId, stageName } = command.input;
    if (restApiId !== LOCAL_API_ID || stageName !== STAGE_NAME) {
      throw new NotFoundException({ message: 'Invalid stage identifier specified', $metadata: { httpStatusCode: 404 } });
    }
    flush();
    return {};
  },
});
