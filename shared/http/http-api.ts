/**
 * httpApi: the middleware every API handler uses, chosen from the route table. Order matters:
 * middy runs `before`s in this order and `after`/`onError`s in reverse, so the error formatter
 * answers first, then deprecation and common headers are added, and the access log sees the final
 * answer. The access line is what the operation's metrics are counted from (metric filters,
 * infra/constructs/request-metrics.ts): no line of its own per request.
 *
 * What an operation does not use is not in its bundle: the JSON body parser comes from the handler
 * of an operation that takes a body (the route says which, and httpApi checks it), and CORS only
 * from a stage that allows origins (infra/bundling.ts defines them at build).
 */
import type middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { routeOf, type OperationId, type Route, type RouteOf } from '../routes';
import { accessLog } from './access-log';
import { cors, corsOrigins } from './cors';
import { deprecation, type Clock } from './deprecation';
import { errorFormatter } from './error-formatter';
import type { jsonBody } from './json-body';
import { rateLimitPolicy } from './rate-limit-policy';
import { responseHeaders } from './response-headers';

export type { Clock } from './deprecation';

/** Whether an operation's route has a body model: then it takes a JSON body. */
type TakesBody<Id extends OperationId> = RouteOf<Id> extends { readonly request: { readonly body: string } } ? true : false;

export type HttpApiOptions<Id extends OperationId = OperationId> = {
  readonly operationId: Id;
  /** The clock deprecation reads; injectable so tests can stand after the sunset. */
  readonly now?: Clock;
} & (TakesBody<Id> extends true
  ? {
      /** The JSON body parser (shared/http/json-body.ts), which the handler of an operation that takes a body passes. */
      readonly jsonBody: typeof jsonBody;
    }
  : { readonly jsonBody?: never });

type Middleware = middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult>;

export const httpApi = <Id extends OperationId>(options: HttpApiOptions<Id>): Middleware[] => {
  const { operationId, now } = options;
  const route: Route = routeOf(operationId);
  const bodyParser = options.jsonBody;
  // An operation with a body model takes a JSON body, and one without takes none.
  if ((route.request?.body !== undefined) !== (bodyParser !== undefined)) {
    throw new Error(`${operationId}: its handler must pass httpApi the JSON body parser exactly when its route has a body model`);
  }
  return [
    accessLog(operationId),
    responseHeaders(),
    rateLimitPolicy(),
    // Written out in full: a deployed bundle has the stage's origins in place of this expression
    // (infra/bundling.ts), and none leaves CORS out of it.
    ...(process.env.CORS_ALLOWED_ORIGINS ? [cors(corsOrigins())] : []),
    ...(route.deprecated ? [deprecation(route.deprecated, now)] : []),
    errorFormatter(),
    httpHeaderNormalizer() as Middleware,
    // The handler parses the body with its model.
    ...(bodyParser ? bodyParser() : []),
  ];
};
