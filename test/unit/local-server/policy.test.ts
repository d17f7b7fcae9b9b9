/** The local gateway's reading of an authorizer's policy, as API Gateway reads it: an explicit Deny wins. */
import type { PolicyDocument } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { policyAllows } from '../../../tools/local-server/policy';
import { fixturePath } from '../../support/fixture-names';

const API = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5';
const arn = (method: string, path: string, api = API, stage = 'v1') => `${api}/${stage}/${method}${path}`;

describe('policyAllows', () => {
  const allowAll: PolicyDocument['Statement'][number] = { Effect: 'Allow', Action: 'execute-api:Invoke', Resource: `${API}/v1/*` };
  const denyGetPets: PolicyDocument['Statement'][number] = {
    Effect: 'Deny',
    Action: 'execute-api:Invoke',
    Resource: `${API}/v1/GET/pets`,
  };

  it('lets an explicit Deny win over an Allow, whatever the order', () => {
    for (const Statement of [
      [allowAll, denyGetPets],
      [denyGetPets, allowAll],
    ]) {
      const policy: PolicyDocument = { Version: '2012-10-17', Statement };
      expect(policyAllows(policy, arn('GET', '/pets'))).toBe(false);
      expect(policyAllows(policy, arn('POST', '/pets'))).toBe(true);
    }
  });

  it('refuses when no statement matches', () => {
    const policy: PolicyDocument = { Version: '2012-10-17', Statement: [{ ...allowAll, Resource: `${API}/v1/GET/pets` }] };
    expect(policyAllows(policy, arn('GET', '/pets/1'))).toBe(false);
    expect(policyAllows({ Version: '2012-10-17', Statement: [] }, arn('GET', '/pets'))).toBe(false);
  });

  it('matches any of a list of resources', () => {
    const policy: PolicyDocument = {
      Version: '2012-10-17',
      Statement: [{ ...allowAll, Resource: [`${API}/v1/GET/pets`, `${API}/v1/POST/pets`] }],
    };
    expect(policyAllows(policy, arn('POST', '/pets'))).toBe(true);
    expect(policyAllows(policy, arn('GET', fixturePath('orders')))).toBe(false);
  });

  it("reads the ARN's dots and other characters literally, not as patterns", () => {
    const policy: PolicyDocument = { Version: '2012-10-17', Statement: [{ ...allowAll, Resource: `${API}/v1.0/GET/pets` }] };
    expect(policyAllows(policy, arn('GET', '/pets', API, 'v1x0'))).toBe(false);
    expect(policyAllows(policy, arn('GET', '/pets', API, 'v1.0'))).toBe(true);
  });
});
