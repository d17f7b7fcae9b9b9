/**
 * The handlers when DynamoDB throttles (a hot partition): each call the handler's grants allow is
 * answered with DynamoDB's own throttling errors (HTTP 400, its JSON error shape) by the fault
 * proxy, so the SDK's real retry path runs. The handler answers 503 with Retry-After after one
 * short retry, in well under a second of its own time: a throttled request must not hold a
 * Lambda execution for seconds of backoff (docs/reliability.md).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../shared/dynamodb';
import { errorCatalogue } from '../../shared/errors';
import { petsRepository } from '../../shared/pets-repository';
import { exampleRequest, queryUsing } from '../../shared/request-examples';
import { routes, type Route } from '../../shared/routes';
import { loadHandlerFactories } from '../../tools/local-server/handler-modules';
import { apiEvent, context } from '../support/events';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { createTestTables, type TestTables } from '../support/tables';

/** The first attempt and one retry (shared/dynamodb.ts). */
const ATTEMPTS = 2;
/** Generous, for a loaded machine: the retry waits at most 0.1 s. The SDK's default backoff took 1–3 s. */
const HANDLER_BOUND_MS = 1_000;
/** Invocations per operation and error; the median is printed with FAULT_TIMES=1. */
const REPEATS = 5;
const THROTTLE_ERRORS = ['ProvisionedThroughputExceededException', 'ThrottlingException'] as const;

/** Each pets-table call an operation with a handler makes, under the request that makes it. */
const throttledCalls = routes.flatMap((route: Route) =>
  route.handler === undefined
    ? []
    : (route.tableAccess ?? [])
        .filter((grant) => grant.table === 'pets')
        .flatMap((grant) =>
          grant.actions.map((action) => {
            const query = queryUsing(route, grant);
            const search = new URLSearchParams(query).toString();
            return {
              name: `${route.operationId}${search === '' ? '' : `?${search}`}`,
              operationId: route.operationId,
              operation: action.replace(/^dynamodb:/, ''),
              request: exampleRequest(route, { query }),
            };
          }),
        ),
);

let tables: TestTables;
let proxy: FaultProxy;
beforeAll(async () => {
  tables = await createTestTables();
  proxy = await startFaultProxy(tables.endpoint);
});
afterAll(async () => {
  await proxy?.close();
});

const measured: Array<{ call: string; error: string; medianMs: number; maxMs: number }> = [];
afterAll(() => {
  if (process.env.FAULT_TIMES) console.table(measured);
});

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('a handler on a throttled table', () => {
  it('covers every pets-table call of every operation with a handler, the status index included', () => {
    expect(throttledCalls.map(({ name, operation }) => `${name} ${operation}`)).toEqual(
      expect.arrayContaining(['listPets?status=available Query', 'listPets Scan', 'getPet GetItem', 'createPet PutItem']),
    );
  });

  it.each(throttledCalls)('$name: 503 with Retry-After after one short retry, in well under a second', async (call) => {
    const factories = await loadHandlerFactories();
    // Its own client: its own retry quota, as a fresh execution environment has.
    const client = createDocumentClient({ endpoint: proxy.endpoint });
    const pets = petsRepository({ client, tableName: tables.pets, idempotencyTableName: tables.idempotency });
    const handler = factories[call.operationId as keyof typeof factories]({ pets });
    const { method, resource, path, pathParameters, query, headers, body = null } = call.request;
    const selector = { operation: call.operation, table: tables.pets };

    for (const throttleError of THROTTLE_ERRORS) {
      const times: number[] = [];
      for (let repeat = 0; repeat < REPEATS; repeat += 1) {
        proxy.resetCalls();
        proxy.inject({ ...selector, fault: 'throttle', throttleError });
        const event = apiEvent({ method, resource, path, pathParameters, query, headers, body });
        const start = performance.now();
        const response = (await handler(event, context)) as APIGatewayProxyResult;
        times.push(performance.now() - start);
        proxy.recover();

        expect(response.statusCode, throttleError).toBe(503);
        expect(JSON.parse(response.body)).toMatchObject({ code: 'service_unavailable', status: 503 });
        expect(response.headers?.['Retry-After']).toBe(errorCatalogue.service_unavailable.headers['Retry-After']);
        expect(proxy.calls(selector), `${throttleError}: the first attempt and one retry`).toBe(ATTEMPTS);
      }
      measured.push({ call: call.name, error: throttleError, medianMs: Math.round(median(times)), maxMs: Math.round(Math.max(...times)) });
      expect(median(times), throttleError).toBeLessThan(HANDLER_BOUND_MS);
    }
  });
});

describe('the shared client on a throttled table', () => {
  it(`tells DynamoDB each attempt is one of ${ATTEMPTS}, the budget it keeps`, async () => {
    const client = createDocumentClient({ endpoint: proxy.endpoint });
    const selector = { operation: 'GetItem', table: tables.pets };
    const headers: Array<string | undefined> = [];
    proxy.plan((call) => {
      if (call.operation === selector.operation && call.table === selector.table) headers.push(call.sdkRequest);
      return undefined;
    });
    proxy.inject({ ...selector, fault: 'throttle' });
    try {
      await expect(client.send(new GetCommand({ TableName: tables.pets, Key: { id: 1 } }))).rejects.toThrow();
    } finally {
      proxy.recover();
      client.destroy();
    }
    expect(headers).toEqual(Array.from({ length: ATTEMPTS }, (_, index) => `attempt=${index + 1}; max=${ATTEMPTS}`));
  });
});
