/**
 * What each operation of the stated mix uses, measured rather than counted by hand: its handler
 * runs on its example request (shared/request-examples.ts) against DynamoDB Local, on a client
 * that asks DynamoDB for the capacity each call consumed (indexes included), and its access line
 * is read as the logger writes it. A keyed create's records are then swept, as the sweep does a day
 * later. `npm run costs` and the costs test both measure with this, each on DynamoDB Local.
 */
import { randomUUID } from 'node:crypto';
import { IDEMPOTENCY_SWEEP_INTERVAL } from '../../infra/constructs/idempotency-sweep';
import type { OperationUsage } from '../../infra/costs';
import { accessLogLine, ACCESS_LOG_FIELDS, type AccessLogVariable } from '../../shared/access-log';
import { createDocumentClient } from '../../shared/dynamodb';
import { lambdaContext, proxyEvent } from '../../shared/gateway-events';
import { ACCESS_LINE_MESSAGE } from '../../shared/http/access-log';
import { IDEMPOTENCY_KEY_HEADER } from '../../shared/http/idempotency-key';
import { IDEMPOTENCY_WINDOW_SECONDS } from '../../shared/idempotency';
import { idempotencyRecords } from '../../shared/idempotency-records';
import { logger } from '../../shared/logger';
import { petReads } from '../../shared/pet-reads';
import { petWrites } from '../../shared/pets-repository';
import { exampleEventInit, exampleRequest, queryUsing } from '../../shared/request-examples';
import { routeOf, type HandledOperationId, type Route } from '../../shared/routes';
import type { TableNames } from '../../shared/tables';

/** The operations the cost table states, each on its example request. */
export type CostedOperation = Extract<HandledOperationId, 'listPets' | 'getPet' | 'createPet'>;

/** How the cost table's operations are requested: a listing of one status, a pet by id, a create with an Idempotency-Key. */
export const COSTED_REQUESTS: Readonly<Record<CostedOperation, string>> = {
  listPets: 'a page of one status (the status index, one Query per shard)',
  getPet: 'one pet by its id',
  createPet: 'a create with an Idempotency-Key, its records swept a day later',
};

/** Pets of the listed status stored first, so that a page is a whole page. */
const STORED_PETS = 30;

/** Reads and writes a client sent, in capacity units, as DynamoDB reported them. */
interface Consumed {
  read: number;
  write: number;
  /** Bytes of the items put, by table name. */
  readonly written: Map<string, number>;
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

/** An item's size as DynamoDB counts it (names and values, UTF-8), near enough for replication bytes. */
const itemBytes = (item: Record<string, unknown>): number =>
  Object.entries(item).reduce(
    (total, [name, value]) => total + Buffer.byteLength(name) + Buffer.byteLength(JSON.stringify(value ?? null)),
    0,
  );

/** A client on `endpoint` that asks for, and adds up, the capacity each call consumes. */
const measuringClient = (endpoint: string) => {
  const client = createDocumentClient({ endpoint });
  const consumed: Consumed = { read: 0, write: 0, written: new Map() };
  client.middlewareStack.add(
    (next, { commandName }) =>
      async (args) => {
        const input = args.input as { ReturnConsumedCapacity?: string; TableName?: string; Item?: Record<string, unknown> };
        input.ReturnConsumedCapacity = 'INDEXES';
        const result = await next(args);
        const name = String(commandName).replace(/Command$/, '');
        const reported = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity?.CapacityUnits ?? 0;
        if (WRITES.has(name)) {
          consumed.write += reported;
          const table = input.TableName ?? '';
          if (input.Item) consumed.written.set(table, (consumed.written.get(table) ?? 0) + itemBytes(input.Item));
        } else consumed.read += reported;
        return result;
      },
    { step: 'initialize', name: 'measureCapacity' },
  );
  return { client, consumed };
};

/** A representative X-Ray trace header, which Lambda sets and Powertools logs the root of. */
const TRACE_HEADER = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';

/** Runs `act` with the logger on and its lines caught, and returns the access line's bytes, its variable fields at a fixed width. */
const accessLineBytes = async (act: () => Promise<unknown>): Promise<number> => {
  const level = logger.getLevelName();
  const trace = process.env._X_AMZN_TRACE_ID;
  const write = process.stdout.write.bind(process.stdout);
  const lines: string[] = [];
  logger.setLogLevel('INFO');
  process.env._X_AMZN_TRACE_ID = TRACE_HEADER;
  process.stdout.write = ((chunk: string | Uint8Array) => (
    lines.push(...String(chunk).split('\n').filter(Boolean)),
    true
  )) as typeof process.stdout.write;
  try {
    await act();
  } finally {
    process.stdout.write = write;
    logger.setLogLevel(level);
    if (trace === undefined) delete process.env._X_AMZN_TRACE_ID;
    else process.env._X_AMZN_TRACE_ID = trace;
  }
  const line = lines.map((text) => JSON.parse(text) as Record<string, unknown>).find((entry) => entry.message === ACCESS_LINE_MESSAGE);
  if (!line) throw new Error('the handler wrote no access line');
  // A warm request's line, its latency at a typical width.
  return Buffer.byteLength(JSON.stringify({ ...line, latencyMs: 12.34, coldStart: false })) + 1;
};

/** The API stage's access line for a request of `route` answered `status`, as API Gateway renders the format. */
export const stageAccessLineBytes = (route: Route, status: number): number => {
  const values: Record<AccessLogVariable, string> = {
    '$context.requestId': randomUUID(),
    '$context.apiId': 'a1b2c3d4e5',
    '$context.status': String(status),
    '$context.error.responseType': '-',
    '$context.authorizer.principalId': '0123456789ab',
    '$context.authorizer.plan': 'default',
    '$context.httpMethod': route.method,
    '$context.resourcePath': route.path,
    '$context.requestTimeEpoch': '1764806400000',
    '$context.identity.sourceIp': '203.0.113.7',
    '$context.responseLength': '512',
    '$context.responseLatency': '24',
    '$context.integration.latency': '21',
    '$context.integration.status': String(status),
    '$context.authorizer.status': '-',
    '$context.authorizer.latency': '-',
  };
  if (Object.keys(values).length !== Object.keys(ACCESS_LOG_FIELDS).length) throw new Error('a field of the access log has no value here');
  return Buffer.byteLength(JSON.stringify(accessLogLine(values))) + 1;
};

export interface MeasureOptions {
  readonly endpoint: string;
  /** Fresh tables in that DynamoDB for each operation measured. */
  readonly freshTables: () => Promise<TableNames>;
  /** The status index's shards of the stage. */
  readonly statusShards: number;
}

const context = lambdaContext('costs', { reused: true });
type Handler = (event: unknown, context: unknown) => Promise<{ statusCode: number }>;

/** Each costed operation's usage for one request. */
export const measureOperations = async ({
  endpoint,
  freshTables,
  statusShards,
}: MeasureOptions): Promise<Record<CostedOperation, OperationUsage>> => {
  const measureOne = async (operationId: CostedOperation): Promise<OperationUsage> => {
    const route: Route = routeOf(operationId);
    const tables = await freshTables();
    const setup = createDocumentClient({ endpoint });
    const writes = petWrites({ client: setup, tableName: tables.pets, idempotencyTableName: tables.idempotency, statusShards });
    const stored = [];
    for (let index = 0; index < STORED_PETS; index += 1)
      stored.push(await writes.create({ name: `pet ${index}`, categoryId: 1, status: 'available' }));
    setup.destroy();

    const { client, consumed } = measuringClient(endpoint);
    const reads = petReads({ client, tableName: tables.pets, statusShards });
    const keyed = petWrites({ client, tableName: tables.pets, idempotencyTableName: tables.idempotency, statusShards });
    const handlerModule = (await import(`../../${route.handler ?? ''}`)) as { createHandler: (dependencies: object) => Handler };
    const handler = handlerModule.createHandler({ pets: operationId === 'createPet' ? keyed : reads });
    const grant = route.tableAccess?.find((access) => access.index !== undefined);
    const request = exampleRequest(route, {
      pathParameter: stored[0]?.id ?? 1,
      query: grant === undefined ? {} : queryUsing(route, grant),
    });
    const init = exampleEventInit(request);
    const headers = operationId === 'createPet' ? { ...init.headers, [IDEMPOTENCY_KEY_HEADER]: `"${randomUUID()}"` } : init.headers;
    let status = 0;
    const logBytes = await accessLineBytes(async () => {
      status = (await handler(proxyEvent({ ...init, headers }), context)).statusCode;
    });
    if (status !== route.success?.status) throw new Error(`${operationId}: answered ${status} to its example request`);

    const requestReads = consumed.read;
    const writtenBytes = [...consumed.written.values()].reduce((total, bytes) => total + bytes, 0);
    let sweptReads = 0;
    if (operationId === 'createPet') {
      // The sweep deletes the records once expired (those deletes are measured). Its reads are of
      // the whole table, each run: a record is read once a run for its day, in its share of the
      // Scan's pages (an eventually consistent Scan: half a unit per 4 KB read).
      await idempotencyRecords({ client, tableName: tables.idempotency }).deleteExpired({
        now: Math.floor(Date.now() / 1000) + IDEMPOTENCY_WINDOW_SECONDS + 3600,
        maxDeletes: 100,
      });
      const recordBytes = consumed.written.get(tables.idempotency) ?? 0;
      const runsPerRecord = IDEMPOTENCY_WINDOW_SECONDS / IDEMPOTENCY_SWEEP_INTERVAL.toSeconds();
      sweptReads = ((recordBytes * runsPerRecord) / 4096) * 0.5;
    }
    client.destroy();
    return {
      readUnits: round(requestReads + sweptReads),
      writeUnits: consumed.write,
      writtenBytes,
      logBytes: logBytes + stageAccessLineBytes(route, status),
    };
  };
  return {
    listPets: await measureOne('listPets'),
    getPet: await measureOne('getPet'),
    createPet: await measureOne('createPet'),
  };
};

const round = (value: number) => Math.round(value * 100) / 100;
