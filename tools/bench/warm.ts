/**
 * Warm overhead: each handler invoked in-process thousands of times, its repository's DynamoDB
 * client stubbed at `send` with canned outputs, beside a minimal hand-written handler sending
 * the same command with no middleware and no validation. Samples alternate in blocks so that
 * noise from the shared machine falls on both.
 */
import { GetCommand, PutCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { createHandler as createAuthorizer } from '../../functions/authorizer';
import { DEFAULT_PLAN, usageKeyBinding } from '../../shared/plan-policy';
import { SCOPES } from '../../shared/scopes';
import { createHandler as createCreatePet } from '../../functions/create-pet';
import { createHandler as createGetPet } from '../../functions/get-pet';
import { createHandler as createListPets } from '../../functions/list-pets';
import { generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import { apiKeysRepository } from '../../shared/api-keys-repository';
import { createDocumentClient } from '../../shared/dynamodb';
import { petsRepository } from '../../shared/pets-repository';
import { routes, type HandledOperationId } from '../../shared/routes';
import { petsStatusIndex } from '../../shared/tables';
import { lambdaContext, proxyEvent, tokenEvent } from '../../shared/gateway-events';
import { atMost, type Check, type PartResult } from './results';
import { withStdoutSink } from './sink';
import { median, quantile, round } from '../stats';

export interface WarmOptions {
  /** Measured invocations per candidate. */
  readonly iterations: number;
}

const PETS = 'pets';
const KEYS = 'api-keys';
const pet = (id: number) => ({ id, name: `pet ${id}`, categoryId: 1, status: 'available' });
const page = Array.from({ length: 21 }, (_, index) => pet(1_000 + index));
const key = generateApiKey();
/**
 * A key in use, as the authorizer reads it in production: its lastUsedAt a few minutes old (a run
 * lasts well under the hour), so the steady state writes nothing, as a busy key's does.
 */
const keyRecord = {
  keyHash: hashApiKey(key),
  keyId: keyIdOf(hashApiKey(key)),
  name: 'bench',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastUsedAt: new Date(Date.now() - 5 * 60_000).toISOString(),
  // As every key is made: its scopes, its plan and a usage key of its own, bound to it.
  scopes: new Set(SCOPES),
  plan: DEFAULT_PLAN,
  usageKeyId: 'benchusagekey',
  usageKey: 'bench-usage-key-value',
  usageKeyBinding: usageKeyBinding(hashApiKey(key), 'benchusagekey', 'bench-usage-key-value'),
};

/** The authorizer's warm overhead before expiry and last use (BENCHMARKS.md), and what they may add to it. */
const AUTHORIZER_OVERHEAD_BEFORE_MICROS = 15.7;
const AUTHORIZER_ALLOWANCE_MICROS = 10;

/** A real DocumentClient whose `send` answers from memory, as DynamoDB would; it counts the updates it is sent. */
const stubbedClient = () => {
  const client = createDocumentClient({ endpoint: 'http://127.0.0.1:9', region: 'eu-west-1' });
  const sent = { updates: 0 };
  const send = async (command: unknown) => {
    if (command instanceof QueryCommand) return { Items: page, Count: page.length };
    if (command instanceof GetCommand) return { Item: command.input.TableName === KEYS ? keyRecord : pet(1_000) };
    if (command instanceof PutCommand) return {};
    if (command instanceof UpdateCommand) {
      sent.updates += 1;
      return {};
    }
    throw new Error(`unexpected command ${String(command)}`);
  };
  (client as unknown as { send: typeof send }).send = send;
  return { client, sent };
};

type Invoke = (event: never) => Promise<unknown>;
interface Candidate {
  readonly name: string;
  readonly budgetMicros?: number;
  /** What the budget is, when it is not a figure of its own. */
  readonly budgetReason?: string;
  /** A fresh event per call, as Lambda gives: the body parser replaces the body in place. */
  readonly event: () => unknown;
  readonly handler: Invoke;
  readonly baseline: Invoke;
  readonly expect: (answer: unknown) => boolean;
}

const status = (answer: unknown) => (answer as { statusCode?: number }).statusCode;

const candidates = (client: DynamoDBDocumentClient): Candidate[] => {
  const pets = petsRepository({ client, tableName: PETS });
  const keys = apiKeysRepository({ client, tableName: KEYS });
  const listPets = createListPets({ pets });
  const createPet = createCreatePet({ pets });
  const getPet = createGetPet({ pets });
  const authorizer = createAuthorizer({ keys });
  const context = lambdaContext('bench', { reused: true });
  const lambda = (handler: unknown) => handler as (event: unknown, context: Context) => Promise<unknown>;

  // Keyed by operation, so that a new operation with a handler does not compile until it is measured.
  const operations: Readonly<Record<HandledOperationId, Candidate>> = {
    listPets: {
      name: 'listPets (status=available, limit=20)',
      budgetMicros: 50,
      event: () => proxyEvent({ query: { status: 'available', limit: '20' } }),
      handler: (event) => lambda(listPets)(event, context),
      baseline: async (event: APIGatewayProxyEvent) => {
        const query = event.queryStringParameters ?? {};
        const { Items = [] } = await client.send(
          new QueryCommand({
            TableName: PETS,
            IndexName: petsStatusIndex.indexName,
            KeyConditionExpression: '#status = :status',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':status': query.status },
            Limit: Number(query.limit) + 1,
          }),
        );
        return { statusCode: 200, body: JSON.stringify(Items.slice(0, 20)) };
      },
      expect: (answer) => status(answer) === 200,
    },
    createPet: {
      name: 'createPet',
      budgetMicros: 100,
      event: () =>
        proxyEvent({
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
        }),
      handler: (event) => lambda(createPet)(event, context),
      baseline: async (event: APIGatewayProxyEvent) => {
        const item = { id: Date.now(), status: 'available', ...(JSON.parse(event.body ?? '{}') as object) };
        await client.send(new PutCommand({ TableName: PETS, Item: item, ConditionExpression: 'attribute_not_exists(id)' }));
        return { statusCode: 201, body: JSON.stringify(item) };
      },
      expect: (answer) => status(answer) === 201,
    },
    getPet: {
      name: 'getPet',
      budgetMicros: 50,
      event: () => proxyEvent({ resource: '/pets/{petId}', path: '/pets/1000', pathParameters: { petId: '1000' } }),
      handler: (event) => lambda(getPet)(event, context),
      baseline: async (event: APIGatewayProxyEvent) => {
        const { Item } = await client.send(new GetCommand({ TableName: PETS, Key: { id: Number(event.pathParameters?.petId) } }));
        return { statusCode: 200, body: JSON.stringify(Item) };
      },
      expect: (answer) => status(answer) === 200,
    },
  };

  // Each operation with a handler, in the route table's order, then the authorizer.
  return [
    ...routes.flatMap((route) => ('handler' in route ? [operations[route.operationId]] : [])),
    {
      name: `authorizer (within ${AUTHORIZER_ALLOWANCE_MICROS} µs of ${AUTHORIZER_OVERHEAD_BEFORE_MICROS} µs)`,
      budgetMicros: Math.round(AUTHORIZER_OVERHEAD_BEFORE_MICROS + AUTHORIZER_ALLOWANCE_MICROS),
      budgetReason: `within ${AUTHORIZER_ALLOWANCE_MICROS} µs of its ${AUTHORIZER_OVERHEAD_BEFORE_MICROS} µs before expiry and last use`,
      event: () => tokenEvent(`Bearer ${key}`),
      handler: (event) => lambda(authorizer)(event, context),
      baseline: async (event: APIGatewayTokenAuthorizerEvent) => {
        const token = event.authorizationToken.slice('Bearer '.length);
        const { Item } = await client.send(new GetCommand({ TableName: KEYS, Key: { keyHash: hashApiKey(token) } }));
        return { principalId: String(Item?.keyId), policyDocument: { Version: '2012-10-17', Statement: [] } };
      },
      expect: (answer) => typeof (answer as { principalId?: unknown }).principalId === 'string',
    },
  ];
};

/** Microseconds per call for `block` calls, each on a fresh event built outside the timing. */
const sample = async (invoke: Invoke, event: () => unknown, block: number, into: number[]) => {
  for (let index = 0; index < block; index += 1) {
    const input = event() as never;
    const start = process.hrtime.bigint();
    await invoke(input);
    into.push(Number(process.hrtime.bigint() - start) / 1_000);
  }
};

export const runWarm = async ({ iterations }: WarmOptions): Promise<PartResult> => {
  const started = Date.now();
  const block = 250;
  const warmUp = Math.max(1_000, Math.floor(iterations / 2));
  const { client, sent } = stubbedClient();
  const { result: measured, lines } = await withStdoutSink(async () => {
    const rows: Array<{ candidate: Candidate; handler: number[]; baseline: number[] }> = [];
    for (const candidate of candidates(client)) {
      for (const invoke of [candidate.handler, candidate.baseline]) {
        const answer = await invoke(candidate.event() as never);
        if (!candidate.expect(answer)) throw new Error(`${candidate.name}: unexpected answer ${JSON.stringify(answer).slice(0, 300)}`);
      }
      await sample(candidate.handler, candidate.event, warmUp, []);
      await sample(candidate.baseline, candidate.event, warmUp, []);
      const handler: number[] = [];
      const baseline: number[] = [];
      for (let done = 0; done < iterations; done += block) {
        await sample(candidate.handler, candidate.event, block, handler);
        await sample(candidate.baseline, candidate.event, block, baseline);
      }
      rows.push({ candidate, handler, baseline });
    }
    return rows;
  });

  const checks: Check[] = [];
  const tableRows: Array<Array<string | number>> = [];
  let invocations = 0;
  for (const { candidate, handler, baseline } of measured) {
    invocations += handler.length + baseline.length;
    const handlerMedian = median(handler);
    const baselineMedian = median(baseline);
    const overhead = handlerMedian - baselineMedian;
    tableRows.push([
      candidate.name,
      round(handlerMedian, 1),
      round(quantile(handler, 0.99), 1),
      round(baselineMedian, 1),
      round(quantile(baseline, 0.99), 1),
      round(overhead, 1),
      round(quantile(handler, 0.99) - quantile(baseline, 0.99), 1),
      candidate.budgetMicros === undefined ? '-' : `<= ${candidate.budgetMicros}`,
    ]);
    const check = {
      id: `warm.${candidate.name.split(' ')[0]}.overhead`,
      label: `${candidate.name.split(' ')[0]} warm overhead (median)`,
      value: round(overhead, 1),
      unit: 'µs',
      reference: { label: 'bare handler median', value: round(baselineMedian, 1) },
      ratio: round(handlerMedian / baselineMedian),
    };
    checks.push(
      candidate.budgetMicros === undefined
        ? check
        : atMost(
            check,
            `overhead <= ${candidate.budgetMicros} µs${candidate.budgetReason ? ` (${candidate.budgetReason})` : ''}`,
            (baselineMedian + candidate.budgetMicros) / baselineMedian,
          ),
    );
  }
  return {
    part: 'warm',
    measuredAt: new Date().toISOString(),
    seconds: round((Date.now() - started) / 1000, 0),
    checks,
    tables: [
      {
        title:
          'Warm overhead: µs per invocation in-process, DynamoDB stubbed at send ' +
          `(${iterations} measured calls each after ${warmUp} warm-up calls)`,
        columns: ['handler', 'handler p50', 'handler p99', 'bare p50', 'bare p99', 'overhead p50', 'overhead p99', 'budget µs'],
        rows: tableRows,
      },
    ],
    notes: [
      'Logging as deployed: Powertools Logger at POWERTOOLS_LOG_LEVEL=INFO, stdout replaced by a sink while measuring ' +
        `(${lines} log lines for ${invocations} invocations, bare handlers included, which log nothing).`,
      'Handler and bare handler alternate in blocks of 250 calls; each call gets a fresh API Gateway event ' +
        '(the body parser replaces the body in place), built outside the timed region.',
      'The bare handlers: the same command (its parameters read from the same event) to the same stubbed DocumentClient, ' +
        'JSON.stringify of the result; no middleware, no validation, no logging.',
      "The authorizer reads a key last used minutes before, as a key in use is: it checks the key's expiry and the age of " +
        `its lastUsedAt and writes nothing (UpdateItem calls during the run: ${sent.updates}); ` +
        'the one write an hour per key is a DynamoDB round trip the stub cannot stand for (see the load part).',
    ],
  };
};
