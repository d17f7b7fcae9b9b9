/** The authorizer's IAM policy: one cached policy must allow every route the key's scopes cover, and nothing else. */
import { describe, expect, it } from 'vitest';
import { allowScopedMethods, stageWildcardArn } from '../../shared/auth-policy';
import { isKeyed, routes, type OperationId, type Route } from '../../shared/routes';
import { grantedScopes, SCOPES, type Scope } from '../../shared/scopes';
import { policyAllows } from '../../tools/local-server/policy';
import { keyedOperationIds, operationIds, requestTo } from '../support/operations';
import { fixtureScope } from '../support/fixture-names';
import { READ_PETS, WRITE_PETS } from '../support/vocabulary';

const API = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5';
const arn = (method: string, path: string, api = API, stage = 'v1') => `${api}/${stage}/${method}${path}`;

/** One request to each route of the API, with a concrete path parameter. */
const requests = requestTo;
type Operation = OperationId;
const scopeOf = (id: OperationId): string => (routes as readonly Route[]).find((route) => route.operationId === id)?.scope ?? '';

const allowed = (scopes: readonly Scope[], calledFirst = arn('GET', '/pets')): Operation[] => {
  const { policyDocument } = allowScopedMethods(calledFirst, { keyId: 'k', keyHash: 'h', usageKeyId: 'u', plan: 'default' }, scopes);
  return (Object.keys(requests) as Operation[]).filter((operation) =>
    policyAllows(policyDocument, arn(requests[operation][0], requests[operation][1])),
  );
};

describe('allowScopedMethods', () => {
  const keyHash = '0123456789ab'.padEnd(64, 'f');
  const result = allowScopedMethods(arn('GET', '/pets'), { keyId: '0123456789ab', keyHash, usageKeyId: 'ak-1', plan: 'default' }, SCOPES);

  it('names the key as the principal and hands its id, hash, usage key id and plan to the handlers', () => {
    expect(result.principalId).toBe('0123456789ab');
    expect(result.context).toEqual({ keyId: '0123456789ab', keyHash, usageKeyId: 'ak-1', plan: 'default' });
  });

  it('allows execute-api:Invoke on each route of every scope, in one statement, with * for path parameters', () => {
    expect(result.policyDocument).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Effect: 'Allow',
          Action: 'execute-api:Invoke',
          // Each keyed route's method and path (a keyless one has no authorizer), a path parameter's segment a wildcard (GET /pets/{petId} as GET/pets/*).
          Resource: routes
            .filter((route: Route) => isKeyed(route))
            .map(({ method, path }) => `${API}/v1/${method}${path.replace(/\{[^}/]+\}/g, '*')}`),
        },
      ],
    });
  });

  it.each([
    // Each scope alone: the operations the route table gives it.
    ...SCOPES.map((scope): [Scope[], Operation[]] => [[scope], operationIds.filter((id) => scopeOf(id) === scope)]),
    [[READ_PETS, WRITE_PETS], operationIds.filter((id) => [READ_PETS, WRITE_PETS].some((scope) => scope === scopeOf(id)))],
    [[...SCOPES], [...keyedOperationIds]],
  ] satisfies Array<[Scope[], Operation[]]>)('with scopes %j allows exactly %j', (scopes, operations) => {
    expect(allowed(scopes)).toEqual(operations);
  });

  it('allows a pets:read key to read pets, and nothing that changes one', () => {
    expect(allowed(['pets:read'])).toEqual(operationIds.filter((id) => scopeOf(id) === 'pets:read'));
    for (const operation of allowed(['pets:read'])) expect(requests[operation][0], operation).toBe('GET');
    for (const operation of allowed(['pets:write'])) expect(requests[operation][0], operation).not.toBe('GET');
  });

  it('is the same whichever route was called first, so that API Gateway may cache it per token', () => {
    const firstCalls = keyedOperationIds.map((id) => arn(requests[id][0], requests[id][1]));
    const policyOf = (calledFirst: string, scopes: readonly Scope[]) =>
      allowScopedMethods(calledFirst, { keyId: 'k', keyHash: 'h', usageKeyId: 'u', plan: 'default' }, scopes).policyDocument;
    for (const scopes of [[READ_PETS], [WRITE_PETS], [...SCOPES]] satisfies Scope[][]) {
      for (const calledFirst of firstCalls) {
        expect(allowed(scopes, calledFirst), calledFirst).toEqual(allowed(scopes, firstCalls[0]));
        expect(policyOf(calledFirst, scopes), calledFirst).toEqual(policyOf(firstCalls[0] ?? '', scopes));
      }
    }
  });

  it('allows nothing for a key with no scope, by an explicit Deny on the stage (a 403, not a 401)', () => {
    const { policyDocument, principalId } = allowScopedMethods(
      arn('GET', '/pets'),
      { keyId: 'k', keyHash: 'h', usageKeyId: 'u', plan: 'default' },
      [],
    );
    expect(principalId).toBe('k');
    expect(policyDocument.Statement).toEqual([{ Effect: 'Deny', Action: 'execute-api:Invoke', Resource: `${API}/v1/*` }]);
    expect(allowed([])).toEqual([]);
  });

  it.each([
    ['another API', arn('GET', '/pets', 'arn:aws:execute-api:eu-west-1:123456789012:zzzzzzzzzz')],
    ['an API whose id starts with this one', arn('GET', '/pets', `${API}0`)],
    ['another stage', arn('GET', '/pets', API, 'v2')],
    ['a stage whose name starts with this one', arn('GET', '/pets', API, 'v10')],
    ['another account', arn('GET', '/pets', 'arn:aws:execute-api:eu-west-1:999999999999:a1b2c3d4e5')],
    ['another region', arn('GET', '/pets', 'arn:aws:execute-api:us-east-1:123456789012:a1b2c3d4e5')],
    ['a method no route has', arn('DELETE', '/pets')],
  ])('does not reach %s', (_, other) => {
    expect(policyAllows(result.policyDocument, other)).toBe(false);
  });
});

describe('grantedScopes', () => {
  it('grants nothing to a key stored without a scopes attribute (deleted by hand): it fails closed', () => {
    expect(grantedScopes(undefined)).toEqual([]);
    expect(allowed(grantedScopes(undefined))).toEqual([]);
    expect(grantedScopes([...SCOPES])).toEqual([...SCOPES]);
  });

  it('grants the scopes of a String Set as DynamoDB reads it back, in a stable order', () => {
    expect(grantedScopes(new Set([WRITE_PETS, READ_PETS]))).toEqual([READ_PETS, WRITE_PETS]);
  });

  it('ignores strings that are no scope: they grant nothing', () => {
    expect(grantedScopes(new Set([READ_PETS, fixtureScope('admin'), WRITE_PETS.toUpperCase(), '*']))).toEqual([READ_PETS]);
    expect(grantedScopes(new Set(['none']))).toEqual([]);
  });

  it.each([
    ['a string', `${READ_PETS} ${WRITE_PETS}`],
    ['a number', 1],
    ['null', null],
    ['a map', { 'pets:read': true }],
  ])('grants nothing for a scopes attribute of another type (%s)', (_, stored) => {
    expect(grantedScopes(stored)).toEqual([]);
  });
});

describe('stageWildcardArn', () => {
  it('keeps the API and the stage and replaces the rest with *', () => {
    expect(stageWildcardArn(arn('GET', '/pets/42'))).toBe(`${API}/v1/*`);
  });
});
