/**
 * The stack grants each function a fixed list of DynamoDB actions (infra tableAccess). Here each
 * handler runs every path it has against DynamoDB Local, through a client that records what it
 * sends: the commands must be exactly the granted actions, on exactly the granted table or index.
 * A repository change that needs a new permission fails here, not in production.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createHandler as createAuthorizer } from '../../functions/authorizer';
import { createHandler as createHealthProbe } from '../../functions/health-probe';
import { createHandler as createIdempotencySweep } from '../../functions/idempotency-sweep';
import { createHandler as createKeyExpiry } from '../../functions/key-expiry';
import { tableAccess, type FunctionName, type TableAccess } from '../../infra/constructs/pet-store-functions';
import { generateApiKey } from '../../shared/api-keys';
import { apiKeysRepository } from '../../shared/api-keys-repository';
import { idempotentRequest, IDEMPOTENCY_WINDOW_SECONDS } from '../../shared/idempotency';
import { idempotencyRecords } from '../../shared/idempotency-records';
import { databaseHealth } from '../../shared/database-health';
import { newPetId } from '../../shared/ids';
import type { Pet } from '../../shared/models';
import { repositoriesFor, type RepositoriesOptions } from '../../shared/repositories';
import type { HandledOperationId } from '../../shared/routes';
import type { ProxyHandler } from '../../tools/local-server/gateway';
import { loadHandlerFactories } from '../../tools/local-server/handler-modules';
import { asInvocation } from '../../tools/local-server/invocation';
import { localUsageKey } from '../../tools/local-server/usage-plans';
import { apiEvent, context, operationEvent, tokenEvent } from '../support/events';
import { handledOperationIds } from '../support/operations';
import { recordingClient, type SentCommand } from '../support/recording-client';
import { createTestTables, type TestTables } from '../support/tables';

/** Who this file's changes to keys are made by. */
const ACTOR = 'local:test';

/** A command as the grants name it: an IAM action on a table or index. */
interface Recorded {
  readonly action: string;
  readonly tableName: string;
  readonly indexName?: string;
}

/** The commands a client sent, as grants. */
const asGrants = (sent: SentCommand[]): Recorded[] =>
  sent.map(({ command, tableName, indexName }) => ({ action: `dynamodb:${command}`, tableName, ...(indexName ? { indexName } : {}) }));

let tables: TestTables;

/** A handler run as its function's invocation, so that the IAM check sees its calls as that function's. */
const as = <Args extends unknown[], Result>(functionName: FunctionName, handler: (...args: Args) => Promise<Result>) =>
  asInvocation({ functionName, tables }, handler);

beforeAll(async () => {
  tables = await createTestTables();
  const { pets } = repositoriesFor(tables.client, tables);
  for (const status of ['available', 'pending', 'sold', 'available', 'available'] as const) {
    await pets.create({ name: 'seed', categoryId: 1, status });
  }
});

/** What a function was granted, in the recorded form. */
const granted = (name: FunctionName) =>
  tableAccess[name].flatMap((access: TableAccess) =>
    access.actions.map((action) => ({
      action,
      tableName: tables[access.table],
      ...(access.index ? { indexName: access.index } : {}),
    })),
  );

const distinct = (records: Recorded[]) => [...new Map(records.map((record) => [JSON.stringify(record), record])).values()];
/** The same, in a fixed order, for paths whose order of first use does not matter. */
const sorted = (records: Recorded[]) => distinct(records).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** What an operation's case runs its handler with. */
interface CaseTools {
  /** The operation's handler, from its route's module, on repositories that record what they send (these options added). */
  readonly handler: (options?: RepositoriesOptions) => ProxyHandler;
  /** A pet stored before the case runs. */
  readonly storedPet: Pet;
}

interface OperationCase {
  /** Which paths it runs, and what they send: the test's title. */
  readonly paths: string;
  /** Runs every path the handler has, asserting each answer. */
  readonly run: (tools: CaseTools) => Promise<void>;
}

/**
 * Each operation's own paths, keyed by operation: a route with a handler does not compile until
 * it has its case. The test below checks what the commands were against the route's grants.
 */
const operationCases: Readonly<Record<HandledOperationId, OperationCase>> = {
  listPets: {
    paths: 'Scan on the table, Query on the status index, across pages',
    run: async ({ handler }) => {
      const queries: Array<Record<string, string>> = [{}, { limit: '1' }, { status: 'available', limit: '1' }, { status: 'sold' }];
      for (const query of queries) {
        const response = await handler()(apiEvent({ query }), context);
        expect(response.statusCode).toBe(200);
      }
    },
  },
  createPet: {
    paths: "PutItem on the table; with Idempotency-Key, PutItem of the id's reservation, of the record, then of the pet",
    run: async ({ handler, storedPet }) => {
      const post = (key?: string, name = 'Rex') =>
        apiEvent({
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...(key ? { 'Idempotency-Key': key } : {}) },
          body: JSON.stringify({ name, categoryId: 2 }),
        });
      const create = handler();
      expect((await create(post(), context)).statusCode).toBe(201);
      const key = `"${randomUUID()}"`;
      expect((await create(post(key), context)).statusCode).toBe(201); // pet and record
      expect((await create(post(key), context)).statusCode).toBe(201); // the replay
      expect((await create(post(key, 'Max'), context)).statusCode).toBe(422); // the key reused
      // An id collision: a new id is reserved and the record moves to it (two more PutItems), then the pet is put under it.
      const ids = [storedPet.id];
      const colliding = handler({ newPetId: (kind) => ids.shift() ?? newPetId({ kind }) });
      expect((await colliding(post(`"${randomUUID()}"`), context)).statusCode).toBe(201);
    },
  },
  getHealth: {
    paths: 'GetItem on the pets, keys and idempotency tables, of keys no item has',
    run: async ({ handler }) => {
      expect((await handler()(operationEvent('getHealth'), context)).statusCode).toBe(200);
    },
  },
  getPet: {
    paths: 'GetItem on the table, found or not',
    run: async ({ handler, storedPet }) => {
      const get = handler();
      expect((await get(operationEvent('getPet', storedPet.id), context)).statusCode).toBe(200);
      expect((await get(operationEvent('getPet', 424242), context)).statusCode).toBe(404);
    },
  },
};

/** Each operation's handler module, as its route names it. */
const handlerFactories = await loadHandlerFactories();

/**
 * The attributes each UpdateItem named, and its ReturnValues, against what the function's update
 * grant allows: only its attributes, and only its return values.
 */
const expectUpdatesWithin = (sent: SentCommand[], name: FunctionName) => {
  const grants = tableAccess[name].filter((access) => access.actions.includes('dynamodb:UpdateItem'));
  const updates = sent.filter((command) => command.command === 'UpdateItem');
  expect(updates.length).toBeGreaterThan(0);
  expect(grants).toHaveLength(1);
  const [{ attributes: allowed, returnValues }] = grants as [TableAccess];
  expect(allowed).toBeDefined();
  expect(returnValues).toBeDefined();
  for (const update of updates) {
    expect(allowed).toEqual(expect.arrayContaining([...(update.attributes ?? [])]));
    expect(returnValues).toContain(update.returnValues);
  }
  // Every attribute granted is one the function uses: the grant is no wider than the code.
  expect([...new Set(updates.flatMap((update) => update.attributes ?? []))].sort()).toEqual([...(allowed ?? [])].sort());
};

describe('each function sends exactly the DynamoDB actions the stack grants it', () => {
  it('has a case for each operation of the route table with a handler, and for no other', () => {
    expect(Object.keys(operationCases).sort()).toEqual([...handledOperationIds].sort());
  });

  /** An operation's case; none for a route given a handler without one (which the compiler refuses too). */
  const caseOf = (operationId: HandledOperationId): OperationCase | undefined =>
    (operationCases as Partial<Record<HandledOperationId, OperationCase>>)[operationId];

  it.each(handledOperationIds.map((operationId) => [operationId, caseOf(operationId)?.paths ?? 'no case'] as const))(
    '%s: %s',
    async (operationId) => {
      const operationCase = caseOf(operationId);
      if (!operationCase) throw new Error(`No permissions case for ${operationId}: add one to operationCases.`);
      const { client, sent } = recordingClient(tables.endpoint);
      const [storedPet] = (await repositoriesFor(tables.client, tables).pets.list({ limit: 1 })).pets;
      if (!storedPet) throw new Error('no pet stored');
      const handler = (options: RepositoriesOptions = {}) =>
        as(
          operationId,
          handlerFactories[operationId]({ ...repositoriesFor(client, tables, options), health: databaseHealth({ client, tables }) }),
        );

      await operationCase.run({ handler, storedPet });

      expect(sorted(asGrants(sent))).toEqual(sorted(granted(operationId)));
      // An operation granted updates names only the attributes, and asks only the return values, its grant allows.
      if (tableAccess[operationId].some((access) => access.actions.includes('dynamodb:UpdateItem'))) expectUpdatesWithin(sent, operationId);
    },
  );

  it("authorizer: GetItem on the keys and last-use tables, for a known and an unknown key; UpdateItem of the last use for a key's first use", async () => {
    const { client, sent } = recordingClient(tables.endpoint);
    const key = generateApiKey();
    await apiKeysRepository({ client: tables.client, tables }).register(key, 'permissions-test', {
      usage: localUsageKey(),
      changedBy: ACTOR,
    });
    const authorizer = as('authorizer', createAuthorizer({ keys: apiKeysRepository({ client, tables }) }));
    await expect(authorizer(tokenEvent(`Bearer ${key}`), context)).resolves.toMatchObject({ principalId: expect.any(String) });
    await expect(authorizer(tokenEvent(`Bearer ${generateApiKey()}`), context)).rejects.toThrow('Unauthorized');
    expect(sorted(asGrants(sent))).toEqual(sorted(granted('authorizer')));
    // Nothing it sends writes the keys table: a write there could undo a revoke made in another region.
    expect(sent.filter((command) => command.tableName === tables.apiKeys).map((command) => command.command)).toEqual([
      'GetItem',
      'GetItem',
    ]);
  });

  it('authorizer: UpdateItem names only the key and lastUsedAt, first use and later use, and asks nothing back', async () => {
    const { client, sent } = recordingClient(tables.endpoint);
    const keys = apiKeysRepository({ client: tables.client, tables });
    const key = generateApiKey();
    await keys.register(key, 'permissions-test', { usage: localUsageKey(), changedBy: ACTOR });
    const authorizer = (now: Date) => as('authorizer', createAuthorizer({ keys: apiKeysRepository({ client, tables }), now: () => now }));
    await authorizer(new Date())(tokenEvent(`Bearer ${key}`), context);
    await authorizer(new Date(Date.now() + 2 * 3_600_000))(tokenEvent(`Bearer ${key}`), context);
    expect(sent.filter((command) => command.command === 'UpdateItem')).toHaveLength(2);
    expectUpdatesWithin(sent, 'authorizer');
  });

  it('keyExpiry: UpdateItem names only the key and the attributes it writes (its condition reads no other), and asks nothing back', async () => {
    const { client, sent } = recordingClient(tables.endpoint);
    const keys = apiKeysRepository({ client: tables.client, tables });
    await keys.register(generateApiKey(), 'expiring', {
      usage: localUsageKey(),
      expiresAt: new Date(Date.now() - 1_000).toISOString(),
      changedBy: ACTOR,
    });
    await as('keyExpiry', createKeyExpiry({ keys: apiKeysRepository({ client, tables }) }))({}, context);
    expectUpdatesWithin(sent, 'keyExpiry');
  });

  it('keyExpiry: Scan and UpdateItem on the keys table, with a key to mark and without', async () => {
    const { client, sent } = recordingClient(tables.endpoint);
    const keys = apiKeysRepository({ client: tables.client, tables });
    await keys.register(generateApiKey(), 'expiring', {
      usage: localUsageKey(),
      expiresAt: new Date(Date.now() - 1_000).toISOString(),
      changedBy: ACTOR,
    });
    const sweep = as('keyExpiry', createKeyExpiry({ keys: apiKeysRepository({ client, tables }) }));
    expect((await sweep({}, context)).marked).toHaveLength(1);
    expect((await sweep({}, context)).marked).toEqual([]);
    expect(sorted(asGrants(sent))).toEqual(sorted(granted('keyExpiry')));
  });

  it('idempotencySweep: Query on the expiry index and DeleteItem of an expired record, naming only its key and expiry', async () => {
    const { client, sent } = recordingClient(tables.endpoint);
    const keyed = idempotentRequest('permissions-caller', randomUUID(), { name: 'Rex', categoryId: 2, status: 'available' });
    await repositoriesFor(tables.client, tables).pets.createOnce({ name: 'Rex', categoryId: 2, status: 'available' }, keyed);
    const afterWindow = new Date(Date.now() + (IDEMPOTENCY_WINDOW_SECONDS + 3600) * 1000);
    const sweep = as(
      'idempotencySweep',
      createIdempotencySweep({ records: idempotencyRecords({ client, tableName: tables.idempotency }), now: () => afterWindow }),
    );
    expect((await sweep({}, context)).deleted).toBeGreaterThan(0);
    expect(sorted(asGrants(sent))).toEqual(sorted(granted('idempotencySweep')));
  });

  it("healthProbe: GetItem on the pets, keys and idempotency tables, of keys no item has, as the health route's", async () => {
    const { client, sent } = recordingClient(tables.endpoint);
    const probe = as('healthProbe', createHealthProbe({ health: databaseHealth({ client, tables }) }));
    expect(await probe({}, context)).toEqual({ readable: true, drained: false });
    expect(sorted(asGrants(sent))).toEqual(sorted(granted('healthProbe')));
  });
});
