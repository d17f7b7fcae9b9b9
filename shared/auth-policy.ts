/**
 * The IAM policies a TOKEN authorizer returns. API Gateway caches the policy per token and
 * reuses it for every route, so the authorizer allows every method of the stage: a policy for
 * just the method at hand would refuse the next route called with the same key.
 */
import type { APIGatewayAuthorizerResult, PolicyDocument } from 'aws-lambda';

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

/** Each policy resource's pattern, compiled once: a cached policy is checked on every request. */
const globs = new Map<string, RegExp>();
const globMatches = (pattern: string, value: string): boolean => {
  let glob = globs.get(pattern);
  if (!glob) {
    glob = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    globs.set(pattern, glob);
  }
  return glob.test(value);
};

/** Whether a policy lets the caller invoke `methodArn`, as API Gateway decides: an explicit Deny wins. */
export const policyAllows = (policy: PolicyDocument, methodArn: string): boolean => {
  let allowed = false;
  for (const statement of policy.Statement) {
    const resources = 'Resource' in statement && statement.Resource !== undefined ? [statement.Resource].flat() : [];
    if (!resources.some((resource) => globMatches(resource, methodArn))) continue;
    if (statement.Effect === 'Deny') return false;
    if (statement.Effect === 'Allow') allowed = true;
  }
  return allowed;
};
