/**
 * The local gateway's reading of the IAM policy an authorizer returns, as API Gateway reads it
 * before calling the function.
 */
import type { PolicyDocument } from 'aws-lambda';

/** Each policy resource's pattern, compiled once: a cached policy is checked on every request. */
const globs = new Map<string, RegExp>();
const globMatches = (pattern: string, value: string): boolean => {
  let glob = globs.get(pattern);
  if (!glob) {
    glob = new RegExp(
      `^${pattern
        .split('*')
        .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
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
