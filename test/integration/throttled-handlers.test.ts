/**
 * The handlers when DynamoDB throttles (a hot partition): each call the handler's grants allow is
 * answered with DynamoDB's own throttling errors (HTTP 400, its JSON error shape) by the fault
 * proxy, so the SDK's real retry path runs. The handler answers 503 with Retry-After after one
 * short retry: the waits the SDK's retry strategy sets are read from it, not timed, so a busy
 * machine cannot fail it. A throttled request must not hold a Lambda execution for seconds of
 * backoff (docs/reliability.md).
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { databaseHealth } from '../../shared/database-health';
import { RETRY_BACKOFF_MAX_MS } from '../../shared/dynamodb';
import { errorCatalogue } from '../../shared/errors';
import { repositoriesFor } from '../../shared/repositories';
import { routes } from '../../shared/routes';
import type { TableAccess } from '../../shared/table-access';
import { loadHandlerFactories } from '../../tools/local-server/handler-modules';
import { databaseClient, functionsClient } from '../support/database';
import { apiEvent, context } from '../support/events';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { faultRows } from '../support/fault-rows';
import { handlerResourceMaker } from '../support/resource-makers';
import { createTestTables, type TestTables } from '../support/tables';

/** The first attempt and one retry (shared/dynamodb.ts). */
const ATTEMPTS = 2;
/** Invocations per operation and error; the median time is printed with FAULT_TIMES=1. */
const REPEATS = 5;
const THROTTLE_ERRORS = ['ProvisionedThroughputExceededException', 'ThrottlingException'] as const;

/** Each pets-table call an operation with a handler makes (the fault matrix's rows on that table). */
const throttledCalls = faultRows(routes).filter((row) => row.table === 'pets');

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

/**
 * Milliseconds the SDK's retry strategy waits for each retry: the wait it makes before handing out
 * the retry's token (it records it on the token), and any it asks the caller to make after.
 */
const retryWaits: number[] = [];
const refreshForRetry = ConfiguredRetryStrategy.prototype.refreshRetryTokenForRetry;
beforeAll(() => {
  vi.spyOn(ConfiguredRetryStrategy.prototype, 'refreshRetryTokenForRetry').mockImplementation(async function (
    this: ConfiguredRetryStrategy,
    ...args: Parameters<ConfiguredRetryStrategy['refreshRetryTokenForRetry']>
  ) {
    const token = await refreshForRetry.apply(this, args);
    const waited = (token as { $retryLog?: { acquisitionDelay?: number } }).$retryLog?.acquisitionDelay ?? 0;
    retryWaits.push(waited + token.getRetryDelay());
    return token;
  });
});
afterAll(() => vi.restoreAllMocks());

describe('a handler on a throttled table', () => {
  it('covers every operation with a handler that calls the pets table, and each index under the query that uses it', () => {
    for (const route of routes) {
      const grants: readonly TableAccess[] = 'handler' in route ? (route.tableAccess ?? []).filter((grant) => grant.table === 'pets') : [];
      const calls = throttledCalls.filter((call) => call.operationId === route.operationId);
      expect(calls.length, route.operationId).toBe(grants.reduce((count, grant) => count + grant.actions.length, 0));
      const onIndex = grants.filter((grant) => grant.index !== undefined).length;
      expect(calls.filter((call) => call.name.includes('?')).length, route.operationId).toBeGreaterThanOrEqual(onIndex);
    }
  });

  it.each(throttledCalls)(`$name: 503 with Retry-After after one retry, waiting under ${RETRY_BACKOFF_MAX_MS} ms`, async (call) => {
    const factories = await loadHandlerFactories();
    // Its own client: its own retry quota, as a fresh execution environment has.
    const client = functionsClient(proxy.endpoint);
    const handler = factories[call.operationId as keyof typeof factories]({
      ...repositoriesFor(client, tables),
      health: databaseHealth({ client, tables }),
    });
    // The resources the request names (its route's succeedsWith), made past the proxy, so that only the request meets the throttle.
    const make = handlerResourceMaker({
      ...repositoriesFor(tables.client, tables),
      health: databaseHealth({ client: tables.client, tables }),
    });
    const selector = { operation: call.operation, table: tables.pets };

    for (const throttleError of THROTTLE_ERRORS) {
      const times: number[] = [];
      for (let repeat = 0; repeat < REPEATS; repeat += 1) {
        const { method, resource, path, pathParameters, query, headers, body = null } = await call.request(make);
        proxy.resetCalls();
        retryWaits.length = 0;
        proxy.inject({ ...selector, fault: 'throttle', throttleError });
        const event = apiEvent({ method, resource, path, pathParameters, query, headers, body });
        const start = performance.now();
        const response = (await handler(event, context)) as APIGatewayProxyResult;
        times.push(performance.now() - start);
        proxy.recover();

        expect(response.statusCode, throttleError).toBe(503);
        expect(JSON.parse(response.body)).toMatchObject({ code: 'service_unavailable', status: 503 });
        expect(response.headers?.['Retry-After']).toBe(errorCatalogue.service_unavailable.headers['Retry-After']);
        // A listing's shard queries go together and the answer comes at the first failure: each call is tried at most twice.
        expect(proxy.calls(selector), `${throttleError}: the first attempt and one retry`).toBeGreaterThanOrEqual(ATTEMPTS);
        expect(proxy.calls(selector), `${throttleError}: the first attempt and one retry`).toBeLessThanOrEqual(
          call.callsPerRequest * ATTEMPTS,
        );
        // The SDK's default waits 0.1 s to 1 s, and after throttling 0.5 s to 20 s; ours under RETRY_BACKOFF_MAX_MS.
        expect(retryWaits.length, `${throttleError}: retried`).toBeGreaterThan(0);
        expect(Math.max(...retryWaits), `${throttleError}: the retry's wait`).toBeLessThan(RETRY_BACKOFF_MAX_MS);
      }
      measured.push({ call: call.name, error: throttleError, medianMs: Math.round(median(times)), maxMs: Math.round(Math.max(...times)) });
    }
  });
});

describe('the shared client on a throttled table', () => {
  it(`tells DynamoDB each attempt is one of ${ATTEMPTS}, the budget it keeps`, async () => {
    const client = databaseClient({ endpoint: proxy.endpoint });
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
