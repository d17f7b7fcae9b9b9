/**
 * API key scopes over HTTP: a key reaches exactly the operations its scopes cover, whichever it
 * calls first (the gateway caches one policy per key); without the scope it gets 403, not 401; and
 * scopes narrowed while its policy is cached hold within seconds.
 */
import { UpdateItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../shared/api-keys';
import { SCOPES, type Scope } from '../../shared/scopes';
import { exampleRequest, exampleTarget } from '../../shared/request-examples';
import { isKeyed, routes, type Route } from '../../shared/routes';
import { putConsoleKey } from '../support/console-keys';
import { CHANGE_HOLDS_WITHIN_MS, expectCommonHeaders, expectError, startLocalApi, type LocalApi } from '../support/local-api';
import { localUsageKey } from '../../tools/local-server/usage-plans';
import { fixtureScope } from '../support/fixture-names';
import { READ_PETS, WRITE_PETS } from '../support/vocabulary';
import { databaseClient } from '../support/database';

/** Who this file's changes to keys are made by. */
const ACTOR = 'local:test';

let api: LocalApi;
beforeAll(async () => {
  api = await startLocalApi();
});
afterAll(() => api.close());

const as = (key: string, path: string, init: RequestInit = {}) =>
  api.call(path, { ...init, auth: false, headers: { Authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) } });

const createPet = (key: string) =>
  as(key, '/pets', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
  });

const keyWith = async (scopes: Scope[]): Promise<string> => {
  const key = generateApiKey();
  await api.keys.register(key, `scopes ${scopes.join(',')}`, { usage: localUsageKey(), scopes, changedBy: ACTOR });
  return key;
};

/** A key item in raw DynamoDB types, as an operator edits in the DynamoDB console a key the key tool made. */
const consoleKey = async (extra: Record<string, AttributeValue>): Promise<string> => {
  const client = databaseClient({ endpoint: inject('dynamodbEndpoint') });
  try {
    return await putConsoleKey(client, api.tables.apiKeys, { metered: true, extra });
  } finally {
    client.destroy();
  }
};

const expectInsufficientScope = async (response: Response) => {
  expectCommonHeaders(response);
  expect(response.headers.get('www-authenticate')).toBe('Bearer realm="pet-store", error="insufficient_scope"');
  const { message } = await expectError(response, 403, 'forbidden');
  expect(scopesNamedBy(message)).toEqual(scopeOfEachOperation);
};

/**
 * The scope each operation of the 403's message needs: the message names, scope by scope, the
 * operations that need it ("<operations> need <scope>, …"), a route
 * not implemented by its method and path.
 */
const scopesNamedBy = (message: string): Record<string, string> => {
  const list = /^This API key's scopes do not allow this operation \((.+)\)\.$/.exec(message)?.[1];
  expect(list, message).toBeDefined();
  return Object.fromEntries(
    (list ?? '').split(', ').flatMap((clause, index) => {
      const [, names = '', scope = ''] = (index === 0 ? /^(.+) need (\S+)$/ : /^(.+) (\S+)$/).exec(clause) ?? [];
      return names.split(' and ').map((name) => [name, scope]);
    }),
  );
};
const scopeOfEachOperation = Object.fromEntries(
  (routes as readonly Route[])
    .filter(isKeyed)
    .map((route) => [route.notImplemented ? `${route.method} ${route.path}` : route.operationId, route.scope]),
);

describe('scopes', () => {
  it('lets a pets:read key list and get pets, and refuses it a create with 403 insufficient_scope, writing nothing', async () => {
    const reader = await keyWith(['pets:read']);
    const before = (await (await api.call('/pets?limit=100')).json()) as unknown[];

    expect((await as(reader, '/pets')).status).toBe(200);
    await expectInsufficientScope(await createPet(reader));
    await expectInsufficientScope(await as(reader, '/store/orders'));

    expect((await (await api.call('/pets?limit=100')).json()) as unknown[]).toHaveLength(before.length);
  });

  it('refuses a pets:read key a create even when the create is its first call, and still lets it read after', async () => {
    const reader = await keyWith(['pets:read']);
    await expectInsufficientScope(await createPet(reader));
    expect((await as(reader, '/pets')).status).toBe(200);
    expect((await as(reader, '/pets/999999')).status).toBe(404);
  });

  it('lets a pets:write key create but not list', async () => {
    const writer = await keyWith(['pets:write']);
    expect((await createPet(writer)).status).toBe(201);
    await expectInsufficientScope(await as(writer, '/pets'));
  });

  it('lets a key with every scope do everything', async () => {
    const full = await keyWith([...SCOPES]);
    const created = await createPet(full);
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: number };
    expect((await as(full, `/pets/${id}`)).status).toBe(200);
    expect((await as(full, '/pets')).status).toBe(200);
    await expectError(await as(full, '/store/orders'), 501, 'not_implemented');
  });

  it('refuses a key stored without a scopes attribute (deleted by hand) every route behind a key with 403: it grants nothing', async () => {
    const unscoped = await consoleKey({});
    const before = (await (await api.call('/pets?limit=100')).json()) as unknown[];
    for (const route of (routes as readonly Route[]).filter(isKeyed)) {
      const request = exampleRequest(route);
      const sent = await as(unscoped, exampleTarget(request), { method: request.method, headers: request.headers, body: request.body });
      await expectInsufficientScope(sent);
    }
    expect((await (await api.call('/pets?limit=100')).json()) as unknown[]).toHaveLength(before.length);
  });

  it('follows a String Set written in the console, ignoring scopes that do not exist', async () => {
    const key = await consoleKey({ scopes: { SS: [READ_PETS, fixtureScope('delete')] } });
    expect((await as(key, '/pets')).status).toBe(200);
    await expectInsufficientScope(await createPet(key));
  });

  it('answers a valid key whose scopes cover nothing with 403, not 401', async () => {
    const key = await consoleKey({ scopes: { SS: ['none'] } });
    await expectInsufficientScope(await as(key, '/pets'));
    await expectInsufficientScope(await createPet(key));
  });

  it("answers 403 once a key's scopes are narrowed in the console, its allow cached (TTL 300 s)", async () => {
    const key = await consoleKey({ scopes: { SS: [READ_PETS, WRITE_PETS] } });
    expect((await createPet(key)).status).toBe(201);
    const client = databaseClient({ endpoint: inject('dynamodbEndpoint') });
    try {
      // As an operator removes a value from the set in the DynamoDB console.
      await client.send(
        new UpdateItemCommand({
          TableName: api.tables.apiKeys,
          Key: { keyHash: { S: hashApiKey(key) } },
          UpdateExpression: 'DELETE scopes :removed',
          ExpressionAttributeValues: { ':removed': { SS: ['pets:write'] } },
        }),
      );
    } finally {
      client.destroy();
    }
    const narrowedAt = Date.now();

    let refused: Response;
    for (;;) {
      refused = await createPet(key);
      if (refused.status !== 201 || Date.now() > narrowedAt + CHANGE_HOLDS_WITHIN_MS) break;
      await refused.arrayBuffer();
      await sleep(50);
    }
    await expectInsufficientScope(refused);
    expect((await as(key, '/pets')).status).toBe(200);
  });
});
