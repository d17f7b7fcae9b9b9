/**
 * Keyed creates against DynamoDB Local: the idempotency record first, which fixes the pet, then
 * the pet; no transaction. Replays, a reused key, another caller, an expired record, concurrent
 * duplicates, id collisions, lost answers, a failure between the two writes, replicated write
 * conflicts, and two regions sharing one strongly consistent idempotency table.
 */
import { GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../functions/create-pet';
import { DatabaseUnavailable, REPLICATED_WRITE_ATTEMPTS } from '../../shared/dynamodb';
import { idempotentRequest, IDEMPOTENCY_WINDOW_SECONDS, type IdempotentRequest } from '../../shared/idempotency';
import { newPetId, type IdGenerator } from '../../shared/ids';
import type { NewPet } from '../../shared/models';
import { petsRepository, type KeyedCreateOutcome, type PetsRepositoryOptions } from '../../shared/pets-repository';
import { functionsClient } from '../support/database';
import { apiEvent, context } from '../support/events';
import { startFaultProxy, type Fault, type FaultPlan, type FaultProxy, type ProxiedCall } from '../support/fault-proxy';
import { petsStatusIndex } from '../../shared/tables';
import { createTestTables, type TestTables } from '../support/tables';

let tables: TestTables;
let proxy: FaultProxy;
beforeAll(async () => {
  tables = await createTestTables();
  proxy = await startFaultProxy(tables.endpoint);
});
afterAll(() => proxy.close());

const rex: NewPet = { name: 'Rex', categoryId: 1, status: 'available' };
let keys = 0;
/** A fresh (caller, Idempotency-Key) pair for each test. */
const request = (newPet: NewPet = rex, caller = 'caller-hash-a', key = `key-${++keys}`) => idempotentRequest(caller, key, newPet);

const repository = (options: Partial<PetsRepositoryOptions> = {}) =>
  petsRepository({ client: tables.client, tableName: tables.pets, idempotencyTableName: tables.idempotency, ...options });

/** A repository whose calls go through the fault proxy (a client of its own, with the functions' settings). */
const faultedRepository = (options: Partial<PetsRepositoryOptions> = {}) =>
  repository({ client: functionsClient(proxy.endpoint), ...options });

/** Whether a call through the proxy is a put on the idempotency table. */
const isIdempotencyPut = (call: ProxiedCall) => call.operation === 'PutItem' && call.table === tables.idempotency;
/** Whether a put is an id's reservation (`pet#<id>`), not a record. */
const isReservation = (call: ProxiedCall) => String((call.body.Item as { id?: { S?: string } } | undefined)?.id?.S).startsWith('pet#');
/** A plan that answers the first call `matches` with `fault`. */
const once = (matches: (call: ProxiedCall) => boolean, fault: Fault): FaultPlan => {
  let done = false;
  return (call) => {
    if (done || !matches(call)) return undefined;
    done = true;
    return fault;
  };
};

/** The pet of an outcome that has one. */
const petOf = (outcome: KeyedCreateOutcome) => {
  if (outcome.kind === 'reused') throw new Error('expected a pet, got a reused key');
  return outcome.pet;
};

const count = async (tableName: string) =>
  (await tables.client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, Select: 'COUNT' }))).Count ?? 0;
/** The idempotency table's keys: records, and ids' reservations (`pet#<id>`). */
const idempotencyKeys = async () =>
  ((await tables.client.send(new ScanCommand({ TableName: tables.idempotency, ConsistentRead: true }))).Items ?? []).map((item) =>
    String(item.id),
  );
const counts = async () => {
  const keys = await idempotencyKeys();
  const reservations = keys.filter((key) => key.startsWith('pet#')).length;
  return { pets: await count(tables.pets), records: keys.length - reservations, reservations };
};
/** The layout of shared/ids.ts, read back: the bit that marks an id minted for a keyed create. */
const isKeyedId = (id: number) => Math.floor(id / 256) % 2 === 1;

const recordOf = async ({ recordKey }: IdempotentRequest) =>
  (await tables.client.send(new GetCommand({ TableName: tables.idempotency, Key: { id: recordKey }, ConsistentRead: true }))).Item;
const storedPet = async (tableName: string, id: number) =>
  (await tables.client.send(new GetCommand({ TableName: tableName, Key: { id }, ConsistentRead: true }))).Item;

describe('createOnce', () => {
  it('stores the record and the pet; the same request again replays that pet and stores nothing', async () => {
    const pets = repository();
    const before = await counts();
    const keyed = request();
    const first = await pets.createOnce(rex, keyed);
    expect(first.kind).toBe('created');
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1, reservations: before.reservations + 1 });

    const again = await pets.createOnce(rex, keyed);
    expect(again).toEqual({ kind: 'replayed', pet: petOf(first) });
    // The same fields in the same order: a replayed answer is the first one's bytes.
    expect(JSON.stringify(petOf(again))).toBe(JSON.stringify(petOf(first)));
    expect(await counts()).toMatchObject({ pets: before.pets + 1, records: before.records + 1 });
  });

  it('a replay after the pet changed writes nothing: the pet keeps the change, and the replay answers the recorded pet', async () => {
    const pets = repository();
    const keyed = request();
    const first = petOf(await pets.createOnce(rex, keyed));
    const before = await counts();
    // A later operation changes the pet (an order makes it pending, and records the order).
    const shard = String((await storedPet(tables.pets, first.id))?.[petsStatusIndex.partitionKey.name]);
    await tables.client.send(
      new UpdateCommand({
        TableName: tables.pets,
        Key: { id: first.id },
        UpdateExpression: 'SET #status = :pending, #shard = :shard, orderId = :order',
        ExpressionAttributeNames: { '#status': 'status', '#shard': petsStatusIndex.partitionKey.name },
        ExpressionAttributeValues: { ':pending': 'pending', ':shard': shard.replace(/^available#/, 'pending#'), ':order': 'order-1' },
      }),
    );
    const changed = await storedPet(tables.pets, first.id);

    expect(await pets.createOnce(rex, keyed)).toEqual({ kind: 'replayed', pet: first });
    expect(await storedPet(tables.pets, first.id)).toEqual(changed);
    expect(changed).toMatchObject({ status: 'pending', orderId: 'order-1' });
    expect(await counts()).toMatchObject({ pets: before.pets, records: before.records }); // no second pet
  });

  it("reserves its id first, for as long as its record, in the sweep's index; the id is in the keyed space", async () => {
    const keyed = request();
    const pet = petOf(await repository().createOnce(rex, keyed));
    const record = await recordOf(keyed);
    const reservation = (
      await tables.client.send(new GetCommand({ TableName: tables.idempotency, Key: { id: `pet#${pet.id}` }, ConsistentRead: true }))
    ).Item;
    expect(reservation).toEqual({ id: `pet#${pet.id}`, expiresAt: record?.expiresAt });
    expect(isKeyedId(pet.id)).toBe(true);
    expect(isKeyedId((await repository().create(rex)).id)).toBe(false);
  });

  it('records the pet it fixed, with the stored fields and an expiry a window ahead, and no TTL attribute', async () => {
    const keyed = request();
    const now = Math.floor(Date.now() / 1000);
    const pet = petOf(await repository().createOnce(rex, keyed));
    const record = await recordOf(keyed);
    const stored = await storedPet(tables.pets, pet.id);
    expect(record).toMatchObject({ requestHash: keyed.requestHash, petId: pet.id, ...rex, createdAt: stored?.createdAt });
    expect(record?.expiresAt).toBeGreaterThanOrEqual(now + IDEMPOTENCY_WINDOW_SECONDS);
    expect(record?.expiresAt).toBeLessThanOrEqual(now + IDEMPOTENCY_WINDOW_SECONDS + 5);
    expect(record).not.toHaveProperty('expiration');
  });

  it('refuses the same key with another request, storing nothing; the first request still replays', async () => {
    const pets = repository();
    const key = `key-${++keys}`;
    const first = await pets.createOnce(rex, request(rex, 'caller', key));
    const before = await counts();
    expect(await pets.createOnce({ ...rex, name: 'Max' }, request({ ...rex, name: 'Max' }, 'caller', key))).toEqual({ kind: 'reused' });
    // No pet and no record; the id it reserved before it met the record is left for the sweep.
    expect(await counts()).toEqual({ ...before, reservations: before.reservations + 1 });
    expect(await pets.createOnce(rex, request(rex, 'caller', key))).toEqual({ ...first, kind: 'replayed' });
  });

  it('keeps callers apart: another caller with the same key creates its own pet', async () => {
    const pets = repository();
    const key = `key-${++keys}`;
    const mine = await pets.createOnce(rex, request(rex, 'caller-1', key));
    const theirs = await pets.createOnce(rex, request(rex, 'caller-2', key));
    expect([mine.kind, theirs.kind]).toEqual(['created', 'created']);
    expect(petOf(mine).id).not.toBe(petOf(theirs).id);
  });

  it('treats an expired record as none, before the sweep has deleted it', async () => {
    const pets = repository();
    const keyed = request();
    const now = Math.floor(Date.now() / 1000);
    await tables.client.send(
      new PutCommand({
        TableName: tables.idempotency,
        Item: { id: keyed.recordKey, requestHash: 'another request', petId: 1, expiresAt: now - 1 },
      }),
    );
    const outcome = await pets.createOnce(rex, keyed);
    expect(outcome.kind).toBe('created');
    const record = await recordOf(keyed);
    expect(record?.requestHash).toBe(keyed.requestHash);
    expect(record?.petId).toBe(petOf(outcome).id);
    expect(record?.expiresAt).toBeGreaterThanOrEqual(now + IDEMPOTENCY_WINDOW_SECONDS);
  });

  it('concurrent duplicates: one creates, every other answers that pet, and one pet is stored', async () => {
    const pets = repository();
    const keyed = request();
    const before = await counts();
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => pets.createOnce(rex, keyed)));
    expect(outcomes.filter((outcome) => outcome.kind === 'created')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.kind === 'replayed')).toHaveLength(7);
    expect(new Set(outcomes.map((outcome) => petOf(outcome).id)).size).toBe(1);
    expect(await counts()).toMatchObject({ pets: before.pets + 1, records: before.records + 1 });
  });

  it('an id another pet holds: draws a new id, moves the record to it, and stores one pet', async () => {
    const taken = await repository().create(rex);
    const ids = [taken.id];
    const pets = repository({ newId: () => ids.shift() ?? newPetId() });
    const keyed = request();
    const before = await counts();
    const outcome = await pets.createOnce(rex, keyed);
    expect(outcome.kind).toBe('created');
    const { id } = petOf(outcome);
    expect(id).not.toBe(taken.id);
    expect(await repository().get(id)).toEqual({ ...rex, id });
    expect(await repository().get(taken.id)).toEqual({ ...rex, id: taken.id }); // the other pet, untouched
    expect((await recordOf(keyed))?.petId).toBe(id);
    expect(await counts()).toMatchObject({ pets: before.pets + 1, records: before.records + 1 });
    expect(await repository().createOnce(rex, keyed)).toEqual({ kind: 'replayed', pet: { ...rex, id } });
  });

  it('concurrent duplicates that meet a taken id: both answer the one pet under the one new id', async () => {
    const taken = await repository().create(rex);
    const ids = [taken.id];
    const pets = repository({ newId: () => ids.shift() ?? newPetId() });
    const keyed = request();
    const before = await counts();
    const outcomes = await Promise.all([pets.createOnce(rex, keyed), pets.createOnce(rex, keyed)]);
    const [first, second] = outcomes.map(petOf);
    expect(first?.id).not.toBe(taken.id);
    expect(second).toEqual(first);
    expect((await recordOf(keyed))?.petId).toBe(first?.id);
    expect(await counts()).toMatchObject({ pets: before.pets + 1, records: before.records + 1 });
  });

  it('the pet put whose answer was lost: 503-worthy, and the retry answers that pet, never a second', async () => {
    const keyed = request();
    const before = await counts();
    proxy.inject({ operation: 'PutItem', table: tables.pets, fault: 'lose-answer' });
    try {
      await expect(faultedRepository().createOnce(rex, keyed)).rejects.toBeInstanceOf(DatabaseUnavailable);
    } finally {
      proxy.recover();
    }
    expect(await counts()).toMatchObject({ pets: before.pets + 1, records: before.records + 1 });
    const retry = await repository().createOnce(rex, keyed);
    expect(retry.kind).toBe('replayed');
    expect(retry).toEqual({ kind: 'replayed', pet: { ...rex, id: (await recordOf(keyed))?.petId } });
    expect(await counts()).toMatchObject({ pets: before.pets + 1, records: before.records + 1 });
  });

  it("the record put whose first answer was lost: the SDK's retry finds its own record, and the create is a creation", async () => {
    const keyed = request();
    const before = await counts();
    proxy.plan(once((call) => isIdempotencyPut(call) && !isReservation(call), 'lose-answer'));
    try {
      expect((await faultedRepository().createOnce(rex, keyed)).kind).toBe('created');
    } finally {
      proxy.recover();
    }
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1, reservations: before.reservations + 1 });
  });

  it("the reservation put whose first answer was lost: the SDK's retry meets it, another id is reserved, and one pet is stored", async () => {
    const keyed = request();
    const before = await counts();
    proxy.plan(once((call) => isIdempotencyPut(call) && isReservation(call), 'lose-answer'));
    try {
      expect((await faultedRepository().createOnce(rex, keyed)).kind).toBe('created');
    } finally {
      proxy.recover();
    }
    // The first reservation stays, held by no record, until the sweep.
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1, reservations: before.reservations + 2 });
  });

  it('a failure between the record and the pet: the record alone, no pet under its id; the retry stores that pet, once', async () => {
    const keyed = request();
    const before = await counts();
    // Every attempt at the pet fails, as a function that stopped after the record would.
    proxy.inject({ operation: 'PutItem', table: tables.pets, fault: 'internal-error' });
    try {
      await expect(faultedRepository().createOnce(rex, keyed)).rejects.toBeInstanceOf(DatabaseUnavailable);
    } finally {
      proxy.recover();
    }
    const petId = Number((await recordOf(keyed))?.petId);
    expect(await counts()).toMatchObject({ pets: before.pets, records: before.records + 1 });
    expect(await repository().get(petId)).toBeUndefined(); // GET /pets/{id} is 404 until the retry

    const retry = await repository().createOnce(rex, keyed);
    expect(retry).toEqual({ kind: 'replayed', pet: { ...rex, id: petId } });
    expect(await repository().get(petId)).toEqual({ ...rex, id: petId });
    expect(await repository().createOnce(rex, keyed)).toEqual(retry);
    expect(await counts()).toMatchObject({ pets: before.pets + 1, records: before.records + 1 });
  });

  it('a replicated write conflict on the idempotency table is tried again: the create goes through', async () => {
    const keyed = request();
    proxy.resetCalls();
    // Two conflicts on the id's reservation: the first call's SDK retry meets the second, the
    // repository's next call goes through; then the record's put.
    proxy.inject({
      operation: 'PutItem',
      table: tables.idempotency,
      fault: 'refuse',
      errorType: 'ReplicatedWriteConflictException',
      times: 2,
    });
    try {
      expect((await faultedRepository().createOnce(rex, keyed)).kind).toBe('created');
    } finally {
      proxy.recover();
    }
    expect(proxy.calls({ operation: 'PutItem', table: tables.idempotency })).toBe(4);
  });

  it('replicated write conflicts that persist: DatabaseUnavailable (503) after a bounded number of calls, and nothing stored', async () => {
    const keyed = request();
    const before = await counts();
    proxy.resetCalls();
    proxy.inject({ operation: 'PutItem', table: tables.idempotency, fault: 'refuse', errorType: 'ReplicatedWriteConflictException' });
    try {
      await expect(faultedRepository().createOnce(rex, keyed)).rejects.toBeInstanceOf(DatabaseUnavailable);
    } finally {
      proxy.recover();
    }
    // Each call is tried twice by the SDK (shared/dynamodb.ts).
    expect(proxy.calls({ operation: 'PutItem', table: tables.idempotency })).toBe(REPLICATED_WRITE_ATTEMPTS * 2);
    expect(await counts()).toEqual(before);
  });
});

describe('creates that find no free id', () => {
  const post = (key?: string) =>
    apiEvent({
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
  /** The create function with a repository that always draws `id`, and gives up after two tries. */
  const drawingOnly = (id: number) => createHandler({ pets: repository({ newId: () => id, maxIdAttempts: 2 }) });

  const expectUnavailable = (response: APIGatewayProxyResult) => {
    expect(response.statusCode).toBe(503);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'service_unavailable' });
    expect(response.headers?.['Retry-After']).toBe('1');
  };

  it('a keyed create whose every draw is reserved by another: 503 with Retry-After, and no record', async () => {
    const id = newPetId({ kind: 'keyed' });
    await repository({ newId: () => id }).createOnce(rex, request());
    const before = await counts();
    expectUnavailable(await drawingOnly(id)(post(`"${randomUUID()}"`), context));
    expect(await counts()).toEqual(before);
  });

  it('a keyed create whose every draw another pet holds: 503 with Retry-After, and no pet', async () => {
    const taken = await repository().create(rex);
    const before = await counts();
    expectUnavailable(await drawingOnly(taken.id)(post(`"${randomUUID()}"`), context));
    expect((await counts()).pets).toBe(before.pets);
  });

  it('a create without a key whose every draw another pet holds: 503 with Retry-After, and no pet', async () => {
    const taken = await repository().create(rex);
    const before = await counts();
    expectUnavailable(await drawingOnly(taken.id)(post(), context));
    expect(await counts()).toEqual(before);
  });
});

describe('createOnce across regions: one strongly consistent idempotency table, a pets table in each region', () => {
  let other: TestTables;
  beforeAll(async () => {
    other = await createTestTables();
  });

  /** The region's repository: its own pets table and ids, the idempotency table every region shares. */
  const inRegion = (region: number, petsTable: string) => repository({ tableName: petsTable, newId: (kind) => newPetId({ region, kind }) });

  it('a retry in another region answers the first region’s pet, and puts the identical item in its own table', async () => {
    const keyed = request();
    const before = await count(other.pets);
    const first = petOf(await inRegion(0, tables.pets).createOnce(rex, keyed));
    const retry = await inRegion(1, other.pets).createOnce(rex, keyed);
    expect(retry).toEqual({ kind: 'replayed', pet: first });
    // The very item, createdAt and status shard included: the replica's copy, replicated or not yet.
    expect(await storedPet(other.pets, first.id)).toEqual(await storedPet(tables.pets, first.id));
    expect(await count(other.pets)).toBe(before + 1);
  });

  it('the same key in two regions at once: one pet id, and each region stores that one pet', async () => {
    const keyed = request({ ...rex, name: 'Both' });
    const both = { ...rex, name: 'Both' };
    const outcomes = await Promise.all([inRegion(0, tables.pets).createOnce(both, keyed), inRegion(2, other.pets).createOnce(both, keyed)]);
    const [a, b] = outcomes.map(petOf);
    expect(b).toEqual(a);
    expect(outcomes.map((outcome) => outcome.kind).sort()).toEqual(['created', 'replayed']);
    expect(await storedPet(other.pets, Number(a?.id))).toEqual(await storedPet(tables.pets, Number(a?.id)));
  });

  /** Mints `first` once, then fresh ids of the region. */
  const forcedFirst = (region: number, first: number): IdGenerator => {
    const ids = [first];
    return (kind) => ids.shift() ?? newPetId({ region, kind });
  };

  /** Last writer wins: the replica's item for `id`, copied over the other region's, as replication would. */
  const replicate = async (from: string, to: string, id: number) => {
    const item = await storedPet(from, id);
    if (item) await tables.client.send(new PutCommand({ TableName: to, Item: item }));
  };

  it('a retry in another region never takes an id another create of the first region holds: two creates, two pets', async () => {
    const max = { ...rex, name: 'Max' };
    const id = newPetId({ region: 0, kind: 'keyed' });
    const first = request();
    // Region A records the first create under `id`, and its pet's put fails.
    proxy.inject({ operation: 'PutItem', table: tables.pets, fault: 'internal-error' });
    try {
      await expect(faultedRepository({ newId: forcedFirst(0, id) }).createOnce(rex, first)).rejects.toBeInstanceOf(DatabaseUnavailable);
    } finally {
      proxy.recover();
    }
    // Another client's create in region A draws the same id.
    const theirs = petOf(await repository({ newId: forcedFirst(0, id) }).createOnce(max, request(max, 'caller-hash-b')));
    // The first client retries in region B.
    const retry = petOf(await inRegion(1, other.pets).createOnce(rex, first));
    expect(retry.id).not.toBe(theirs.id);
    await replicate(other.pets, tables.pets, retry.id);
    await replicate(tables.pets, other.pets, theirs.id);
    // Each client's 201 names its own pet, in both regions.
    for (const pets of [tables.pets, other.pets]) {
      expect(await repository({ tableName: pets }).get(theirs.id)).toEqual(theirs);
      expect(await repository({ tableName: pets }).get(retry.id)).toEqual(retry);
    }
  });

  it('a duplicate in another region while the first try meets a taken id: one pet for the key, never two', async () => {
    const max = { ...rex, name: 'Max' };
    const id = newPetId({ region: 0, kind: 'keyed' });
    const keyed = request();
    // The first try's pet put in region A waits until the test lets it go.
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    let reached = () => {};
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    const gated = functionsClient(tables.endpoint);
    gated.middlewareStack.add(
      (next, { commandName }) =>
        async (args) => {
          if (commandName === 'PutItemCommand' && (args.input as { TableName?: string }).TableName === tables.pets) {
            reached();
            await gate;
          }
          return next(args);
        },
      { step: 'initialize', name: 'gate' },
    );
    const firstTry = repository({ client: gated, newId: forcedFirst(0, id) }).createOnce(rex, keyed);
    await atGate;
    // Another client's create in region A draws the same id; the duplicate reaches region B.
    const theirs = petOf(await repository({ newId: forcedFirst(0, id) }).createOnce(max, request(max, 'caller-hash-b')));
    const duplicate = petOf(await inRegion(1, other.pets).createOnce(rex, keyed));
    release();
    const first = petOf(await firstTry);
    expect(duplicate).toEqual(first);
    expect(theirs.id).not.toBe(first.id);
  });
});
