/**
 * A local stand-in for API Gateway: it does what the deployed gateway does before and around the
 * Lambda functions, and nothing more. It routes by the shared route table, throttles, caps body
 * sizes, runs the same TOKEN authorizer (with a TTL cache like API Gateway's), turns the request
 * into the same APIGatewayProxyEvent, calls the same handler, and answers its own refusals with
 * the same gateway responses the stack renders.
 */
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayTokenAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { BEARER_PATTERN } from '../../shared/api-keys';
import { AUTHORIZER_REFUSAL, policyAllows } from '../../shared/auth-policy';
import { gatewayAnswer, GATEWAY_REQUEST_ID_HEADER, type GatewayResponseType } from '../../shared/gateway-responses';
import { errorResponse, withCommonHeaders } from '../../shared/http/response';
import { logger } from '../../shared/logger';
import { BASE_PATH, matchRoute, pathBelowBase, STAGE_NAME, type RouteMatch } from '../../shared/routes';
import { FUNCTION_TIMEOUT_SECONDS } from '../../shared/stack';

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
}

interface CachedPolicy {
  readonly result: APIGatewayAuthorizerResult;
  readonly expiresAt: number;
}

const bearer = new RegExp(BEARER_PATTERN);

export const createGateway = ({
  handlers,
  authorizer,
  authCacheTtlSeconds = DEFAULT_AUTH_CACHE_TTL_SECONDS,
  throttle = DEFAULT_THROTTLE,
  now = () => new Date(),
}: GatewayOptions) => {
  const policyCache = new Map<string, CachedPolicy>();
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
    let result = policyCache.get(token);
    if (!result || result.expiresAt <= at) {
      policyCache.delete(token);
      try {
        const answer = await authorizer({ type: 'TOKEN', authorizationToken: token, methodArn }, lambdaContext('authorizer'));
        result = { result: answer, expiresAt: at + authCacheTtlSeconds * 1000 };
        if (authCacheTtlSeconds > 0) policyCache.set(token, result);
      } catch (error) {
        return error instanceof Error && error.message === AUTHORIZER_REFUSAL ? 'UNAUTHORIZED' : 'AUTHORIZER_FAILURE';
      }
    }
    return policyAllows(result.result.policyDocument, methodArn) ? result.result : 'ACCESS_DENIED';
  };

  return async (request: GatewayRequest): Promise<APIGatewayProxyResult> => {
    const requestId = randomUUID();
    return withGatewayRequestId(await answer(request, requestId), requestId);
  };

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

    if (route.notImplemented) return withCommonHeaders(errorResponse('not_implemented'), requestId);
    const handler = handlers[route.operationId];
    if (!handler) return gatewayResponse('DEFAULT_5XX', requestId);
    const event = proxyEvent({ request, body: request.body, url, match, subPath, authorized, requestId });
    try {
      return await handler(event, lambdaContext(route.operationId));
    } catch {
      // A handler that throws past its error formatter: API Gateway answers with its default 5XX.
      return gatewayResponse('DEFAULT_5XX', requestId);
    }
  }
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
}

/** The REST API proxy event API Gateway would send for this request. */
const proxyEvent = ({ request, body, url, match, subPath, authorized, requestId }: ProxyEventParts): APIGatewayProxyEvent => {
  const { route, pathParameters } = match;
  const forwarded: Array<readonly [string, string]> = [
    ...request.headers.filter(([name]) => !/^x-forwarded-(proto|for)$/i.test(name)),
    ['X-Forwarded-Proto', 'http'],
    ['X-Forwarded-For', request.sourceIp],
  ];
  const headers = multiValue(forwarded);
  const query = multiValue(url.searchParams.entries());
  const host = headers.single.Host ?? headers.single.host ?? 'localhost';
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
      domainName: host,
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
