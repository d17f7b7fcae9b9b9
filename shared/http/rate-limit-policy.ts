/**
 * rateLimitPolicy: adds `RateLimit-Policy` (IETF httpapi ratelimit-headers draft) to a successful
 * answer: the caller's plan, as the authorizer passed it. Never to an error, and never a remaining
 * count: API Gateway does not expose one, so none is invented.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { RATE_LIMIT_POLICY_HEADER } from '../plan-policy';

export const rateLimitPolicy = (): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  after: async (request) => {
    const policy: unknown = request.event.requestContext.authorizer?.rateLimitPolicy;
    if (!request.response || request.response.statusCode >= 400 || typeof policy !== 'string' || policy === '') return;
    request.response = { ...request.response, headers: { ...request.response.headers, [RATE_LIMIT_POLICY_HEADER]: policy } };
  },
});
