/**
 * CORS, defined once: the stack's preflight answers and gateway responses, and the functions'
 * own answers, all read these lists. Browsers may call the API only from the origins a stage
 * allows (none by default); the functions learn them from `CORS_ALLOWED_ORIGINS`.
 */
import type middy from '@middy/core';
import httpCors from '@middy/http-cors';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Environment } from '../config';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from './idempotency-key';
import { REQUEST_ID_HEADER } from './response';
import { RATE_LIMIT_POLICY_HEADER } from '../plan-policy';
import { routeMethods } from '../routes';

export const CORS_ORIGINS_VARIABLE = 'CORS_ALLOWED_ORIGINS';
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', IDEMPOTENCY_KEY_HEADER] as const;
/** Every method of the route table: a new method cannot be forgotten here (preflights answer OPTIONS themselves). */
export const CORS_ALLOWED_METHODS: readonly string[] = routeMethods();
/** Response headers a browser script may read: paging, the new pet's address, deprecation, retry advice, the key's plan. */
export const CORS_EXPOSED_HEADERS = [
  'Link',
  'Location',
  'Deprecation',
  'Sunset',
  'Retry-After',
  RATE_LIMIT_POLICY_HEADER,
  'WWW-Authenticate',
  REQUEST_ID_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
] as const;
/** How long a browser may reuse a preflight answer. */
export const CORS_MAX_AGE_SECONDS = 600;

/** The allowed origins from the environment: a comma-separated list, empty when unset. */
export const corsOrigins = (env: Environment = process.env): string[] =>
  (env[CORS_ORIGINS_VARIABLE] ?? '')
    .split(',')
    .map((origin) => origin.trim())
    .filter((origin) => origin !== '');

/** Adds `Access-Control-Allow-Origin` (and `Vary: Origin`) when the request comes from an allowed origin. */
export const cors = (origins: readonly string[]): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> =>
  httpCors({
    origins: [...origins],
    exposeHeaders: CORS_EXPOSED_HEADERS.join(', '),
    // Our preflights are answered by API Gateway; the functions only decorate real answers.
    disableBeforePreflightResponse: true,
  }) as middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult>;
