/**
 * The IAM policies a TOKEN authorizer returns. API Gateway caches the policy per token and
 * reuses it for every route, so the policy covers every route the key's scopes allow, whichever
 * route was called: a policy for just the method at hand would refuse the next route called with
 * the same key.
 */
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { isKeyed, routes, type Route } from './routes';
import type { MeteringRefusal } from './plan-policy';
import type { Scope } from './scopes';

/** The one error message a Lambda authorizer throws for API Gateway to answer 401. */
export const AUTHORIZER_REFUSAL = 'Unauthorized';

/** Why a key is refused: no key has its hash, the key's state, or an item that cannot be metered. */
export type RefusalReason = 'unknown' | 'revoked' | 'expired' | MeteringRefusal;

/**
 * The authorizer's refusal: its message is AUTHORIZER_REFUSAL, as API Gateway needs; the reason,
 * and the key's id when the key is known, are for the log line (never the key or its hash).
 */
export class AuthorizerRefusal extends Error {
  constructor(
    readonly reason: RefusalReason,
    readonly keyId?: string,
  ) {
    super(AUTHORIZER_REFUSAL);
  }
}

/** The context the authorizer hands to the handlers (`requestContext.authorizer`). */
export interface AuthorizerContext {
  /** The key's short id: safe to log, but only 48 bits, so two keys may share it. */
  readonly keyId: string;
  /** The key's full SHA-256 hash: what tells keys apart. Never logged. */
  readonly keyHash: string;
  /**
   * The id of the key's own usage key (API Gateway API key), which a roll hands to the successor:
   * what tells clients apart across rolls (idempotency scope).
   */
  readonly usageKeyId: string;
  /** The usage plan the key is metered on. */
  readonly plan: string;
  /** That plan's `RateLimit-Policy` header value, when the authorizer knows the plan. */
  readonly rateLimitPolicy?: string;
}

/** `arn:…:apiId/stage/METHOD/path` → `arn:…:apiId/stage/*`. */
export const stageWildcardArn = (methodArn: string): string => {
  const [apiArn, stage] = methodArn.split('/');
  return `${apiArn}/${stage}/*`;
};

/**
 * The resource ARN of every route a scope covers: `arn:…:apiId/stage/METHOD/path`, `*` for each
 * path parameter. A keyless route has no authorizer, so no policy names it.
 */
const routeArns = (methodArn: string, scopes: readonly Scope[]): string[] => {
  const [apiArn, stage] = methodArn.split('/');
  return routes
    .filter((route: Route) => isKeyed(route) && scopes.includes(route.scope))
    .map((route) => `${apiArn}/${stage}/${route.method}${route.path.replace(/\{[^}]+\}/g, '*')}`);
};

/**
 * Allows exactly the routes the key's scopes cover, across the stage. A key whose scopes cover no
 * route is still a valid key: its policy denies the stage, which API Gateway answers with 403
 * (ACCESS_DENIED), not 401.
 */
export const allowScopedMethods = (methodArn: string, context: AuthorizerContext, scopes: readonly Scope[]): APIGatewayAuthorizerResult => {
  const resources = routeArns(methodArn, scopes);
  return {
    principalId: context.keyId,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [
        resources.length > 0
          ? { Effect: 'Allow', Action: 'execute-api:Invoke', Resource: resources }
          : { Effect: 'Deny', Action: 'execute-api:Invoke', Resource: stageWildcardArn(methodArn) },
      ],
    },
    context: { ...context },
  };
};
