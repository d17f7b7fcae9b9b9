/**
 * A local stand-in for API Gateway: it does what the deployed gateway does before and around the
 * Lambda functions, and nothing more. It routes by the shared route table, throttles, caps body
 * sizes, runs the same TOKEN authorizer (with a TTL cache like API Gateway's), turns the request
 * into the same APIGatewayProxyEvent, calls the same handler, and answers its own refusals with
 * the same gateway responses the stack renders. Every answer writes one log line.
 */
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
  Context,
} from 'aws-lambda';
import middy from '@middy/core';
import { randomUUID } from 'node:crypto';
import { BEARER_PATTERN } from '../../shared/api-keys';
import { AUTHORIZER_REFUSAL, policyAllows } from '../../shared/auth-policy';
import { gatewayAnswer, GATEWAY_REQUEST_ID_HEADER, type GatewayResponseType } from '../../shared/gateway-responses';
import { cors, corsOrigins } from '../../shared/http/cors';
import { errorResponse, withCommonHeaders } from '../../shared/http/response';
import { logger } from '../../shared/logger';
import { BASE_PATH, matchRoute, pathBelowBase, STAGE_NAME, type RouteMatch } from '../../shared/routes';
import { FUNCTION_TIMEOUT_SECONDS } from '../../shared/stack';
import { createAuthorizerCache } from './authorizer-cache';

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type TokenAuthorizer = (event: APIGatewayTokenAuthorizerEvent, context: Context) => Promise<APIGatewayAuthorizerResult>;

/** API Gateway's own limit on a request body (10 MB). */
export const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;
/** API Gateway's default authorizer cache TTL. */
export const DEFAULT_AUTH_CACHE_TTL_SECONDS = 300;
/** API Gateway's default account-level throttle (requests per second, and burst). */
export const DEFAULT_THROTTLE = { rate: 10_000, burst: 5_000 } as const;
/** How long a handler may run: the functions' timeout in the stack. */
export const HANDLER_TIMEOUT_MS = FUNCTION_TIMEOUT_SECONDS * 1000;

export interface GatewayRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  /** Header names in the client's own case, as API Gateway passes them on. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** The body's bytes as sent; undefined when it was over API Gateway's limit and left unread. */
  readonly body: Buffer | undefined;
  readonly sourceIp: string;
}

export interface GatewayOptions {
  /** Handlers by operationId. */
  readonly handlers: Readonly<Record<string, ProxyHandler>>;
  readonly authorizer: TokenAuthorizer;
  readonly authCacheTtlSeconds?: number;
  readonly throttle?: { readonly rate: number; readonly burst: number };
  readonly now?: () => Date;
  /**
   * The API's own host (and port), as API Gateway sets `requestContext.domainName`: the URLs the
   * functions write are built from it, never from the request's Host. A function, because the
   * server knows its port only once it listens.
   */
  readonly domainName?: () => string;
  /** Origins browsers may call from, for the answers the gateway gives itself; by default `CORS_ALLOWED_ORIGINS`. */
  readonly corsAllowedOrigins?: readonly string[];
}

/** The gateway: a request in, its answer out; and how many tokens its authorizer cache holds. */
export interface Gateway {
  (request: GatewayRequest): Promise<APIGatewayProxyResult>;
  readonly authCacheSize: () => number;
}

const bearer = new RegExp(BEARER_PATTERN);

export const createGateway = ({
  handlers,
  authorizer,
  authCacheTtlSeconds = DEFAULT_AUTH_CACHE_TTL_SECONDS,
  throttle = DEFAULT_THROTTLE,
  now = () => new Date(),
  domainName = () => 'localhost',
  corsAllowedOrigins = corsOrigins(),
}: GatewayOptions): Gateway => {
  const policyCache = createAuthorizerCache(authCacheTtlSeconds);
  const notImplemented = mockNotImplemented(corsAllowedOrigins);
  const bucket = { tokens: throttle.burst, refilledAt: now().getTime() };

  const takeToken = (): boolean => {
    const at = now().getTime();
    const elapsed = Math.max(0, at - bucket.refilledAt); // an injected clock may step back
    bucket.tokens = Math.min(throttle.burst, bucket.tokens + (elapsed / 1000) * throttle.rate);
    bucket.refilledAt = at;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  };

  const gatewayResponse = (type: GatewayResponseType, requestId: string): APIGatewayProxyResult => {
    const response = gatewayAnswer(type);
    logger.info('gateway', { requestId, gatewayResponse: type, status: response.statusCode });
    return response;
  };

  /** Runs the authorizer, or reuses its cached policy for this token. Returns a refusal, or the policy. */
  const authorize = async (
    token: string | undefined,
    methodArn: string,
  ): Promise<GatewayResponseType | APIGatewayAuthorizerResult> => {
    if (token === undefined || !bearer.test(token)) return 'UNAUTHORIZED';
    const at = now().getTime();
    let result = policyCache.get(token, at);
    if (!result) {
      try {
        result = await authorizer({ type: 'TOKEN', authorizationToken: token, methodArn }, lambdaContext('authorizer'));
      } catch (error) {
        // As API Gateway: only exactly "Unauthorized" is a 401; anything else the authorizer
        // throws is its AUTHORIZER_CONFIGURATION_ERROR.
        return error instanceof Error && error.message === AUTHORIZER_REFUSAL ? 'UNAUTHORIZED' : 'AUTHORIZER_CONFIGURATION_ERROR';
      }
      policyCache.set(token, result, at);
    }
    return policyAllows(result.policyDocument, methodArn) ? result : 'ACCESS_DENIED';
  };

  const gateway = async (request: GatewayRequest): Promise<APIGatewayProxyResult> => {
    const requestId = randomUUID();
    return withGatewayRequestId(await answer(request, requestId), requestId);
  };
  return Object.assign(gateway, { authCacheSize: () => policyCache.size });

  async function answer(request: GatewayRequest, requestId: string): Promise<APIGatewayProxyResult> {
    const url = parseRequestTarget(request.url);
    const subPath = url === undefined ? undefined : pathBelowBase(url.pathname);
    const match = subPath === undefined ? undefined : matchRoute(request.method, subPath);
    if (!url || !match || subPath === undefined) return gatewayResponse('MISSING_AUTHENTICATION_TOKEN', requestId);
    if (!takeToken()) return gatewayResponse('THROTTLED', requestId);
    if (request.body === undefined) return gatewayResponse('REQUEST_TOO_LARGE', requestId);

    const { route } = match;
    const methodArn = `arn:aws:execute-api:local:000000000000:local/${STAGE_NAME}/${route.method}${subPath}`;
    const token = request.headers.find(([name]) => name.toLowerCase() === 'authorization')?.[1];
    const authorized = await authorize(token, methodArn);
    if (typeof authorized === 'string') return gatewayResponse(authorized, requestId);

    const event = proxyEvent({ request, body: request.body, url, match, subPath, authorized, requestId, domainName: domainName() });
    if (route.notImplemented) {
      const response = withCommonHeaders(await notImplemented(event, lambdaContext(route.operationId)), requestId);
      // The functions log their own answers; this one is the gateway's, so it logs it the same way.
      logger.info('request', { requestId, operation: route.operationId, status: response.statusCode, keyId: authorized.principalId, errorCode: 'not_implemented' });
      return response;
    }
    const handler = handlers[route.operationId];
    if (!handler) return gatewayResponse('DEFAULT_5XX', requestId);
    try {
      return await handler(event, lambdaContext(route.operationId));
    } catch {
      // A handler that throws past its error formatter: API Gateway answers with its default 5XX.
      return gatewayResponse('DEFAULT_5XX', requestId);
    }
  }
};

/**
 * The 501 of a listed but unspecified route, as the stack's mock integration answers it: with the
 * same CORS headers the functions add (their middleware, so both decide alike).
 */
const mockNotImplemented = (origins: readonly string[]) => {
  const answer = middy<APIGatewayProxyEvent, APIGatewayProxyResult>();
  if (origins.length > 0) answer.use(cors(origins));
  return answer.handler(async () => errorResponse('not_implemented'));
};

/** Like API Gateway, every answer carries the request id as `x-amzn-RequestId`. */
export const withGatewayRequestId = (response: APIGatewayProxyResult, requestId: string): APIGatewayProxyResult => ({
  ...response,
  headers: { ...response.headers, [GATEWAY_REQUEST_ID_HEADER]: requestId },
});

/** The request target as a URL, its path kept as sent (`//x/v1/pets` is a path, not a host). */
const parseRequestTarget = (target: string): URL | undefined => {
  try {
    return new URL(`http://localhost${target.startsWith('/') ? '' : '/'}${target}`);
  } catch {
    return undefined;
  }
};

const multiValue = (pairs: Iterable<readonly [string, string]>) => {
  // No prototype: a parameter or header named `constructor` or `__proto__` is just a name.
  const single: Record<string, string> = Object.create(null) as Record<string, string>;
  const multi: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const [name, value] of pairs) {
    single[name] = value; // like API Gateway: the last value wins in the single-value map
    (multi[name] ??= []).push(value);
  }
  return { single, multi, empty: Object.keys(single).length === 0 };
};

interface ProxyEventParts {
  readonly request: GatewayRequest;
  readonly body: Buffer;
  readonly url: URL;
  readonly match: RouteMatch;
  /** The path below the base path, as sent. */
  readonly subPath: string;
  readonly authorized: APIGatewayAuthorizerResult;
  readonly requestId: string;
  readonly domainName: string;
}

/** The REST API proxy event API Gateway would send for this request. */
const proxyEvent = ({ request, body, url, match, subPath, authorized, requestId, domainName }: ProxyEventParts): APIGatewayProxyEvent => {
  const { route, pathParameters } = match;
  const forwarded: Array<readonly [string, string]> = [
    ...request.headers.filter(([name]) => !/^x-forwarded-(proto|for)$/i.test(name)),
    ['X-Forwarded-Proto', 'http'],
    ['X-Forwarded-For', request.sourceIp],
  ];
  const headers = multiValue(forwarded);
  const query = multiValue(url.searchParams.entries());
  return {
    resource: route.path,
    path: subPath,
    httpMethod: request.method,
    headers: headers.single,
    multiValueHeaders: headers.multi,
    queryStringParameters: query.empty ? null : query.single,
    multiValueQueryStringParameters: query.empty ? null : query.multi,
    pathParameters: Object.keys(pathParameters).length === 0 ? null : pathParameters,
    stageVariables: null,
    // The stack makes every media type binary (`binaryMediaTypes: ['*/*']`), so API Gateway
    // passes a body's bytes as sent, base64-encoded, and the handler decodes them strictly.
    body: body.length === 0 ? null : body.toString('base64'),
    isBase64Encoded: body.length > 0,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: { principalId: authorized.principalId, ...authorized.context, integrationLatency: 0 },
      protocol: 'HTTP/1.1',
      httpMethod: request.method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: request.sourceIp,
        user: null,
        userAgent: headers.single['User-Agent'] ?? headers.single['user-agent'] ?? null,
        userArn: null,
      },
      path: `${BASE_PATH}${subPath}`,
      stage: STAGE_NAME,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: route.path,
      domainName,
    },
  };
};

const lambdaContext = (functionName: string): Context => {
  const deadline = Date.now() + HANDLER_TIMEOUT_MS;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
};
