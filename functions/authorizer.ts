/**
 * The TOKEN authorizer: allows a request whose bearer key is registered and not revoked, on
 * the routes its scopes cover (a valid key without the scope is answered 403, not 401).
 * It refuses by throwing exactly "Unauthorized", which API Gateway answers with 401; anything
 * else it throws (its database is down) is to API Gateway an AUTHORIZER_CONFIGURATION_ERROR, whose
 * gateway response is a 503 with Retry-After.
 */
import middy from '@middy/core';
import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { apiKeysRepository, type ApiKeysRepository } from '../shared/api-keys-repository';
import { bearerKey } from '../shared/api-keys';
import { allowScopedMethods, AUTHORIZER_REFUSAL } from '../shared/auth-policy';
import { authorizerLog } from '../shared/http/authorizer-log';

export interface AuthorizerDependencies {
  readonly keys?: ApiKeysRepository;
}

export const createHandler = ({ keys = apiKeysRepository() }: AuthorizerDependencies = {}) =>
  middy<APIGatewayTokenAuthorizerEvent, APIGatewayAuthorizerResult>()
    .use(authorizerLog())
    .handler(async (event) => {
      const key = bearerKey(event.authorizationToken);

      const record = key === undefined ? undefined : await keys.findActive(key);

      if (!record) throw new Error(AUTHORIZER_REFUSAL);
      return allowScopedMethods(event.methodArn, { keyId: record.keyId, keyHash: record.keyHash }, record.scopes);
    });

export const handler = createHandler();
