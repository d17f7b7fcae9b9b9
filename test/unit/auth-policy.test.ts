/** The authorizer's IAM policy: one cached policy must allow every route of the stage, and nothing else. */
import { describe, expect, it } from 'vitest';
import { allowEveryMethod, stageWildcardArn } from '../../shared/auth-policy';
import { policyAllows } from '../../tools/local-server/policy';

const API = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5';
const arn = (method: string, path: string, api = API, stage = 'v1') => `${api}/${stage}/${method}${path}`;

describe('allowEveryMethod', () => {
  const keyHash = '0123456789ab'.padEnd(64, 'f');
  const result = allowEveryMethod(arn('GET', '/pets'), { keyId: '0123456789ab', keyHash });

  it('names the key as the principal and hands its id and hash to the handlers', () => {
    expect(result.principalId).toBe('0123456789ab');
    expect(result.context).toEqual({ keyId: '0123456789ab', keyHash });
  });

  it('allows execute-api:Invoke on the whole stage', () => {
    expect(result.policyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: `${API}/v1/*` }],
    });
  });

  it.each([
    ['GET', '/pets'],
    ['POST', '/pets'],
    ['GET', '/pets/1'],
    ['GET', '/store/orders'],
  ])('lets the same cached policy through to %s %s', (method, path) => {
    expect(policyAllows(result.policyDocument, arn(method, path))).toBe(true);
  });

  it('is the same whichever route was called first', () => {
    expect(allowEveryMethod(arn('POST', '/pets'), { keyId: 'k', keyHash: 'h' }).policyDocument).toEqual(
      allowEveryMethod(arn('GET', '/store/orders'), { keyId: 'k', keyHash: 'h' }).policyDocument,
    );
  });

  it.each([
    ['another API', arn('GET', '/pets', 'arn:aws:execute-api:eu-west-1:123456789012:zzzzzzzzzz')],
    ['an API whose id starts with this one', arn('GET', '/pets', `${API}0`)],
    ['another stage', arn('GET', '/pets', API, 'v2')],
    ['a stage whose name starts with this one', arn('GET', '/pets', API, 'v10')],
    ['another account', arn('GET', '/pets', 'arn:aws:execute-api:eu-west-1:999999999999:a1b2c3d4e5')],
    ['another region', arn('GET', '/pets', 'arn:aws:execute-api:us-east-1:123456789012:a1b2c3d4e5')],
  ])('does not reach %s', (_, other) => {
    expect(policyAllows(result.policyDocument, other)).toBe(false);
  });
});

describe('stageWildcardArn', () => {
  it('keeps the API and the stage and replaces the rest with *', () => {
    expect(stageWildcardArn(arn('GET', '/pets/42'))).toBe(`${API}/v1/*`);
  });
});
