/**
 * The IAM policies a TOKEN authorizer returns. API Gateway caches the policy per token and
 * reuses it for every route, so the authorizer allows every method of the stage: a policy for
 * just the method at hand would refuse the next route called with the same key.
 */
import type { APIGatewayAuthorizerResult } from 'aws-lambda';

/** The one error message a Lambda authorizer throws for API Gateway to answer 401. */
export const AUTHORIZER_REFUSAL = 'Unauthorized';

/** The context the authorizer hands to the handlers (`requestContext.authorizer`). */
export interface AuthorizerContext {
  /** The key's short id: safe to log, but only 48 bits, so two keys may share it. */
  readonly keyId: string;
  /** The key's full SHA-256 hash: what tells callers apart (idempotency scope). Never logged. */
  readonly keyHash: string;
}

/** `arn:…:apiId/stage/METHOD/path` → `arn:…:apiId/stage/*`. */
export const stageWildcardArn = (methodArn: string): string => {
  const [apiArn, stage] = methodArn.split('/');
  return `${apiArn}/${stage}/*`;
};

export const allowEveryMethod = (methodArn: string, context: AuthorizerContext): APIGatewayAuthorizerResult => ({
  principalId: context.keyId,
  policyDocument: {
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: stageWildcardArn(methodArn) }],
  },
  context: { ...context },
});
