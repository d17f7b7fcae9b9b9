/**
 * The database fails, and the client sees it only as it should: over HTTP through the local
 * server, with a fault-injecting proxy between the handlers and DynamoDB Local. Persistent faults
 * are a 503 in the Error shape with Retry-After within a few seconds; transient ones are retried
 * by the SDK and invisible; and the pets stored are exactly the ones acknowledged.
 */
import { paginateScan, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { RETRY_BACKOFF_MAX_MS } from '../../shared/dynamodb';
import { HANDLER_TIMEOUT_MS } from '../../shared/gateway-events';
import { newPetId } from '../../shared/ids';
import { exampleTarget } from '../../shared/request-examples';
import { routes, type Route } from '../../shared/routes';
import type { TableNames } from '../../shared/tables';
import { databaseTimeoutMs, functionsClient } from '../support/database';
import { faultRows } from '../support/fault-rows';
import { apiResourceMaker } from '../support/resource-makers';
import { startFaultProxy, type Fault, type FaultProxy, type Selector } from '../support/fault-proxy';
import { expectCommonHeaders, expectError, inParallel, postPet, startLocalApi, type LocalApi } from '../support/local-api';

/** Attempts per DynamoDB call (shared/dynamodb.ts): the first and one short retry. */
const ATTEMPTS = 2;
/**
 * The functions' DynamoDB timeout in this run (DYNAMODB_TIMEOUT_MS; 1 s deployed): a hang is
 * waited for this long, each attempt.
 */
const TIMEOUT_MS = databaseTimeoutMs();
/** A generous bound on a fault's answer: its attempts of at most TIMEOUT_MS each (a hang), plus the SDK's short backoff and 4 s. */
const FAULT_ANSWER_BOUND_MS = ATTEMPTS * TIMEOUT_MS + 4_000;
/**
 * A row meets a hang twice over (a persistent one, and a transient one beside it), and some thirty
 * requests besides, each of which a busy machine can hold for seconds.
 */
const ROW_TIMEOUT_MS = 2 * FAULT_ANSWER_BOUND_MS + 180_000;
/**
 * A generous bound on the median wait, seen by the database, from a throttled call's first attempt
 * to its retry: at most 0.1 s of backoff, and the SDK's handling of the answer. The SDK's default
 * backoff after throttling (up to 1 s, then 2 s) took seconds. Measured between the two calls, not
 * over HTTP: a busy machine holds every request for as long as it likes, throttled or not.
 */
const THROTTLED_RETRY_BOUND_MS = 1_000;
/** The errors DynamoDB throttles with (HTTP 400). */
const THROTTLE_ERRORS = ['ProvisionedThroughputExceededException', 'ThrottlingException'] as const;

const database = functionsClient(inject('dynamodbEndpoint'));

/** Every item in a table, as the pets it stores. */
const storedPets = async (table: string) => {
  const items: Array<Record<string, unknown>> = [];
  for await (const page of paginateScan({ client: database }, { TableName: table })) items.push(...(page.Items ?? []));
  return items.map(({ id, name, categoryId, status }) => ({ id, name, categoryId, status }));
};

const byId = <T extends { id: unknown }>(pets: T[]) => [...pets].sort((a, b) => Number(a.id) - Number(b.id));

interface Faulted {
  readonly proxy: FaultProxy;
  readonly api: LocalApi;
}

const closers: Array<() => Promise<void>> = [];
/** A local server whose DynamoDB calls all go through a fresh proxy (its own SDK client and retry quota). */
const startFaulted = async (): Promise<Faulted> => {
  const proxy = await startFaultProxy(inject('dynamodbEndpoint'));
  // No authorizer cache and no reused health answer: every request reads its tables, so their faults can be seen.
  const api = await startLocalApi({ endpoint: proxy.endpoint, authCacheTtlSeconds: 0, healthReuseSeconds: 0 });
  closers.push(api.close, proxy.close);
  return { proxy, api };
};
afterAll(async () => {
  for (const close of closers) await close();
});

/** Measured answer times, printed with FAULT_TIMES=1 (the fault matrix of docs/reliability.md). */
const measured: Array<{ operation: string; fault: string; status: number; ms: number }> = [];
afterAll(() => {
  if (process.env.FAULT_TIMES) console.table(measured.map((row) => ({ ...row, ms: Math.round(row.ms) })));
});

interface OperationUnderFault {
  readonly name: string;
  readonly operation: string;
  readonly table: keyof TableNames;
  readonly success: number;
  readonly callsPerRequest: number;
  /** Sends the row's next request: made first (a fresh pet where it names one), so that only the request meets the fault. */
  prepare(api: LocalApi): Promise<() => Promise<Response>>;
}

const newPet = (api: LocalApi) => async () =>
  ((await (await postPet(api, { name: 'Resident', categoryId: 1 })).json()) as { id: number }).id;

/** Each row of the route table's (test/support/fault-rows.ts), then the authorizer's read of the key. */
const operations: OperationUnderFault[] = [
  ...faultRows(routes).map((row) => ({
    ...row,
    prepare: async (api: LocalApi) => {
      const request = await row.request(apiResourceMaker(api.call));
      return () => api.call(exampleTarget(request), { method: request.method, headers: request.headers, body: request.body });
    },
  })),
  {
    name: 'authorizer',
    operation: 'GetItem',
    table: 'apiKeys',
    success: 200,
    callsPerRequest: 1,
    prepare: async (api) => () => api.call('/pets'),
  },
];

/** Each call a fault outlives is tried ATTEMPTS times: a request of several calls (a listing's shards) waits for all of them. */
const expectAttempts = (calls: number, operation: OperationUnderFault, label: string) =>
  expect(calls, label).toBe(operation.callsPerRequest * ATTEMPTS);

const PERSISTENT: Fault[] = ['throttle', 'internal-error', 'hang', 'drop'];
const TRANSIENT: Array<{ fault: Fault; times: number }> = [
  { fault: 'throttle', times: 1 },
  { fault: 'internal-error', times: 1 },
  { fault: 'drop', times: 1 },
  { fault: 'hang', times: 1 },
  { fault: 'lose-answer', times: 1 },
];

const timed = async (send: () => Promise<Response>) => {
  const start = performance.now();
  const response = await send();
  return { response, ms: performance.now() - start };
};

/** 503 service_unavailable in the Error shape, with Retry-After, naming no table and no code. */
const expectUnavailable = async (response: Response, api: LocalApi, label: string) => {
  const text = await response.clone().text();
  expect(response.status, label).toBe(503);
  expect(response.headers.get('retry-after'), label).toBe('1');
  expectCommonHeaders(response);
  await expectError(response, 503, 'service_unavailable');
  for (const secret of [api.tables.pets, api.tables.apiKeys, api.key, 'DynamoDB', 'Exception']) expect(text, label).not.toContain(secret);
  expect(text, label).not.toMatch(/at .*\.[jt]s:\d+/);
};

describe('the fault matrix', () => {
  it('faults every operation that has a function (docs/reliability.md says so), each call its grants allow', () => {
    const faulted = operations.map(({ name }) => name.replace(/\?.*/, ''));
    for (const route of routes) if ('handler' in route) expect(faulted, route.operationId).toContain(route.operationId);
    // An index is faulted under the query that uses it.
    const indexed = routes.flatMap((route: Route) =>
      (route.tableAccess ?? []).filter((grant) => grant.index !== undefined).map(() => route),
    );
    for (const route of indexed) expect(faulted.filter((name) => name === route.operationId).length, route.operationId).toBeGreaterThan(1);
  });

  const persistentFaults = async (operation: OperationUnderFault) => {
    // A hang is waited out by the functions' own attempts, not cut short by the function's timeout.
    expect(ATTEMPTS * TIMEOUT_MS + RETRY_BACKOFF_MAX_MS).toBeLessThan(HANDLER_TIMEOUT_MS);
    const { proxy, api } = await startFaulted();
    await newPet(api)();
    const faulted: Selector = { operation: operation.operation, table: api.tables[operation.table] };
    for (const fault of PERSISTENT) {
      const label = `${operation.name} under ${fault}`;
      const send = await operation.prepare(api);
      proxy.resetCalls();
      proxy.inject({ ...faulted, fault });
      const { response, ms } = await timed(send);
      measured.push({ operation: operation.name, fault, status: response.status, ms });
      await expectUnavailable(response, api, label);
      expect(ms, label).toBeLessThan(FAULT_ANSWER_BOUND_MS);
      expectAttempts(proxy.calls(faulted), operation, label);

      proxy.recover();
      const again = await operation.prepare(api);
      expect((await again()).status, `${label}, recovered`).toBe(operation.success);
    }
    if (operation.name === 'createPet') {
      // The refused creates stored nothing: the resident and one Rex per recovery.
      const names = (await storedPets(api.tables.pets)).map((pet) => pet.name).sort();
      expect(names).toEqual(['Resident', ...PERSISTENT.map(() => 'Rex')].sort());
    }
  };

  const transientFaults = async (operation: OperationUnderFault) => {
    const { proxy, api } = await startFaulted();
    await newPet(api)();
    const faulted: Selector = { operation: operation.operation, table: api.tables[operation.table] };
    for (const { fault, times } of TRANSIENT) {
      const label = `${operation.name} with ${times} ${fault}`;
      const send = await operation.prepare(api);
      proxy.resetCalls();
      proxy.inject({ ...faulted, fault, times });
      const { response, ms } = await timed(send);
      measured.push({ operation: operation.name, fault: `${fault} x${times}, then pass`, status: response.status, ms });
      expect(response.status, label).toBe(operation.success);
      expect(proxy.calls(faulted), `${label}: retried`).toBe(operation.callsPerRequest + times);
      proxy.recover();
    }
    if (operation.name === 'createPet') {
      // One pet per create, lost answers included: the SDK's retry recognised its own write.
      const names = (await storedPets(api.tables.pets)).map((pet) => pet.name).sort();
      expect(names).toEqual(['Resident', ...TRANSIENT.map(() => 'Rex')].sort());
    }
  };

  // Every operation at once: each waits out its hangs (TIMEOUT_MS each attempt) beside the others.
  // A transient fault spends the first attempt, so the retry must be answered within TIMEOUT_MS,
  // which is long enough for DynamoDB Local beside every operation's servers and proxies.
  it.concurrent.each(operations)(
    '$name: 503 under each persistent fault then recovers; transient faults are invisible',
    { timeout: ROW_TIMEOUT_MS },
    async (operation) => {
      await Promise.all([persistentFaults(operation), transientFaults(operation)]);
    },
  );

  it.concurrent(`answers 503 after exactly ${ATTEMPTS} attempts when a fault outlives the retry budget, in bounded time`, async () => {
    const { proxy, api } = await startFaulted();
    const faulted: Selector = { operation: 'Scan', table: api.tables.pets };
    proxy.inject({ ...faulted, fault: 'throttle', times: ATTEMPTS + 1, throttleError: 'ThrottlingException' });

    const { response, ms } = await timed(() => api.call('/pets'));
    await expectUnavailable(response, api, 'throttled beyond the budget');
    expect(ms).toBeLessThan(FAULT_ANSWER_BOUND_MS);
    expect(proxy.calls(faulted)).toBe(ATTEMPTS);

    // The next request meets the fault's last throttle, then DynamoDB: it succeeds on its retry.
    expect((await api.call('/pets')).status).toBe(200);
    expect(proxy.calls(faulted)).toBe(ATTEMPTS + 2);
  });
});

/** The middle of some measurements. */
const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('a throttled database (a hot partition)', () => {
  /** Requests per operation and throttling error: the median is reported. */
  const REPEATS = 5;

  it.concurrent.each(operations)(
    '$name: 503 with Retry-After after one short retry, for each error DynamoDB throttles with',
    { timeout: ROW_TIMEOUT_MS },
    async (operation) => {
      const { proxy, api } = await startFaulted();
      await newPet(api)();
      const faulted: Selector = { operation: operation.operation, table: api.tables[operation.table] };
      for (const throttleError of THROTTLE_ERRORS) {
        const label = `${operation.name} under ${throttleError}`;
        const times: number[] = [];
        const retryWaits: number[] = [];
        for (let repeat = 0; repeat < REPEATS; repeat += 1) {
          const send = await operation.prepare(api);
          proxy.resetCalls();
          proxy.inject({ ...faulted, fault: 'throttle', throttleError });
          const { response, ms } = await timed(send);
          proxy.recover();
          await expectUnavailable(response, api, label);
          expectAttempts(proxy.calls(faulted), operation, `${label}: the first attempt and one retry`);
          times.push(ms);
          // From the first attempt (of the first shard, for a listing of several) to the last retry.
          const arrivals = proxy.arrivals(faulted);
          retryWaits.push(Math.max(...arrivals) - Math.min(...arrivals));
        }
        measured.push({ operation: operation.name, fault: `${throttleError} (median of ${REPEATS})`, status: 503, ms: median(times) });
        expect(median(retryWaits), label).toBeLessThan(THROTTLED_RETRY_BOUND_MS);
      }
    },
  );
});

/** A tiny seeded generator (mulberry32), so the fault schedule is the same every run. */
const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
};

/** What happens to each attempt of one create's PutItem, and what the client and the table see. */
const SCHEDULES: ReadonlyArray<{ name: string; faults: Fault[]; answer: 201 | 503; stored: boolean; weight: number }> = [
  { name: 'clean', faults: [], answer: 201, stored: true, weight: 5 },
  { name: 'throttled once', faults: ['throttle'], answer: 201, stored: true, weight: 1 },
  { name: 'dropped once', faults: ['drop'], answer: 201, stored: true, weight: 1 },
  { name: 'server error once', faults: ['internal-error'], answer: 201, stored: true, weight: 1 },
  // The write is stored, its answer lost; the SDK's retry finds the item its own writeId stored.
  { name: 'answer lost once', faults: ['lose-answer'], answer: 201, stored: true, weight: 1 },
  { name: 'throttled out', faults: ['throttle', 'throttle'], answer: 503, stored: false, weight: 1 },
  { name: 'dropped out', faults: ['drop', 'drop'], answer: 503, stored: false, weight: 1 },
  { name: 'server errors out', faults: ['internal-error', 'internal-error'], answer: 503, stored: false, weight: 1 },
  // The documented ambiguous case: the write happened, but no answer for it came back.
  { name: 'every answer lost', faults: ['lose-answer', 'lose-answer'], answer: 503, stored: true, weight: 1 },
  { name: 'answer lost, then throttled', faults: ['lose-answer', 'throttle'], answer: 503, stored: true, weight: 1 },
];

/** Creates in the data test: every schedule once, then a seeded mix. */
const CREATES = 30;
/**
 * The SDK's standard retry draws on a quota of 500 tokens per client: a retry after throttling
 * costs 5, any other 14; a retry that succeeds gives its cost back. Creates that fail out keep
 * what they spent, and up to `CONCURRENCY` creates may hold a failed retry's tokens at once.
 */
const SDK_RETRY_QUOTA = 500;
const retryCost = (fault: Fault) => (fault === 'throttle' ? 5 : 14);
const CONCURRENCY = 8;
const retrySpend = (schedules: ReadonlyArray<{ faults: Fault[]; answer: number }>) =>
  schedules
    .filter(({ answer }) => answer === 503)
    .reduce((sum, { faults }) => sum + faults.slice(0, ATTEMPTS - 1).reduce((cost, fault) => cost + retryCost(fault), 0), 0) +
  CONCURRENCY * (ATTEMPTS - 1) * retryCost('drop');

describe('data under faults', () => {
  it.concurrent('stores exactly the acknowledged creates (and the one ambiguous case), once each', async () => {
    const { proxy, api } = await startFaulted();
    const random = seeded(6);
    const totalWeight = SCHEDULES.reduce((sum, schedule) => sum + schedule.weight, 0);
    const draw = () => {
      let pick = random() * totalWeight;
      return SCHEDULES.find((schedule) => (pick -= schedule.weight) < 0) ?? SCHEDULES[0]!;
    };
    // Every schedule at least once, then a seeded mix.
    const plan = [...SCHEDULES, ...Array.from({ length: CREATES - SCHEDULES.length }, draw)].map((schedule, index) => ({
      schedule,
      body: { name: `pet-${index}`, categoryId: index + 1, status: (['available', 'pending', 'sold'] as const)[index % 3] },
    }));
    // The plan stays inside the SDK's retry quota, or a late retry would be refused and the
    // answers would depend on the order the creates happen to run in.
    expect(retrySpend(plan.map(({ schedule }) => schedule))).toBeLessThan(SDK_RETRY_QUOTA);
    const scheduleOf = new Map(plan.map(({ schedule, body }) => [body.name, schedule]));
    const attempts = new Map<string, number>();
    proxy.plan((call) => {
      if (call.operation !== 'PutItem' || call.table !== api.tables.pets) return undefined;
      const name = (call.body.Item as { name?: { S?: string } } | undefined)?.name?.S ?? '';
      const attempt = attempts.get(name) ?? 0;
      attempts.set(name, attempt + 1);
      return scheduleOf.get(name)?.faults[attempt] ?? 'pass';
    });

    const answers = await inParallel(plan.length, CONCURRENCY, async (index) => {
      const response = await postPet(api, plan[index]!.body);
      return {
        status: response.status,
        pet: response.status === 201 ? ((await response.json()) as { id: number; name: string }) : undefined,
      };
    });
    proxy.recover();

    // Each create got the answer its schedule implies, after exactly the attempts it planned.
    expect(answers.map(({ status }, index) => `${plan[index]!.body.name}: ${status}`)).toEqual(
      plan.map(({ body, schedule }) => `${body.name}: ${schedule.answer}`),
    );
    expect(plan.map(({ body }) => `${body.name}: ${attempts.get(body.name)}`)).toEqual(
      plan.map(({ body, schedule }) => `${body.name}: ${schedule.answer === 201 ? schedule.faults.length + 1 : ATTEMPTS}`),
    );

    const acknowledged = answers.flatMap(({ pet }) => (pet ? [pet] : []));
    const stored = await storedPets(api.tables.pets);
    const ambiguous = plan.filter(({ schedule }) => schedule.answer === 503 && schedule.stored).map(({ body }) => body.name);
    expect(ambiguous.length).toBeGreaterThan(0);
    // Exactly the acknowledged pets, same ids and fields, plus one pet per ambiguous create; nothing else.
    expect(byId(stored.filter((pet) => !ambiguous.includes(String(pet.name))))).toEqual(byId(acknowledged));
    expect(
      stored
        .filter((pet) => ambiguous.includes(String(pet.name)))
        .map((pet) => pet.name)
        .sort(),
    ).toEqual([...ambiguous].sort());
    expect(new Set(stored.map((pet) => pet.name)).size).toBe(stored.length);
  });
});

describe('an id collision on create', () => {
  it('is retried with a new id, invisibly: 201, and both pets intact', async () => {
    const taken = newPetId();
    const drawn = [taken, taken + 1];
    const api = await startLocalApi({ newPetId: () => drawn.shift() ?? newPetId() });
    closers.push(api.close);
    const resident = { id: taken, name: 'Resident', categoryId: 3, status: 'sold' };
    await database.send(new PutCommand({ TableName: api.tables.pets, Item: { ...resident, writeId: 'seeded' } }));

    const response = await postPet(api, { name: 'Newcomer', categoryId: 4 });

    expect(response.status).toBe(201);
    const created = (await response.json()) as { id: number };
    expect(created).toEqual({ id: taken + 1, name: 'Newcomer', categoryId: 4, status: 'available' });
    expect(drawn).toEqual([]);
    expect(await (await api.call(`/pets/${taken}`)).json()).toEqual(resident);
    expect(byId(await storedPets(api.tables.pets))).toEqual([resident, created]);
  });
});
