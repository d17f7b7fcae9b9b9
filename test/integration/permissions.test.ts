/**
 * The stack grants each function a fixed list of DynamoDB actions (infra tableAccess). Here each
 * handler runs every path it has against DynamoDB Local, through a client that records what it
 * sends: the commands must be exactly the granted actions, on exactly the granted table or index.
 * A repository change that needs a new permission fails here, not in production.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createHandler as createAuthorizer } from '../../functions/authorizer';
import { createHandler as createCreatePet } from '../../functions/create-pet';
import { createHandler as createGetPet } from '../../functions/get-pet';
import { createHandler as createKeyExpiry } from '../../functions/key-expiry';
import { createHandler as createListPets } from '../../functions/list-pets';
import { tableAccess, type FunctionName, type TableAccess } from '../../infra/constructs/pet-store-functions';
import { generateApiKey } from '../../shared/api-keys';
import { apiKeysRepository } from '../../shared/api-keys-repository';
import { newPetId } from '../../shared/ids';
import { petsRepository, type PetsRepositoryOptions } from '../../shared/pets-repository';
import { randomUUID } from 'node:crypto';
import { apiEvent, context, tokenEvent } from '../support/events';
import { recordingClient, type SentCommand } from '../support/recording-client';
import { createTestTables, type TestTables } from '../support/tables';
import { asInvocation } from '../../tools/local-server/invocation';
import { localUsageKey } from '../../tools/local-server/usage-plans';

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
  const pets = petsRepository({ client: tables.client, tableName: tables.pets });
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

describe('each function sends exactly the DynamoDB actions the stack grants it', () => {
  it('listPets: Scan on the table, Query on the status index, across pages', async () => {
    const { client, sent } = recordingClient(tables.endpoint);
    const handler = as('listPets', createListPets({ pets: petsRepository({ client, tableName: tables.pets }) }));
    const queries: Array<Record<string, string>> = [{}, { limit: '1' }, { status: 'available', limit: '1' }, { status: 'sold' }];
    for (const query of queries) {
      const response = await handler(apiEvent({ query }), context);
      expect(response.statusCode).toBe(200);
    }
    expect(distinct(asGrants(sent))).toEqual(granted('listPets'));
  });

  it('createPet: PutItem on the table; with Idempotency-Key, one transaction that puts the pet and its record', async () => {
    const { client, sent } = recordingClient(tables.endpoint);
    const repository = (options: Partial<PetsRepositoryOptions> = {}) =>
      petsRepository({ client, tableName: tables.pets, idempotencyTableName: tables.idempotency, ...options });
    const handler = as('createPet', createCreatePet({ pets: repository() }));
    const post = (key?: string, name = 'Rex') =>
      apiEvent({
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(key ? { 'Idempotency-Key': key } : {}) },
        body: JSON.stringify({ name, categoryId: 2 }),
      });
    expect((await handler(post(), context)).statusCode).toBe(201);
    const key = `"${randomUUID()}"`;
    expect((await handler(post(key), context)).statusCode).toBe(201); // pet and record
    expect((await handler(post(key), context)).statusCode).toBe(201); // the replay
    expect((await handler(post(key, 'Max'), context)).statusCode).toBe(422); // the key reused
    // An id collision: the transaction is cancelled and tried again under a new id.
    const [taken] = (await petsRepository({ client: tables.client, tableName: tables.pets }).list({ limit: 1 })).pets;
    const ids = [taken?.id ?? 1];
    const colliding = as('createPet', createCreatePet({ pets: repository({ newId: () => ids.shift() ?? newPetId() }) }));
    expect((await colliding(post(`"${randomUUID()}"`), context)).statusCode).toBe(201);
    expect(sorted(asGrants(sent))).toEqual(sorted(granted('createPet')));
  });

  it('getPet: GetItem on the table, found or not', async () => {
    const { client, sent } = recordingClient(tables.endpoint);
    const handler = as('getPet', createGetPet({ pets: petsRepository({ client, tableName: tables.pets }) }));
    const [first] = await petsRepository({ client: tables.client, tableName: tables.pets })
      .list({ limit: 1 })
      .then((page) => page.pets);
    for (const petId of [String(first?.id), '424242']) {
      const response = await handler(apiEvent({ resource: '/pets/{petId}', path: `/pets/${petId}`, pathParameters: { petId } }), context);
      expect([200, 404]).toContain(response.statusCode);
    }
    expect(distinct(asGrants(sent))).toEqual(granted('getPet'));
  });

  it("authorizer: GetItem on the keys table, for a known and an unknown key; UpdateItem for a key's first use", async () => {
    const { client, sent } = recordingClient(tables.endpoint);
    const key = generateApiKey();
    await apiKeysRepository({ client: tables.client, tableName: tables.apiKeys }).register(key, 'permissions-test', {
      usage: localUsageKey(),
      changedBy: ACTOR,
    });
    const authorizer = as('authorizer', createAuthorizer({ keys: apiKeysRepository({ client, tableName: tables.apiKeys }) }));
    await expect(authorizer(tokenEvent(`Bearer ${key}`), context)).resolves.toMatchObject({ principalId: expect.any(String) });
    await expect(authorizer(tokenEvent(`Bearer ${generateApiKey()}`), context)).rejects.toThrow('Unauthorized');
    expect(sorted(asGrants(sent))).toEqual(sorted(granted('authorizer')));
  });

  /** The attributes each UpdateItem named, and its ReturnValues, against the attributes the grant allows. */
  const expectUpdatesWithin = (sent: SentCommand[], name: FunctionName) => {
    const [allowed] = tableAccess[name]
      .filter((access) => access.actions.includes('dynamodb:UpdateItem'))
      .map((access) => access.attributes);
    const updates = sent.filter((command) => command.command === 'UpdateItem');
    expect(updates.length).toBeGreaterThan(0);
    expect(allowed).toBeDefined();
    for (const update of updates) {
      expect(allowed).toEqual(expect.arrayContaining([...(update.attributes ?? [])]));
      expect(update.returnValues).toBe('NONE');
    }
    // Every attribute granted is one the function uses: the grant is no wider than the code.
    expect([...new Set(updates.flatMap((update) => update.attributes ?? []))].sort()).toEqual([...(allowed ?? [])].sort());
  };

  it('authorizer: UpdateItem names only the key and lastUsedAt, first use and later use, and asks nothing back', async () => {
    const { client, sent } = recordingClient(tables.endpoint);
    const keys = apiKeysRepository({ client: tables.client, tableName: tables.apiKeys });
    const key = generateApiKey();
    await keys.register(key, 'permissions-test', { usage: localUsageKey(), changedBy: ACTOR });
    const authorizer = (now: Date) =>
      as('authorizer', createAuthorizer({ keys: apiKeysRepository({ client, tableName: tables.apiKeys }), now: () => now }));
    await authorizer(new Date())(tokenEvent(`Bearer ${key}`), context);
    await authorizer(new Date(Date.now() + 2 * 3_600_000))(tokenEvent(`Bearer ${key}`), context);
    expect(sent.filter((command) => command.command === 'UpdateItem')).toHaveLength(2);
    expectUpdatesWithin(sent, 'authorizer');
  });

  it('keyExpiry: UpdateItem names only the key, the expiry it reads and the attributes it writes, and asks nothing back', async () => {
    const { client, sent } = recordingClient(tables.endpoint);
    const keys = apiKeysRepository({ client: tables.client, tableName: tables.apiKeys });
    await keys.register(generateApiKey(), 'expiring', {
      usage: localUsageKey(),
      expiresAt: new Date(Date.now() - 1_000).toISOString(),
      changedBy: ACTOR,
    });
    await as('keyExpiry', createKeyExpiry({ keys: apiKeysRepository({ client, tableName: tables.apiKeys }) }))({}, context);
    expectUpdatesWithin(sent, 'keyExpiry');
  });

  it('keyExpiry: Scan and UpdateItem on the keys table, with a key to mark and without', async () => {
    const { client, sent } = recordingClient(tables.endpoint);
    const keys = apiKeysRepository({ client: tables.client, tableName: tables.apiKeys });
    await keys.register(generateApiKey(), 'expiring', {
      usage: localUsageKey(),
      expiresAt: new Date(Date.now() - 1_000).toISOString(),
      changedBy: ACTOR,
    });
    const sweep = as('keyExpiry', createKeyExpiry({ keys: apiKeysRepository({ client, tableName: tables.apiKeys }) }));
    expect((await sweep({}, context)).marked).toHaveLength(1);
    expect((await sweep({}, context)).marked).toEqual([]);
    expect(sorted(asGrants(sent))).toEqual(sorted(granted('keyExpiry')));
  });
});
