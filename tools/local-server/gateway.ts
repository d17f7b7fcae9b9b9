/**
 * A local stand-in for API Gateway: it does what the deployed gateway does before and around the
 * Lambda functions, and nothing more. It routes by the shared route table, caps body sizes, runs
 * the same TOKEN authorizer (with a TTL cache like API Gateway's), throttles, and only then reads
 * the body; it turns the request into the same APIGatewayProxyEvent, calls the same handler, and
 * answers its own refusals with the same gateway responses the stack renders. Every answer writes
 * one log line.
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
import { performance } from 'node:perf_hooks';
import { accessLogLine, type AccessLogLine } from '../../shared/access-log';
import { BEARER_PATTERN } from '../../shared/api-keys';
import { AUTHORIZER_REFUSAL } from '../../shared/auth-policy';
import { gatewayAnswer, GATEWAY_REQUEST_ID_HEADER, type GatewayResponseType } from '../../shared/gateway-responses';
import { cors, corsOrigins } from '../../shared/http/cors';
import { errorResponse, withCommonHeaders } from '../../shared/http/response';
import { logger, safeErrorFields } from '../../shared/logger';
import type { PlanLimits } from '../../shared/plan-policy';
import { plansInForce } from '../../shared/plans';
import { createAuthorizerCache } from './authorizer-cache';
import { LOCAL_API_ID, lambdaContext, methodArn as methodArnOf, proxyEvent, tokenEvent } from '../../shared/gateway-events';
import { policyAllows } from './policy';
import { routes, type KeylessRoute, type Route } from '../../shared/routes';
import { isRoutedAsSent, matchRoute, pathBelowBase } from './route-matcher';
import type { UsageLog } from './usage-log';
import { createUsageMeter, usageDay } from './usage-plans';

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
export type TokenAuthorizer = (event: APIGatewayTokenAuthorizerEvent, context: Context) => Promise<APIGatewayAuthorizerResult>;

/** API Gateway's own limit on a request body (10 MB). */
export const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;
/** API Gateway's default authorizer cache TTL. */
export const DEFAULT_AUTH_CACHE_TTL_SECONDS = 300;
/** API Gateway's default account-level throttle (requests per second, and burst). */
export const DEFAULT_THROTTLE = { rate: 10_000, burst: 5_000 } as const;

export interface GatewayRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  /** Header names in the client's own case, as API Gateway passes them on. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /**
   * Reads the body, which the gateway asks for only once the request is routed, authorized and
   * metered, as API Gateway does: a refused request's body is never read. Held as `holder`'s (the
   * key's id). Its bytes as sent, or why they were not read whole.
   */
  readonly readBody: (holder: string) => Promise<Buffer | BodyRefusal>;
  readonly sourceIp: string;
}

/**
 * Why a body was not read whole: over API Gateway's 10 MB; over the bytes of bodies the server
 * holds at once, or over the key's share of them; not there by the body deadline; or the client
 * went away.
 */
export type BodyRefusal = 'REQUEST_TOO_LARGE' | 'BODIES_IN_FLIGHT' | 'KEY_BODIES_IN_FLIGHT' | 'BODY_TIMEOUT' | 'CLIENT_CLOSED';

/**
 * The local server's own answers, which API Gateway has no response type for: the access line
 * names them in `gatewayResponse` as it names a type. CLIENT_CLOSED is answered to no one.
 */
const localResponses = {
  // The server's limit, not the client's: a 503 to retry, as for any capacity the client cannot see.
  BODIES_IN_FLIGHT: () => errorResponse('service_unavailable', 'The server holds as many request bodies as it can at once: retry later.'),
  BODY_TIMEOUT: () => errorResponse('validation_failed', 'The request body did not arrive whole in time: send it without pausing.'),
  CLIENT_CLOSED: () => errorResponse('validation_failed', 'The request body ended before the length it declared.'),
} as const satisfies Record<string, () => APIGatewayProxyResult>;
type LocalResponseType = keyof typeof localResponses;
const isLocalResponse = (type: string): type is LocalResponseType => Object.hasOwn(localResponses, type);
const answerOf = (type: GatewayResponseType | LocalResponseType): APIGatewayProxyResult =>
  isLocalResponse(type) ? localResponses[type]() : gatewayAnswer(type);

/** The body's length as the client declares it (Content-Length), undefined when it declares none. */
export const declaredBodyLength = (headers: ReadonlyArray<readonly [string, string]>): number | undefined => {
  const value = headers.find(([name]) => name.toLowerCase() === 'content-length')?.[1];
  return value === undefined ? undefined : Number(value);
};

export interface GatewayOptions {
  /** Handlers by operationId. */
  readonly handlers: Readonly<Record<string, ProxyHandler>>;
  readonly authorizer: TokenAuthorizer;
  readonly authCacheTtlSeconds?: number;
  /** The stage throttle: the ceiling over all keys together, applied after each key's plan. */
  readonly throttle?: { readonly rate: number; readonly burst: number };
  /** The usage plans each key is metered on (by default those of PLANS_FILE, else shared/plans.ts). */
  readonly plans?: Readonly<Record<string, PlanLimits>>;
  readonly now?: () => Date;
  /**
   * The API's own host (and port), as API Gateway sets `requestContext.domainName`: the URLs the
   * functions write are built from it, never from the request's Host. A function, because the
   * server knows its port only once it listens.
   */
  readonly domainName?: () => string;
  /** Origins browsers may call from, for the answers the gateway gives itself; by default `CORS_ALLOWED_ORIGINS`. */
  readonly corsAllowedOrigins?: readonly string[];
  /** Where each answer's access line goes, the stage's access log: the fields API Gateway's carries. By default nowhere. */
  readonly accessLog?: (line: AccessLogLine) => void;
  /** Where each key's use per day is recorded for the key tool (tools/local-server/usage-log.ts); nowhere when absent. */
  readonly usageLog?: UsageLog;
}

/** What the gateway saw of one request, as API Gateway fills the access log's `$context` variables. */
interface Seen {
  readonly requestId: string;
  readonly requestTime: number;
  resourcePath?: string;
  keyId?: string;
  plan?: string;
  authorizerStatus?: number;
  authorizerLatency?: number;
  integrationStatus?: number;
  integrationLatency?: number;
  responseType?: GatewayResponseType | LocalResponseType;
}

/** A request the usage plan let through, and what takes it off the key's count again. */
interface Metering {
  readonly giveBack: () => void;
}

/** Milliseconds since `start` (a `performance.now()`), whole as API Gateway writes them. */
const msSince = (start: number) => Math.round(performance.now() - start);

/** The gateway: a request in, its answer out; how many tokens its authorizer cache holds, and what tells it of key changes. */
export interface Gateway {
  (request: GatewayRequest): Promise<APIGatewayProxyResult>;
  readonly authCacheSize: () => number;
  /** The item of the key with this hash changed: its cached answers go, as a flush of API Gateway's cache drops them. */
  readonly keyChanged: (keyHash: string) => void;
  /** Whether key changes reach `keyChanged`: while they do not, no answer is cached, since one could outlive its key's change. */
  readonly followingKeyChanges: (following: boolean) => void;
  /** Drops every cached answer of every key, as FlushStageAuthorizersCache does to a deployed stage's cache. */
  readonly flushAuthorizerCache: () => void;
}

const bearer = new RegExp(BEARER_PATTERN);

export const createGateway = ({
  handlers,
  authorizer,
  authCacheTtlSeconds = DEFAULT_AUTH_CACHE_TTL_SECONDS,
  throttle = DEFAULT_THROTTLE,
  plans = plansInForce(),
  now = () => new Date(),
  domainName = () => 'localhost',
  corsAllowedOrigins = corsOrigins(),
  accessLog = () => undefined,
  usageLog,
}: GatewayOptions): Gateway => {
  const policyCache = createAuthorizerCache(authCacheTtlSeconds);
  const notImplemented = mockNotImplemented(corsAllowedOrigins);
  const takeToken = tokenBucket(throttle, now);
  // Each keyless route's own method throttle, in place of the stage's, as API Gateway's method throttling.
  const methodThrottles = new Map(
    routes.flatMap((route: Route) =>
      route.keyless
        ? [[route.operationId, tokenBucket({ rate: route.keyless.throttle.rateLimit, burst: route.keyless.throttle.burstLimit }, now)]]
        : [],
    ),
  );
  const usageMeter = createUsageMeter();

  const gatewayResponse = (type: GatewayResponseType | LocalResponseType, seen: Seen, reason?: string): APIGatewayProxyResult => {
    const response = answerOf(type);
    seen.responseType = type;
    const { requestId } = seen;
    logger.info('gateway', { requestId, gatewayResponse: type, status: response.statusCode, ...(reason === undefined ? {} : { reason }) });
    return response;
  };

  /**
   * Meters the request on the usage plan of the API key the authorizer named, as API Gateway does
   * with the API key source AUTHORIZER: no usage key, or one of no plan, is INVALID_API_KEY.
   * The plan is the one the authorizer's context names (the key's). A request let through is
   * recorded in the usage log, under the usage key's id the context names too; `recordings` gets
   * the write, which the answer waits for, so that the key tool counts a request once it is answered.
   * Returns the refusal, or what takes the request off the key's count again (the server could
   * not take its body: the client is not charged for that).
   */
  const meterUsage = (authorized: APIGatewayAuthorizerResult, recordings: Array<Promise<void>>): GatewayResponseType | Metering => {
    const usageKey = authorized.usageIdentifierKey;
    const name = authorized.context?.plan;
    // Own properties only: a plan named `constructor` is no plan.
    const plan = typeof name === 'string' && Object.hasOwn(plans, name) ? plans[name] : undefined;
    if (!usageKey || !plan) return 'INVALID_API_KEY';
    const at = now().getTime();
    const metered = usageMeter.take(usageKey, plan, at);
    if (metered !== 'allowed') return metered;
    const usageKeyId = authorized.context?.usageKeyId;
    const record = () => {
      if (usageLog && typeof usageKeyId === 'string')
        recordings.push(usageLog.record(usageKeyId, usageDay(at), usageMeter.usedOn(usageKey, at)));
    };
    record();
    return {
      giveBack: () => {
        usageMeter.giveBack(usageKey, plan, at);
        record();
      },
    };
  };

  /** Runs the authorizer, or reuses its cached policy for this token. Returns a refusal, or the policy. */
  const authorize = async (
    token: string | undefined,
    methodArn: string,
    seen: Seen,
  ): Promise<GatewayResponseType | APIGatewayAuthorizerResult> => {
    if (token === undefined || !bearer.test(token)) return 'UNAUTHORIZED';
    const at = now().getTime();
    let result = policyCache.get(token, at);
    if (!result) {
      // A key that changes while the authorizer reads it may be answered as it was: not cached then.
      const changes = policyCache.changes;
      const started = performance.now();
      try {
        result = await authorizer(tokenEvent(token, methodArn), lambdaContext('authorizer'));
      } catch (error) {
        // As API Gateway: only exactly "Unauthorized" is a 401; anything else the authorizer
        // throws is its AUTHORIZER_CONFIGURATION_ERROR.
        const refused = error instanceof Error && error.message === AUTHORIZER_REFUSAL;
        Object.assign(seen, { authorizerStatus: refused ? 401 : 500, authorizerLatency: msSince(started) });
        return refused ? 'UNAUTHORIZED' : 'AUTHORIZER_CONFIGURATION_ERROR';
      }
      seen.authorizerLatency = msSince(started);
      policyCache.set(token, result, at, changes);
    }
    const plan = result.context?.plan;
    Object.assign(seen, { authorizerStatus: 200, keyId: result.principalId, plan: typeof plan === 'string' ? plan : undefined });
    return policyAllows(result.policyDocument, methodArn) ? result : 'ACCESS_DENIED';
  };

  const gateway = async (request: GatewayRequest): Promise<APIGatewayProxyResult> => {
    const started = performance.now();
    const seen: Seen = { requestId: randomUUID(), requestTime: now().getTime() };
    const recordings: Array<Promise<void>> = [];
    const response = withGatewayRequestId(await answerOrFault(request, seen, recordings), seen.requestId);
    await Promise.all(recordings);
    // The client went away before its body was read: nothing was answered, the line says so.
    const answered = seen.responseType !== 'CLIENT_CLOSED';
    accessLog(
      accessLogLine({
        '$context.requestId': seen.requestId,
        '$context.apiId': LOCAL_API_ID,
        '$context.requestTimeEpoch': seen.requestTime,
        '$context.identity.sourceIp': request.sourceIp,
        '$context.httpMethod': request.method,
        '$context.resourcePath': seen.resourcePath,
        '$context.status': answered ? response.statusCode : undefined,
        '$context.responseLength': answered
          ? Buffer.byteLength(response.body ?? '', response.isBase64Encoded ? 'base64' : 'utf8')
          : undefined,
        '$context.responseLatency': msSince(started),
        '$context.integration.latency': seen.integrationLatency,
        '$context.integration.status': seen.integrationStatus,
        '$context.authorizer.principalId': seen.keyId,
        '$context.authorizer.plan': seen.plan,
        '$context.authorizer.status': seen.authorizerStatus,
        '$context.authorizer.latency': seen.authorizerLatency,
        '$context.error.responseType': seen.responseType,
      }),
    );
    return response;
  };
  return Object.assign(gateway, {
    authCacheSize: () => policyCache.size,
    keyChanged: (keyHash: string) => policyCache.forgetKey(keyHash),
    followingKeyChanges: (following: boolean) => policyCache.following(following),
    flushAuthorizerCache: () => policyCache.flush(),
  });

  /**
   * The answer to a body not read whole. Not charged to the key when the server could not take it:
   * its own limit (503), or the key's share of it (429, the key's own doing, as a plan's rate is).
   */
  function bodyRefused(refusal: BodyRefusal, seen: Seen, metered: Metering): APIGatewayProxyResult {
    if (refusal === 'BODIES_IN_FLIGHT' || refusal === 'KEY_BODIES_IN_FLIGHT') metered.giveBack();
    if (refusal === 'KEY_BODIES_IN_FLIGHT') return gatewayResponse('THROTTLED', seen, 'bodies in flight of this key');
    return gatewayResponse(refusal, seen);
  }

  /** The answer; a fault of the gateway itself is its default 5XX, so that the request still writes its access line. */
  async function answerOrFault(request: GatewayRequest, seen: Seen, recordings: Array<Promise<void>>): Promise<APIGatewayProxyResult> {
    try {
      return await answer(request, seen, recordings);
    } catch (error) {
      logger.error('gateway', { requestId: seen.requestId, ...safeErrorFields(error) });
      return gatewayResponse('DEFAULT_5XX', seen);
    }
  }

  async function answer(request: GatewayRequest, seen: Seen, recordings: Array<Promise<void>>): Promise<APIGatewayProxyResult> {
    const { requestId } = seen;
    const { path, query } = requestTarget(request.url);
    // A path is routed as sent: what a URL library would resolve or rewrite names no route.
    if (!isRoutedAsSent(path)) return gatewayResponse('MISSING_AUTHENTICATION_TOKEN', seen, 'dot segment or backslash in the path');
    const subPath = pathBelowBase(path);
    const match = subPath === undefined ? undefined : matchRoute(request.method, subPath);
    if (!match || subPath === undefined) return gatewayResponse('MISSING_AUTHENTICATION_TOKEN', seen);
    // A body declared over the limit is refused before anything else, as API Gateway does; one sent
    // without a length is counted as it is read, once the request is authorized.
    if ((declaredBodyLength(request.headers) ?? 0) > GATEWAY_MAX_BODY_BYTES) return gatewayResponse('REQUEST_TOO_LARGE', seen);

    const { route } = match;
    seen.resourcePath = route.path;
    if (route.keyless) return answerKeyless(request, route, subPath, query, match.pathParameters, seen);
    const methodArn = methodArnOf(route.method, subPath);
    const token = request.headers.find(([name]) => name.toLowerCase() === 'authorization')?.[1];
    const authorized = await authorize(token, methodArn, seen);
    if (typeof authorized === 'string') return gatewayResponse(authorized, seen);
    // Each key's plan first, then the stage throttle over all keys together.
    const metered = meterUsage(authorized, recordings);
    if (typeof metered === 'string') return gatewayResponse(metered, seen);
    if (!takeToken()) return gatewayResponse('THROTTLED', seen);

    // Only now is the body read: a request refused above never had its bytes held.
    const body = await request.readBody(authorized.principalId);
    if (typeof body === 'string') return bodyRefused(body, seen, metered);

    const event = proxyEvent({
      method: request.method,
      resource: route.path,
      path: subPath,
      headers: request.headers,
      query: query.entries(),
      pathParameters: match.pathParameters,
      // The stack makes every media type binary, so API Gateway passes a body's bytes as sent.
      body,
      authorized,
      requestId,
      domainName: domainName(),
      sourceIp: request.sourceIp,
    });
    if (route.notImplemented) {
      const response = withCommonHeaders(await notImplemented(event, lambdaContext(route.operationId)), requestId);
      // The functions log their own answers; this one is the gateway's, so it logs it the same way.
      logger.info('request', {
        requestId,
        operation: route.operationId,
        status: response.statusCode,
        keyId: authorized.principalId,
        errorCode: 'not_implemented',
      });
      return response;
    }
    return integrate(route, event, seen);
  }

  /**
   * A keyless route, as API Gateway serves a method without an authorizer or an API key: no
   * authorizer runs (an Authorization header is passed on, unread), no plan meters it, and its own
   * method throttle stands in for the stage's. It takes no body.
   */
  async function answerKeyless(
    request: GatewayRequest,
    route: KeylessRoute,
    subPath: string,
    query: URLSearchParams,
    pathParameters: Record<string, string>,
    seen: Seen,
  ): Promise<APIGatewayProxyResult> {
    if (!methodThrottles.get(route.operationId)?.()) return gatewayResponse('THROTTLED', seen);
    const event = proxyEvent({
      method: request.method,
      resource: route.path,
      path: subPath,
      headers: request.headers,
      query: query.entries(),
      pathParameters,
      requestId: seen.requestId,
      domainName: domainName(),
      sourceIp: request.sourceIp,
    });
    return integrate(route, event, seen);
  }

  /** The route's function, as a Lambda proxy integration: its answer, or the gateway's default 5XX when it throws. */
  async function integrate(route: Route, event: APIGatewayProxyEvent, seen: Seen): Promise<APIGatewayProxyResult> {
    const handler = handlers[route.operationId];
    if (!handler) return gatewayResponse('DEFAULT_5XX', seen);
    const started = performance.now();
    try {
      const response = await handler(event, lambdaContext(route.operationId));
      Object.assign(seen, { integrationStatus: response.statusCode, integrationLatency: msSince(started) });
      return response;
    } catch {
      // A handler that throws past its error formatter: API Gateway answers with its default 5XX.
      seen.integrationLatency = msSince(started);
      return gatewayResponse('DEFAULT_5XX', seen);
    }
  }
};

/** A token bucket of `rate` a second, holding at most `burst`: takes a token, or says there is none. */
const tokenBucket = (throttle: { readonly rate: number; readonly burst: number }, now: () => Date) => {
  const bucket = { tokens: throttle.burst, refilledAt: now().getTime() };
  return (): boolean => {
    const at = now().getTime();
    const elapsed = Math.max(0, at - bucket.refilledAt); // an injected clock may step back
    bucket.tokens = Math.min(throttle.burst, bucket.tokens + (elapsed / 1000) * throttle.rate);
    bucket.refilledAt = at;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  };
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

/**
 * The request target as sent: its path, never normalized (no dot segment resolved, no backslash
 * made a slash, as a URL parser would), and its query. A fragment, which no client sends, is not
 * part of either.
 */
const requestTarget = (target: string): { readonly path: string; readonly query: URLSearchParams } => {
  const [beforeFragment = ''] = target.split('#', 1);
  const queryAt = beforeFragment.indexOf('?');
  return queryAt === -1
    ? { path: beforeFragment, query: new URLSearchParams() }
    : { path: beforeFragment.slice(0, queryAt), query: new URLSearchParams(beforeFragment.slice(queryAt + 1)) };
};
