/**
 * The Lambda handlers and the authorizer, invoked as API Gateway invokes them (proxy and TOKEN
 * events), on repositories backed by the real DynamoDB Local.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler as createAuthorizer } from '../../functions/authorizer';
import { createHandler as createCreatePet } from '../../functions/create-pet';
import { createHandler as createGetPet } from '../../functions/get-pet';
import { createHandler as createListPets } from '../../functions/list-pets';
import { apiKeysRepository, LAST_USE_DEADLINE_MS, type ApiKeysRepository } from '../../shared/api-keys-repository';
import { generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import { createDocumentClient } from '../../shared/dynamodb';
import { logger } from '../../shared/logger';
import type { Pet } from '../../shared/models';
import { petsRepository, type PetsRepository } from '../../shared/pets-repository';
import { isKeyed, routes, type Route } from '../../shared/routes';
import { SCOPES, type Scope } from '../../shared/scopes';
import { freePort } from '../../tools/dynamodb-local';
import { apiEvent, BASE_URL, context, HOST, tokenEvent } from '../support/events';
import { putConsoleKey } from '../support/console-keys';
import { databaseTimeoutMs } from '../support/database';
import { startFaultProxy, type Fault, type FaultProxy } from '../support/fault-proxy';
import { recordingClient } from '../support/recording-client';
import { createTestTables, type TestTables } from '../support/tables';
import { localUsageKey } from '../../tools/local-server/usage-plans';
import { fixtureScope } from '../support/fixture-names';
import { literally, READ_ORDERS } from '../support/vocabulary';

/** Who this file's changes to keys are made by. */
const ACTOR = 'local:test';

const SUNSET = new Date('2030-12-05T00:00:00Z');

const jsonHeaders = { 'Content-Type': 'application/json' };
const postPetEvent = (body: unknown) => apiEvent({ method: 'POST', headers: jsonHeaders, body: JSON.stringify(body) });
const getPetEvent = (petId: string) => apiEvent({ resource: '/pets/{petId}', path: `/pets/${petId}`, pathParameters: { petId } });

const bodyOf = <T = unknown>(response: APIGatewayProxyResult): T => JSON.parse(response.body) as T;

/** The Error shape, whole: code, a message, and status equal to the HTTP status. */
const expectError = (response: APIGatewayProxyResult, status: number, code: string) => {
  expect({ statusCode: response.statusCode, body: bodyOf(response) }).toEqual({
    statusCode: status,
    body: { code, status, message: expect.stringMatching(/\S/) },
  });
  expect(response.headers?.['Content-Type']).toBe('application/json');
  return bodyOf<{ message: string }>(response).message;
};

const expectCommonHeaders = (response: APIGatewayProxyResult, event: APIGatewayProxyEvent) => {
  expect(response.headers).toMatchObject({
    'X-Request-Id': event.requestContext.requestId,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'Content-Type': 'application/json',
  });
};

/** The URL of a `Link` header's relation, if it has it. */
const linkUrl = (response: APIGatewayProxyResult, rel: string): URL | undefined => {
  const value = response.headers?.Link;
  if (typeof value !== 'string') return undefined;
  const match = new RegExp(`^<([^>]+)>; rel="${rel}"$`).exec(value);
  return match?.[1] === undefined ? undefined : new URL(match[1]);
};

let tables: TestTables;
let pets: PetsRepository;

beforeAll(async () => {
  tables = await createTestTables();
  pets = petsRepository({ client: tables.client, tableName: tables.pets });
});

describe('createPet', () => {
  const handler = () => createCreatePet({ pets });

  it('answers 201 with the pet, its Location and the common headers, and stores it', async () => {
    const event = postPetEvent({ name: 'Rex', categoryId: 3 });
    const response = await handler()(event, context);

    expect(response.statusCode).toBe(201);
    const pet = bodyOf<Pet>(response);
    expect(pet).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 3, status: 'available' });
    expect(response.headers?.Location).toBe(`${BASE_URL}/pets/${pet.id}`);
    expectCommonHeaders(response, event);
    expect(await pets.get(pet.id)).toEqual(pet);
  });

  it("accepts a JSON Content-Type with a charset, whatever the header name's case", async () => {
    const event = apiEvent({
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ name: 'Tom', categoryId: 1, status: 'sold' }),
    });
    const response = await handler()(event, context);
    expect(response.statusCode).toBe(201);
    expect(bodyOf<Pet>(response).status).toBe('sold');
  });

  it('answers a missing body (null) with 400 invalid_json', async () => {
    const event = apiEvent({ method: 'POST', headers: jsonHeaders, body: null });
    const response = await handler()(event, context);
    expectError(response, 400, 'invalid_json');
    expectCommonHeaders(response, event);
  });

  it.each(['', '{"name":', 'not json', '{"name":"Rex",}'])('answers the body %j with 400 invalid_json', async (body) => {
    const response = await handler()(apiEvent({ method: 'POST', headers: jsonHeaders, body }), context);
    expectError(response, 400, 'invalid_json');
  });

  it('answers a body without a Content-Type with 400 unsupported_media_type', async () => {
    const event = apiEvent({ method: 'POST', body: JSON.stringify({ name: 'Rex', categoryId: 1 }) });
    const response = await handler()(event, context);
    expectError(response, 400, 'unsupported_media_type');
    expectCommonHeaders(response, event);
  });

  it('answers a text/plain body with 400 unsupported_media_type', async () => {
    const event = apiEvent({
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    expectError(await handler()(event, context), 400, 'unsupported_media_type');
  });

  it('answers an invalid field with 400 validation_failed naming it, and stores nothing', async () => {
    const name = `never-stored-${randomUUID()}`;
    const response = await handler()(postPetEvent({ name, categoryId: '1' }), context);
    expect(expectError(response, 400, 'validation_failed')).toContain("'categoryId'");
    const everything = (await pets.list({ limit: 100 })).pets;
    expect(everything.some((pet) => pet.name === name)).toBe(false);
  });

  it('refuses a client-chosen id, naming the field', async () => {
    const response = await handler()(postPetEvent({ id: 5, name: 'Rex', categoryId: 1 }), context);
    expect(expectError(response, 400, 'validation_failed')).toContain("'id'");
  });

  it('answers a body over 16 KiB with 413 payload_too_large', async () => {
    const response = await handler()(postPetEvent({ name: 'x'.repeat(17 * 1024), categoryId: 1 }), context);
    expectError(response, 413, 'payload_too_large');
  });
});

describe('listPets', () => {
  let listTables: TestTables;
  let pending: Pet[];
  const handler = () => createListPets({ pets: petsRepository({ client: listTables.client, tableName: listTables.pets }) });

  beforeAll(async () => {
    listTables = await createTestTables();
    const repository = petsRepository({ client: listTables.client, tableName: listTables.pets });
    pending = [];
    for (let i = 0; i < 5; i += 1) {
      pending.push(await repository.create({ name: `pending-${i}`, categoryId: 1, status: 'pending' }));
      await repository.create({ name: `available-${i}`, categoryId: 1, status: 'available' });
    }
    pending.sort((a, b) => a.id - b.id);
  });

  it('answers a bare array with a Link rel="next" that keeps the limit and the status', async () => {
    const event = apiEvent({ query: { limit: '2', status: 'pending' } });
    const response = await handler()(event, context);

    expect(response.statusCode).toBe(200);
    expect(bodyOf(response)).toEqual(pending.slice(0, 2));
    expectCommonHeaders(response, event);
    const next = linkUrl(response, 'next');
    expect(next?.origin + (next?.pathname ?? '')).toBe(`${BASE_URL}/pets`);
    expect(next?.searchParams.get('limit')).toBe('2');
    expect(next?.searchParams.get('status')).toBe('pending');
    expect(next?.searchParams.get('cursor')).toMatch(/\S/);
    expect([...(next?.searchParams.keys() ?? [])].sort()).toEqual(['cursor', 'limit', 'status']);
  });

  it('follows the next links to the end: every pet once, in order, and no link on the last page', async () => {
    const seen: Pet[] = [];
    const sizes: number[] = [];
    let query: Record<string, string> | undefined = { limit: '2', status: 'pending' };
    while (query) {
      const response = await handler()(apiEvent({ query }), context);
      expect(response.statusCode).toBe(200);
      const page = bodyOf<Pet[]>(response);
      sizes.push(page.length);
      seen.push(...page);
      const next = linkUrl(response, 'next');
      query = next ? Object.fromEntries(next.searchParams) : undefined;
      expect(sizes.length).toBeLessThan(10);
    }
    expect(sizes).toEqual([2, 2, 1]);
    expect(seen).toEqual(pending);
  });

  it('leaves the status out of the next link of an unfiltered listing', async () => {
    const first = await handler()(apiEvent({ query: { limit: '3' } }), context);
    expect(bodyOf<Pet[]>(first)).toHaveLength(3);
    const next = linkUrl(first, 'next');
    expect(next?.searchParams.get('limit')).toBe('3');
    expect(next?.searchParams.has('status')).toBe(false);
  });

  it('answers everything in one page, without a Link, when it fits', async () => {
    const all = await handler()(apiEvent(), context);
    expect(bodyOf<Pet[]>(all)).toHaveLength(10);
    expect(all.headers?.Link).toBeUndefined();
  });

  it('lists 20 by default and says so in the next link', async () => {
    const fresh = await createTestTables();
    const repository = petsRepository({ client: fresh.client, tableName: fresh.pets });
    await Promise.all(Array.from({ length: 21 }, (_, i) => repository.create({ name: `p${i}`, categoryId: 1, status: 'sold' })));

    const response = await createListPets({ pets: repository })(apiEvent(), context);

    expect(bodyOf<Pet[]>(response)).toHaveLength(20);
    expect(linkUrl(response, 'next')?.searchParams.get('limit')).toBe('20');
  });

  it('refuses a cursor used with another status filter with 400 invalid_cursor', async () => {
    const first = await handler()(apiEvent({ query: { limit: '2', status: 'pending' } }), context);
    const cursor = linkUrl(first, 'next')?.searchParams.get('cursor') ?? '';
    const response = await handler()(apiEvent({ query: { limit: '2', status: 'sold', cursor } }), context);
    expectError(response, 400, 'invalid_cursor');
  });

  it('refuses a made-up cursor with 400 invalid_cursor', async () => {
    expectError(await handler()(apiEvent({ query: { cursor: 'abc.def' } }), context), 400, 'invalid_cursor');
  });

  it.each([
    ['an over-long cursor (513 characters)', 'x'.repeat(513)],
    ['an empty cursor', ''],
  ])('refuses %s with 400 invalid_cursor', async (_, cursor) => {
    expectError(await handler()(apiEvent({ query: { cursor } }), context), 400, 'invalid_cursor');
  });

  it.each([
    [{ limit: '0' }, "'limit'"],
    [{ limit: '101' }, "'limit'"],
    [{ limit: ['5', '6'] }, "'limit'"],
    [{ status: 'Pending' }, "'status'"],
    [{ page: '2' }, "'page'"],
  ])('refuses the query %j with 400 validation_failed naming %s', async (query, named) => {
    const response = await handler()(apiEvent({ query }), context);
    expect(expectError(response, 400, 'validation_failed')).toContain(named);
  });
});

describe('getPet (deprecated)', () => {
  let pet: Pet;
  beforeAll(async () => {
    pet = await pets.create({ name: 'Old', categoryId: 9, status: 'pending' });
  });

  const expectDeprecationHeaders = (response: APIGatewayProxyResult) => {
    expect(response.headers).toMatchObject({
      Deprecation: '@1767225600',
      Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
      Link: `<${BASE_URL}/pets>; rel="successor-version"`,
    });
  };

  it('answers 200 with the pet and the Deprecation, Sunset and successor-version headers', async () => {
    const event = getPetEvent(String(pet.id));
    const response = await createGetPet({ pets })(event, context);
    expect(response.statusCode).toBe(200);
    expect(bodyOf(response)).toEqual(pet);
    expectDeprecationHeaders(response);
    expectCommonHeaders(response, event);
  });

  it('dates the deprecation no later than the sunset', async () => {
    const response = await createGetPet({ pets })(getPetEvent(String(pet.id)), context);
    const deprecatedAt = Number(String(response.headers?.Deprecation).slice(1)) * 1000;
    expect(deprecatedAt).toBeLessThanOrEqual(SUNSET.getTime());
  });

  it('answers an unknown id with 404 not_found, still with the deprecation headers', async () => {
    const response = await createGetPet({ pets })(getPetEvent('1'), context);
    expectError(response, 404, 'not_found');
    expectDeprecationHeaders(response);
  });

  it.each(['0', 'abc', '1.5', '007', String(2 ** 53)])('answers the petId %j with 400 validation_failed', async (petId) => {
    const response = await createGetPet({ pets })(getPetEvent(petId), context);
    expect(expectError(response, 400, 'validation_failed')).toContain("'petId'");
  });

  it('answers 410 gone from the sunset instant on', async () => {
    for (const now of [SUNSET, new Date(SUNSET.getTime() + 1), new Date('2031-06-01T00:00:00Z')]) {
      const event = getPetEvent(String(pet.id));
      const response = await createGetPet({ pets, now: () => now })(event, context);
      expect(expectError(response, 410, 'gone')).toContain('GET /pets');
      expectDeprecationHeaders(response);
      expectCommonHeaders(response, event);
    }
  });

  it('still answers one millisecond before the sunset', async () => {
    const justBefore = new Date(SUNSET.getTime() - 1);
    const response = await createGetPet({ pets, now: () => justBefore })(getPetEvent(String(pet.id)), context);
    expect(response.statusCode).toBe(200);
    expect(bodyOf(response)).toEqual(pet);
  });
});

describe('authorizer', () => {
  let keys: ApiKeysRepository;
  let key: string;
  let keyId: string;
  const usage = localUsageKey();

  beforeAll(async () => {
    keys = apiKeysRepository({ client: tables.client, tables });
    key = generateApiKey();
    keyId = (await keys.register(key, 'handlers-test', { usage, changedBy: ACTOR })).keyId;
  });

  const API = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5';
  /** The method ARNs of the routes a key with these scopes may call, in the route table's order: a path parameter is `*`. */
  const routesOf = (scopes: readonly Scope[]) =>
    routes
      .filter((route: Route) => isKeyed(route) && scopes.includes(route.scope))
      .map((route) => `${API}/v1/${route.method}${route.path.replace(/\{[^}/]+\}/g, '*')}`);
  const resourcesOf = (result: { policyDocument: { Statement: unknown[] } }) =>
    result.policyDocument.Statement.map((statement) => statement as { Effect: string; Resource: string | string[] });

  it('allows a new key every route of the stage and hands its id, hash, usage key id and plan to the handlers', async () => {
    const result = await createAuthorizer({ keys })(tokenEvent(`Bearer ${key}`), context);
    expect(result.principalId).toBe(keyId);
    expect(result.usageIdentifierKey).toBe(usage.usageKey);
    expect(result.context).toEqual({ keyId, keyHash: hashApiKey(key), usageKeyId: usage.usageKeyId, plan: 'default' });
    expect(resourcesOf(result)).toEqual([{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: routesOf(SCOPES) }]);
    // Each route as its method ARN: a path parameter is any one segment.
    for (const arn of routesOf(SCOPES)) expect(arn).toMatch(new RegExp(`^${literally(API)}/v1/[A-Z]+(/([\\w-]+|\\*))+$`));
  });

  it("hands the handlers the id of a key's own usage key, which its successor after a roll shares: the client", async () => {
    const usage = { usageKeyId: 'ak-handlers-test', usageKey: 'u'.repeat(40) };
    const rolled = generateApiKey();
    const record = await keys.register(rolled, 'rolling', { plan: 'default', usage, changedBy: ACTOR });
    const successor = generateApiKey();
    await keys.roll(record.keyId, successor, { graceMs: 60 * 60 * 1000, changedBy: ACTOR });
    for (const apiKey of [rolled, successor]) {
      const result = await createAuthorizer({ keys })(tokenEvent(`Bearer ${apiKey}`), context);
      expect(result.context).toMatchObject({ keyHash: hashApiKey(apiKey), usageKeyId: usage.usageKeyId });
    }
  });

  /**
   * A key item written in raw DynamoDB types, as an operator writes it in the DynamoDB console, over
   * the plan and usage key of its own the key tool gives every key.
   */
  const putRawKey = (extra: Record<string, AttributeValue>): Promise<string> =>
    putConsoleKey(tables.client, tables.apiKeys, { metered: true, extra });

  it.each([
    ...SCOPES.map((scope): [string, Record<string, AttributeValue>, string[]] => [scope, { scopes: { SS: [scope] } }, routesOf([scope])]),
    [`${READ_ORDERS} and a scope that does not exist`, { scopes: { SS: [READ_ORDERS, fixtureScope('admin')] } }, routesOf([READ_ORDERS])],
  ] satisfies Array<[string, Record<string, AttributeValue>, string[]]>)(
    'allows a console-written item with %s exactly its routes',
    async (_, extra, resources) => {
      const raw = await putRawKey(extra);
      const result = await createAuthorizer({ keys })(tokenEvent(`Bearer ${raw}`, `${API}/v1/POST/pets`), context);
      expect(resourcesOf(result)).toEqual([{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: resources }]);
    },
  );

  it.each([
    ['whose scopes are all unknown', { scopes: { SS: ['none'] } }],
    ['without a scopes attribute (deleted by hand): it grants nothing', {}],
  ] satisfies Array<[string, Record<string, AttributeValue>]>)(
    'denies the stage, rather than refusing the key, for an item %s',
    async (_, extra) => {
      const raw = await putRawKey(extra);
      const result = await createAuthorizer({ keys })(tokenEvent(`Bearer ${raw}`), context);
      expect(result.principalId).toBe(keyIdOf(hashApiKey(raw)));
      expect(resourcesOf(result)).toEqual([{ Effect: 'Deny', Action: 'execute-api:Invoke', Resource: `${API}/v1/*` }]);
    },
  );

  it('reads the scheme case-insensitively', async () => {
    const result = await createAuthorizer({ keys })(tokenEvent(`bearer ${key}`), context);
    expect(result.principalId).toBe(keyId);
  });

  it.each([
    ['an unknown key', () => `Bearer ${generateApiKey()}`],
    ['the key in another case', () => `Bearer ${key.toUpperCase()}`],
    ['a Basic credential', () => 'Basic x'],
    ['the key without a scheme', () => key],
    ['an empty token', () => ''],
  ])('refuses %s with exactly "Unauthorized"', async (_, token) => {
    await expect(createAuthorizer({ keys })(tokenEvent(token()), context)).rejects.toThrowError(/^Unauthorized$/);
  });

  it('refuses a revoked key with exactly "Unauthorized"', async () => {
    const revoked = generateApiKey();
    const record = await keys.register(revoked, 'to-revoke', { usage: localUsageKey(), changedBy: ACTOR });
    await expect(createAuthorizer({ keys })(tokenEvent(`Bearer ${revoked}`), context)).resolves.toMatchObject({
      principalId: record.keyId,
    });
    await keys.revoke(record.keyId, ACTOR);
    await expect(createAuthorizer({ keys })(tokenEvent(`Bearer ${revoked}`), context)).rejects.toThrowError(/^Unauthorized$/);
  });

  describe('refusals, as on-call reads them in the log', () => {
    /** The authorizer's log lines of one refused call. */
    const refusalLogged = async (token: string) => {
      const info = vi.spyOn(logger, 'info');
      try {
        await expect(createAuthorizer({ keys })(tokenEvent(token), context)).rejects.toThrowError(/^Unauthorized$/);
        return info.mock.calls.filter(([message]) => message === 'authorizer');
      } finally {
        info.mockRestore();
      }
    };

    it.each([
      ['revoked', { revokedAt: { S: '2020-01-01T00:00:00Z' } }],
      ['expired', { expiresAt: { S: '2020-01-01T00:00:00Z' } }],
      ['expired', { expiresAt: { S: '2999-01-31 12:00' } }],
    ] satisfies Array<[string, Record<string, AttributeValue>]>)(
      'logs a %s key with its id and why, never the key or its hash',
      async (reason, extra) => {
        const raw = await putRawKey(extra);
        const logged = await refusalLogged(`Bearer ${raw}`);
        expect(logged).toEqual([['authorizer', { decision: 'refuse', reason, keyId: keyIdOf(hashApiKey(raw)) }]]);
        expect(JSON.stringify(logged)).not.toContain(hashApiKey(raw));
      },
    );

    it('writes no line for an allowed key: the access log names the key on every request', async () => {
      const info = vi.spyOn(logger, 'info');
      try {
        const allowed = await putRawKey({ scopes: { SS: ['pets:read'] } });
        await createAuthorizer({ keys })(tokenEvent(`Bearer ${allowed}`), context);
        expect(info.mock.calls.filter(([message]) => message === 'authorizer')).toEqual([]);
      } finally {
        info.mockRestore();
      }
    });

    it('logs an unknown key as unknown, with no id', async () => {
      const unknown = generateApiKey();
      const logged = await refusalLogged(`Bearer ${unknown}`);
      expect(logged).toEqual([['authorizer', { decision: 'refuse', reason: 'unknown' }]]);
      expect(JSON.stringify(logged)).not.toContain(keyIdOf(hashApiKey(unknown)));
    });
  });

  it('names the key by the id of its hash, whatever keyId the item holds or lacks', async () => {
    const edited = await putRawKey({ keyId: { S: 'ffffffffffff' } });
    expect((await createAuthorizer({ keys })(tokenEvent(`Bearer ${edited}`), context)).principalId).toBe(keyIdOf(hashApiKey(edited)));
  });

  describe('expiry, as the console writes it', () => {
    // The authorizer judges expiry by its own clock (the local server injects one): here a day ahead of the machine's.
    const at = new Date(Date.now() + 24 * 60 * 60_000);
    const minutes = (count: number) => new Date(at.getTime() + count * 60_000).toISOString();
    const authorize = (raw: string) => createAuthorizer({ keys, now: () => at })(tokenEvent(`Bearer ${raw}`), context);

    it.each([
      ['an expiresAt a minute past', { expiresAt: { S: minutes(-1) } }],
      ['an expiresAt of this very moment', { expiresAt: { S: minutes(0) } }],
      ['an expiresAt that is not a timestamp (fails closed)', { expiresAt: { S: 'next Tuesday' } }],
      ['an expiresAt of the wrong type (fails closed)', { expiresAt: { N: '4102444800' } }],
      ['a revokedAt', { revokedAt: { S: minutes(-1) } }],
      ['a revokedAt and an expiry to come', { revokedAt: { S: minutes(-1) }, expiresAt: { S: minutes(60) } }],
    ] satisfies Array<[string, Record<string, AttributeValue>]>)('refuses a key with %s with exactly "Unauthorized"', async (_, extra) => {
      await expect(authorize(await putRawKey(extra))).rejects.toThrowError(/^Unauthorized$/);
    });

    it('allows a key until its expiresAt, with its scopes', async () => {
      const raw = await putRawKey({ expiresAt: { S: minutes(1) }, scopes: { SS: ['pets:read'] } });
      const result = await authorize(raw);
      expect(result.principalId).toBe(keyIdOf(hashApiKey(raw)));
      expect(resourcesOf(result)).toEqual([{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: routesOf(['pets:read']) }]);
    });
  });

  describe('usage plans', () => {
    const PLANS = {
      default: { rateLimit: 10, burstLimit: 20 },
      partner: { rateLimit: 100, burstLimit: 200, quota: { limit: 5, period: 'WEEK' } },
    };
    const authorize = async (raw: string, dependencies: Parameters<typeof createAuthorizer>[0] = {}) =>
      createAuthorizer({ keys, plans: PLANS, ...dependencies })(tokenEvent(`Bearer ${raw}`), context);
    /** A key as the key tool makes it, on `plan` with a usage key of its own; returns the key and its record. */
    const toolKey = async (plan = 'default') => {
      const raw = generateApiKey();
      return { raw, record: await keys.register(raw, `on ${plan}`, { plan, usage: localUsageKey(), changedBy: ACTOR }) };
    };
    /** Changes a key's item as an operator may in the console: a `SET` or `REMOVE` expression (`#plan` for `plan`), with its values. */
    const editItem = (keyHash: string, expression: string, values?: Record<string, unknown>) =>
      tables.client.send(
        new UpdateCommand({
          TableName: tables.apiKeys,
          Key: { keyHash },
          UpdateExpression: expression,
          ...(expression.includes('#plan') ? { ExpressionAttributeNames: { '#plan': 'plan' } } : {}),
          ...(values ? { ExpressionAttributeValues: values } : {}),
        }),
      );
    /** The authorizer's warnings of one call that must be refused with exactly "Unauthorized". */
    const refusalWarned = async (raw: string) => {
      const warn = vi.spyOn(logger, 'warn');
      try {
        await expect(authorize(raw)).rejects.toThrowError(/^Unauthorized$/);
        return warn.mock.calls.filter(([message]) => message === 'authorizer');
      } finally {
        warn.mockRestore();
      }
    };

    it('meters a key by the usage key of its own, on its plan, with its policy', async () => {
      const { raw, record } = await toolKey('partner');
      const result = await authorize(raw);
      expect(result.usageIdentifierKey).toBe(record.usageKey);
      expect(result.context).toEqual({
        keyId: keyIdOf(hashApiKey(raw)),
        keyHash: hashApiKey(raw),
        plan: 'partner',
        usageKeyId: record.usageKeyId,
        rateLimitPolicy: '"partner";q=100;w=1, "partner-quota";q=5;w=604800',
      });
      // The bearer key is never the usage key, nor any part of what the authorizer hands on.
      expect(JSON.stringify(result)).not.toContain(raw);
    });

    it("refuses a key whose usage key was replaced by another key's, with one warning naming the key and why", async () => {
      const { raw, record } = await toolKey();
      const { record: other } = await toolKey('partner');
      await editItem(record.keyHash, 'SET usageKey = :usageKey, #plan = :plan', { ':usageKey': other.usageKey, ':plan': 'partner' });

      const warned = await refusalWarned(raw);
      expect(warned).toEqual([['authorizer', { decision: 'refuse', reason: 'usage-key-mismatch', keyId: record.keyId }]]);
      for (const secret of [raw, record.keyHash, other.usageKey ?? '', record.usageKey ?? '']) {
        expect(JSON.stringify(warned)).not.toContain(secret);
      }
    });

    it("refuses a key given another key's usage key whole: its value, its id and its binding", async () => {
      const { raw, record } = await toolKey();
      const { record: other } = await toolKey('partner');
      await editItem(record.keyHash, 'SET usageKey = :usageKey, usageKeyId = :usageKeyId, usageKeyBinding = :binding', {
        ':usageKey': other.usageKey,
        ':usageKeyId': other.usageKeyId,
        ':binding': other.usageKeyBinding,
      });
      expect(await refusalWarned(raw)).toEqual([['authorizer', { decision: 'refuse', reason: 'usage-key-mismatch', keyId: record.keyId }]]);
    });

    it.each([
      ['no usage key', 'REMOVE usageKey', undefined, 'no-usage-key'],
      ['an empty usage key', 'SET usageKey = :value', { ':value': '' }, 'no-usage-key'],
      ['a usage key of another type', 'SET usageKey = :value', { ':value': 12345 }, 'no-usage-key'],
      ['no usage key id', 'REMOVE usageKeyId', undefined, 'no-usage-key'],
      ['another usage key id', 'SET usageKeyId = :value', { ':value': 'local-000000000000' }, 'usage-key-mismatch'],
      ['no binding of its usage key', 'REMOVE usageKeyBinding', undefined, 'usage-key-mismatch'],
      ['no plan', 'REMOVE #plan', undefined, 'no-plan'],
      ['a plan of another type', 'SET #plan = :value', { ':value': null }, 'no-plan'],
    ] satisfies Array<[string, string, Record<string, unknown> | undefined, string]>)(
      'refuses a key whose item has %s (changed by hand), with one warning naming the key and why',
      async (_, expression, values, reason) => {
        const { raw, record } = await toolKey();
        await editItem(record.keyHash, expression, values);
        expect(await refusalWarned(raw)).toEqual([['authorizer', { decision: 'refuse', reason, keyId: record.keyId }]]);
      },
    );

    it('names the plan but states no policy for a plan the stage does not have (API Gateway then refuses the key)', async () => {
      const { raw, record } = await toolKey('retired');
      const result = await authorize(raw);
      expect(result.usageIdentifierKey).toBe(record.usageKey);
      expect(result.context).toMatchObject({ plan: 'retired' });
      expect(result.context).not.toHaveProperty('rateLimitPolicy');
    });

    it('reads the plans from its environment, as deployed', async () => {
      vi.stubEnv('USAGE_PLANS', JSON.stringify(PLANS));
      try {
        const { raw } = await toolKey('partner');
        const result = await createAuthorizer({ keys })(tokenEvent(`Bearer ${raw}`), context);
        expect(result.context).toMatchObject({ plan: 'partner', rateLimitPolicy: '"partner";q=100;w=1, "partner-quota";q=5;w=604800' });
      } finally {
        vi.unstubAllEnvs();
      }
    });
  });

  describe('last use', () => {
    const at = new Date();
    const minutesAgo = (count: number) => new Date(at.getTime() - count * 60_000).toISOString();
    /**
     * The authorizer on a clock standing at `at` (until a test moves it), on a client that notes what
     * it sends. It waits for its last-use read and write as long as for any other call: with the
     * deployed quarter of a second, a busy machine's DynamoDB Local can leave them undone (the
     * deadline's own tests are below).
     */
    const watchedAuthorizer = ({ lastUseDeadlineMs = databaseTimeoutMs() } = {}) => {
      const { client, sent } = recordingClient(tables.endpoint);
      const clock = { now: at };
      const authorizer = createAuthorizer({ keys: apiKeysRepository({ client, tables, lastUseDeadlineMs }), now: () => clock.now });
      const updates = () => sent.filter((command) => command.command === 'UpdateItem');
      return { client, clock, authorizer, updates };
    };
    const lastUsedAtOf = async (raw: string) => (await keys.findById(keyIdOf(hashApiKey(raw)), { withLastUse: true }))?.lastUsedAt;
    /** A key last used at `lastUsedAt`, as the last-use table holds it. */
    const usedKey = async (lastUsedAt: string) => {
      const raw = await putRawKey({});
      await tables.client.send(new PutCommand({ TableName: tables.apiKeyLastUse, Item: { keyHash: hashApiKey(raw), lastUsedAt } }));
      return raw;
    };
    const keyItemOf = async (raw: string) =>
      (await tables.client.send(new GetCommand({ TableName: tables.apiKeys, Key: { keyHash: hashApiKey(raw) }, ConsistentRead: true })))
        .Item;

    it("records the first use as an ISO timestamp, in the last-use table: the key's item is left as it was", async () => {
      const raw = await putRawKey({});
      const asPut = await keyItemOf(raw);
      const { authorizer, updates } = watchedAuthorizer();
      await authorizer(tokenEvent(`Bearer ${raw}`), context);
      expect(updates()).toEqual([expect.objectContaining({ tableName: tables.apiKeyLastUse })]);
      expect(await lastUsedAtOf(raw)).toBe(at.toISOString());
      expect(await keyItemOf(raw)).toEqual(asPut);
    });

    it('leaves a key revoked between its read and its last-use write revoked, its item as the revoke left it', async () => {
      const raw = await putRawKey({});
      // A deadline the revoke cannot outlast: the write is made, after it.
      const { client, authorizer, updates } = watchedAuthorizer({ lastUseDeadlineMs: 10_000 });
      let asRevoked: Record<string, unknown> | undefined;
      // The revoke lands after the authorizer read the key and before it writes its last use, as
      // one made in another region at that moment would.
      client.middlewareStack.add(
        (next, { commandName }) =>
          async (args) => {
            if (commandName === 'UpdateItemCommand') {
              await keys.revoke(keyIdOf(hashApiKey(raw)), 'local:test');
              asRevoked = await keyItemOf(raw);
            }
            return next(args);
          },
        { step: 'initialize', name: 'revokeMeanwhile' },
      );
      await authorizer(tokenEvent(`Bearer ${raw}`), context);
      expect(updates()).toHaveLength(1);
      expect(await lastUsedAtOf(raw)).toBe(at.toISOString());
      expect(asRevoked?.revokedAt).toEqual(expect.any(String));
      expect(await keyItemOf(raw)).toEqual(asRevoked);
    });

    it('sends no write for a key last used 10 minutes ago, until an hour has passed since', async () => {
      const raw = await usedKey(minutesAgo(10));
      const { clock, authorizer, updates } = watchedAuthorizer();
      await authorizer(tokenEvent(`Bearer ${raw}`), context);
      clock.now = new Date(at.getTime() + 49 * 60_000);
      await authorizer(tokenEvent(`Bearer ${raw}`), context);
      expect(updates()).toEqual([]);
      expect(await lastUsedAtOf(raw)).toBe(minutesAgo(10));
      clock.now = new Date(at.getTime() + 51 * 60_000);
      await authorizer(tokenEvent(`Bearer ${raw}`), context);
      expect(updates()).toHaveLength(1);
      expect(await lastUsedAtOf(raw)).toBe(clock.now.toISOString());
    });

    it('records it again for a key last used 2 hours ago, once', async () => {
      const raw = await usedKey(minutesAgo(120));
      const { authorizer, updates } = watchedAuthorizer();
      await authorizer(tokenEvent(`Bearer ${raw}`), context);
      expect(await lastUsedAtOf(raw)).toBe(at.toISOString());
      // The next cache miss reads the new value: no second write.
      await authorizer(tokenEvent(`Bearer ${raw}`), context);
      expect(updates()).toHaveLength(1);
    });

    it.each([
      [
        'throttled',
        { name: 'ProvisionedThroughputExceededException', $metadata: { httpStatusCode: 400 } },
        'ProvisionedThroughputExceededException',
      ],
      ['unavailable', { name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } }, 'ServiceUnavailable'],
      ['not granted', { name: 'AccessDeniedException', $metadata: { httpStatusCode: 400 } }, 'AccessDeniedException'],
    ])('still allows the key when the write fails (%s), with one warning naming only its id', async (_, fault, reason) => {
      const raw = await putRawKey({});
      const keyHash = hashApiKey(raw);
      const { client, authorizer, updates } = watchedAuthorizer();
      client.middlewareStack.add(
        (next, { commandName }) =>
          async (args) => {
            if (commandName === 'UpdateItemCommand') {
              throw Object.assign(new Error(`Write refused on ${tables.apiKeyLastUse} for key ${keyHash}`), fault);
            }
            return next(args);
          },
        { step: 'initialize', name: 'failUpdates' },
      );
      const warn = vi.spyOn(logger, 'warn');
      try {
        const result = await authorizer(tokenEvent(`Bearer ${raw}`), context);
        expect(result.principalId).toBe(keyIdOf(keyHash));
        expect(updates()).toHaveLength(1);
        expect(warn.mock.calls).toEqual([['last use not recorded', { keyId: keyIdOf(keyHash), reason }]]);
        const logged = JSON.stringify(warn.mock.calls);
        for (const secret of [raw, keyHash, tables.apiKeyLastUse]) expect(logged).not.toContain(secret);
      } finally {
        warn.mockRestore();
      }
      expect(await lastUsedAtOf(raw)).toBeUndefined();
    });

    it('still allows the key when its last use cannot be read, writing none, with one warning naming only its id', async () => {
      const raw = await putRawKey({});
      const keyHash = hashApiKey(raw);
      const { client, authorizer, updates } = watchedAuthorizer();
      client.middlewareStack.add(
        (next, { commandName }) =>
          async (args) => {
            const { TableName } = args.input as { TableName?: string };
            if (commandName === 'GetItemCommand' && TableName === tables.apiKeyLastUse) {
              throw Object.assign(new Error(`Read refused on ${TableName} for key ${keyHash}`), {
                name: 'ProvisionedThroughputExceededException',
                $metadata: { httpStatusCode: 400 },
              });
            }
            return next(args);
          },
        { step: 'initialize', name: 'failLastUseReads' },
      );
      const warn = vi.spyOn(logger, 'warn');
      try {
        const result = await authorizer(tokenEvent(`Bearer ${raw}`), context);
        expect(result.principalId).toBe(keyIdOf(keyHash));
        expect(updates()).toEqual([]);
        expect(warn.mock.calls).toEqual([
          ['last use not recorded', { keyId: keyIdOf(keyHash), reason: 'ProvisionedThroughputExceededException' }],
        ]);
      } finally {
        warn.mockRestore();
      }
    });
  });

  describe("the last-use write, when the keys table is slow or throttled (through the fault proxy, on the repository's own clients)", () => {
    let proxy: FaultProxy;
    beforeAll(async () => {
      proxy = await startFaultProxy(tables.endpoint);
    });
    afterAll(() => proxy.close());

    /** Authorizes a new key's first call (a write is due), timing it, with UpdateItem faulted. */
    const firstUse = async (fault: Fault) => {
      const raw = await putRawKey({});
      vi.stubEnv('DYNAMODB_ENDPOINT', proxy.endpoint);
      try {
        const authorizer = createAuthorizer({ keys: apiKeysRepository({ tables }) });
        proxy.resetCalls();
        proxy.inject({ operation: 'UpdateItem', fault });
        const started = performance.now();
        const result = await authorizer(tokenEvent(`Bearer ${raw}`), context);
        return { result, ms: performance.now() - started, raw };
      } finally {
        proxy.recover();
        vi.unstubAllEnvs();
      }
    };

    it('makes one attempt at a throttled write, and allows the key', async () => {
      const { result, raw } = await firstUse('throttle');
      expect(result.principalId).toBe(keyIdOf(hashApiKey(raw)));
      expect(proxy.calls({ operation: 'UpdateItem' })).toBe(1);
    });

    it(`gives up on a write that does not answer within ${LAST_USE_DEADLINE_MS} ms, and allows the key`, async () => {
      const { result, ms, raw } = await firstUse('hang');
      expect(result.principalId).toBe(keyIdOf(hashApiKey(raw)));
      // The shared client's own bound would be 2 attempts of 1 s each.
      expect(ms).toBeGreaterThanOrEqual(LAST_USE_DEADLINE_MS - 10);
      expect(ms).toBeLessThan(LAST_USE_DEADLINE_MS + 400);
      expect(proxy.calls({ operation: 'UpdateItem' })).toBe(1);
    });
  });

  it('fails with another error when its database is unreachable, so that the client gets a 503 rather than a 401', async () => {
    const client = createDocumentClient({ endpoint: `http://127.0.0.1:${await freePort()}`, maxAttempts: 2 });
    const unreachable = apiKeysRepository({ client, tables });
    const error = await createAuthorizer({ keys: unreachable })(tokenEvent(`Bearer ${key}`), context).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).not.toBe('Unauthorized');
    expect(error).toMatchObject({ name: 'DatabaseUnavailable' });
  });
});
