/**
 * The client library (client/) against the local server: every operation; all() over 250 pets;
 * an idempotent create whose first answer a proxy loses; 429s of a small plan retried after
 * Retry-After; quota_exceeded at once; 503s of a database fault retried; a timeout; an abort
 * between retries.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  PetStore,
  PetStoreError,
  PetStoreNetworkError,
  PetStoreTimeoutError,
  type DeprecationNotice,
  type PetStoreOptions,
  type ResponseNotice,
  type RetryNotice,
} from '../../client/src/index';
import { statusShardCount } from '../../shared/config';
import type { Plans } from '../../shared/plans';
import { startApiProxy } from '../support/api-proxy';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { inParallel, registerKeyOnPlan, ROOMY_PLANS, startLocalApi, type LocalApi } from '../support/local-api';
import { databaseClient } from '../support/database';

/** A client of `api` (or of `url`) that records its answers, retries and deprecation reports. */
const clientOf = (api: LocalApi, options: Partial<PetStoreOptions> = {}) => {
  const answers: ResponseNotice[] = [];
  const retries: RetryNotice[] = [];
  const deprecations: DeprecationNotice[] = [];
  const store = new PetStore({
    baseUrl: api.url,
    apiKey: api.key,
    onResponse: (notice) => answers.push(notice),
    onRetry: (notice) => retries.push(notice),
    onDeprecation: (notice) => deprecations.push(notice),
    ...options,
  });
  return { store, answers, retries, deprecations };
};

/** The pets stored with this name, read from the table itself. */
const storedNamed = async (api: LocalApi, name: string) => {
  const database = databaseClient({ endpoint: inject('dynamodbEndpoint') });
  try {
    const { Items = [] } = await database.send(
      new ScanCommand({
        TableName: api.tables.pets,
        ConsistentRead: true,
        FilterExpression: '#name = :name',
        ExpressionAttributeNames: { '#name': 'name' },
        ExpressionAttributeValues: { ':name': name },
      }),
    );
    return Items;
  } finally {
    database.destroy();
  }
};

describe('the client against the local server', () => {
  let api: LocalApi;
  beforeAll(async () => {
    api = await startLocalApi();
  });
  afterAll(() => api.close());

  it('calls every operation: create, get (its deprecation reported once), list and next; errors are PetStoreErrors', async () => {
    const { store, answers, deprecations } = clientOf(api);
    const rex = await store.pets.create({ name: 'Client Rex', categoryId: 3, status: 'pending' });
    expect(rex).toEqual({ id: expect.any(Number), name: 'Client Rex', categoryId: 3, status: 'pending' });
    expect(answers.at(-1)?.response.headers.get('location')).toBe(`${api.url}/pets/${rex.id}`);

    expect(await store.pets.get(rex.id)).toEqual(rex);
    await store.pets.get(rex.id);
    expect(deprecations).toEqual([
      {
        operation: 'getPet',
        deprecation: new Date('2026-01-01T00:00:00Z'),
        sunset: new Date('2030-12-05T00:00:00Z'),
        link: `${api.url}/pets`,
      },
    ]);

    await store.pets.create({ name: 'Client Max', categoryId: 3, status: 'pending' });
    const first = await store.pets.list({ status: 'pending', limit: 1 });
    expect(first.pets).toEqual([rex]);
    expect(first.hasNext).toBe(true);
    const second = await first.next();
    expect(second?.pets.map(({ name }) => name)).toEqual(['Client Max']);
    expect(second?.hasNext).toBe(false);

    const missing = await store.pets.get(987_654_321).catch((caught: unknown) => caught);
    expect(missing).toBeInstanceOf(PetStoreError);
    expect(missing).toMatchObject({ status: 404, code: 'not_found', requestId: expect.stringMatching(/^[0-9a-f-]{36}$/) });

    const orders = await store.raw({ operation: 'listStoreOrders', path: '/store/orders' });
    expect(orders.error).toMatchObject({ status: 501, code: 'not_implemented' });

    const refused = await new PetStore({ baseUrl: api.url, apiKey: 'petstore_not-a-key-of-this-server' }).pets
      .list()
      .catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ status: 401, code: 'unauthorized' });
    expect(JSON.stringify(refused)).not.toContain('not-a-key');
  });

  it('all() sees each of 250 pets of a status exactly once, page after page', async () => {
    const { store, answers } = clientOf(api);
    const created = await inParallel(250, 8, (index) => store.pets.create({ name: `sold ${index}`, categoryId: 1, status: 'sold' }));
    answers.length = 0;
    const seen: number[] = [];
    for await (const pet of store.pets.all({ status: 'sold', pageSize: 40 })) seen.push(pet.id);
    expect(seen).toHaveLength(250);
    expect(new Set(seen)).toEqual(new Set(created.map(({ id }) => id)));
    expect(answers.map(({ response }) => response.status)).toEqual(Array(7).fill(200));
  });

  it('an idempotent create whose answer a proxy loses: the retry gets the replay, one pet is stored', async () => {
    let lost = 0;
    const proxy = await startApiProxy(api.url, (_, request) => {
      if (request.method === 'POST' && lost === 0) {
        lost += 1;
        throw new Error('the answer is lost: the proxy drops the connection');
      }
    });
    try {
      const { store, answers, retries } = clientOf(api, { baseUrl: proxy.url, random: () => 0 });
      const name = `Lost answer ${randomUUID()}`;
      const pet = await store.pets.create({ name, categoryId: 1 });
      expect(lost).toBe(1);
      expect(retries.map(({ error }) => [error.name, (error as PetStoreNetworkError).mayHaveReachedServer])).toEqual([
        ['PetStoreNetworkError', true],
      ]);
      expect(answers.map(({ response }) => [response.status, response.headers.get('idempotent-replayed')])).toEqual([[201, 'true']]);
      expect(await storedNamed(api, name)).toEqual([expect.objectContaining({ id: pet.id, name })]);
    } finally {
      await proxy.close();
    }
  });
});

describe('the client over a small plan', () => {
  // A burst of 2 refilled at 2 a second: a refused request's Retry-After of 1 s refills it.
  const PLANS: Plans = {
    ...ROOMY_PLANS,
    small: { rateLimit: 2, burstLimit: 2 },
    metered: { rateLimit: 1_000, burstLimit: 1_000, quota: { limit: 2, period: 'DAY' } },
  };
  let api: LocalApi;
  beforeAll(async () => {
    api = await startLocalApi({ plans: PLANS });
  });
  afterAll(() => api.close());

  it('retries 429 too_many_requests after Retry-After, and every call succeeds', async () => {
    const { store, retries, answers } = clientOf(api, { apiKey: await registerKeyOnPlan(api, 'small') });
    for (let call = 0; call < 4; call += 1) await store.pets.list();
    expect(answers.map(({ response }) => response.status)).toContain(429);
    expect(retries.length).toBeGreaterThan(0);
    for (const { error, delayMs } of retries) {
      expect(error).toMatchObject({ status: 429, code: 'too_many_requests', retryAfter: 1 });
      expect(delayMs).toBeGreaterThanOrEqual(1_000);
    }
  });

  it('returns 429 quota_exceeded at once, unretried, with its Retry-After hint', async () => {
    const { store, retries, answers } = clientOf(api, { apiKey: await registerKeyOnPlan(api, 'metered') });
    await store.pets.list();
    await store.pets.list();
    const error = await store.pets.list().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PetStoreError);
    expect(error).toMatchObject({ status: 429, code: 'quota_exceeded', retryAfter: 3_600, message: expect.stringMatching(/quota/) });
    expect(retries).toEqual([]);
    expect(answers).toHaveLength(3);
  });

  it('stops at an abort between retries: no request after it', async () => {
    const controller = new AbortController();
    const { store, answers } = clientOf(api, {
      apiKey: await registerKeyOnPlan(api, 'small'),
      onRetry: () => controller.abort(new Error('the user left')),
    });
    await store.pets.list();
    await store.pets.list();
    await expect(store.pets.list({ signal: controller.signal })).rejects.toThrow('the user left');
    expect(answers.map(({ response }) => response.status)).toEqual([200, 200, 429]);
  });
});

describe('the client over a failing database', () => {
  let proxy: FaultProxy;
  let api: LocalApi;
  beforeAll(async () => {
    proxy = await startFaultProxy(inject('dynamodbEndpoint'));
    api = await startLocalApi({ endpoint: proxy.endpoint });
  });
  afterAll(async () => {
    await api.close();
    await proxy.close();
  });

  it('retries the 503s of a throttled database, then succeeds: a listing, and a create stored once', async () => {
    const { store, retries } = clientOf(api);
    // The server's SDK tries each call twice: 2 throttles of each shard's query make one 503.
    proxy.inject({ operation: 'Query', table: api.tables.pets, fault: 'throttle', times: 2 * statusShardCount() });
    await expect(store.pets.list({ status: 'available' })).resolves.toMatchObject({ pets: [] });

    // A keyed create: its record is stored, then both tries of its pet's put are throttled. The
    // client's retry finds the record and stores the pet under the recorded id.
    proxy.inject({ operation: 'PutItem', table: api.tables.pets, fault: 'throttle', times: 2 });
    const name = `Throttled ${randomUUID()}`;
    const pet = await store.pets.create({ name, categoryId: 1 });
    expect(retries.map(({ error }) => [(error as PetStoreError).status, (error as PetStoreError).code])).toEqual([
      [503, 'service_unavailable'],
      [503, 'service_unavailable'],
    ]);
    expect(await storedNamed(api, name)).toEqual([expect.objectContaining({ id: pet.id })]);
    proxy.recover();
  });

  it('gives up on an answer after timeoutMs (PetStoreTimeoutError); with retries, the next attempt gets the pet', async () => {
    const { store: writer } = clientOf(api);
    const pet = await writer.pets.create({ name: 'Slow', categoryId: 1 });
    const getItems = { operation: 'GetItem', table: api.tables.pets } as const;

    proxy.inject({ ...getItems, fault: 'hang', times: 1 });
    const once = clientOf(api, { timeoutMs: 200, maxRetries: 0 });
    const error = await once.store.pets.get(pet.id).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PetStoreTimeoutError);
    expect(error).toMatchObject({ mayHaveReachedServer: true, timeoutMs: 200, operation: 'getPet' });
    expect(proxy.calls(getItems)).toBeGreaterThanOrEqual(1);
    expect(once.answers).toEqual([]);

    proxy.inject({ ...getItems, fault: 'hang', times: 1 });
    // Long enough for a busy machine's answer: only the hung attempt must time out (another may too).
    const retried = clientOf(api, { timeoutMs: 2_000, random: () => 0 });
    expect(await retried.store.pets.get(pet.id)).toEqual(pet);
    const retriedAfter = retried.retries.map(({ error: failure }) => failure.name);
    expect(retriedAfter.length).toBeGreaterThanOrEqual(1);
    expect(new Set(retriedAfter)).toEqual(new Set(['PetStoreTimeoutError']));
    proxy.recover();
  });
});
