/**
 * httpApi: the middleware every API handler uses, chosen from the route table. Order matters:
 * middy runs `before`s in this order and `after`/`onError`s in reverse, so the error formatter
 * answers first, then deprecation and common headers are added, and the metrics and the access
 * log see the final answer.
 */
import type middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { routeOf, type OperationId, type Route } from '../routes';
import { accessLog } from './access-log';
import { cors, corsOrigins } from './cors';
import { deprecation, type Clock } from './deprecation';
import { errorFormatter } from './error-formatter';
import { jsonBody } from './json-body';
import { rateLimitPolicy } from './rate-limit-policy';
import { requestMetrics } from './request-metrics';
import { responseHeaders } from './response-headers';

export type { Clock } from './deprecation';

export interface HttpApiOptions {
  readonly operationId: OperationId;
  /** The clock deprecation reads; injectable so tests can stand after the sunset. */
  readonly now?: Clock;
  /** Origins browsers may call from; by default `CORS_ALLOWED_ORIGINS`, and none when unset. */
  readonly allowedOrigins?: readonly string[];
}

type Middleware = middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult>;

export const httpApi = ({ operationId, now, allowedOrigins = corsOrigins() }: HttpApiOptions): Middleware[] => {
  const route: Route = routeOf(operationId);
  return [
    accessLog(operationId),
    ...requestMetrics(operationId),
    responseHeaders(),
    rateLimitPolicy(),
    ...(allowedOrigins.length > 0 ? [cors(allowedOrigins)] : []),
    ...(route.deprecated ? [deprecation(route.deprecated, now)] : []),
    errorFormatter(),
    httpHeaderNormalizer() as Middleware,
    // An operation with a body model takes a JSON body; the handler parses it with that model.
    ...(route.request?.body ? jsonBody() : []),
  ];
};
