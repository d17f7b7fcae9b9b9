/**
 * Keyed creates against DynamoDB Local: the idempotency record first, which fixes the pet, then
 * the pet; no transaction. Replays, a reused key, another caller, an expired record, concurrent
 * duplicates, id collisions, lost answers, a failure between the two writes, replicated write
 * conflicts, and two regions sharing one strongly consistent idempotency table.
 */
import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient, DatabaseUnavailable, REPLICATED_WRITE_ATTEMPTS } from '../../shared/dynamodb';
import { idempotentRequest, IDEMPOTENCY_WINDOW_SECONDS, type IdempotentRequest } from '../../shared/idempotency';
import { newPetId } from '../../shared/ids';
import type { NewPet } from '../../shared/models';
import { petsRepository, type KeyedCreateOutcome, type PetsRepositoryOptions } from '../../shared/pets-repository';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
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

/** A repository whose calls go through the fault proxy (a client of its own, with the API's settings). */
const faultedRepository = (options: Partial<PetsRepositoryOptions> = {}) =>
  repository({ client: createDocumentClient({ endpoint: proxy.endpoint }), ...options });

/** The pet of an outcome that has one. */
const petOf = (outcome: KeyedCreateOutcome) => {
  if (outcome.kind === 'reused') throw new Error('expected a pet, got a reused key');
  return outcome.pet;
};

const count = async (tableName: string) =>
  (await tables.client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, Select: 'COUNT' }))).Count ?? 0;
const counts = async () => ({ pets: await count(tables.pets), records: await count(tables.idempotency) });

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
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1 });

    const again = await pets.createOnce(rex, keyed);
    expect(again).toEqual({ kind: 'replayed', pet: petOf(first) });
    // The same fields in the same order: a replayed answer is the first one's bytes.
    expect(JSON.stringify(petOf(again))).toBe(JSON.stringify(petOf(first)));
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1 });
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
    expect(await counts()).toEqual(before);
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
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1 });
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
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1 });
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
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1 });
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
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1 });
    const retry = await repository().createOnce(rex, keyed);
    expect(retry.kind).toBe('replayed');
    expect(retry).toEqual({ kind: 'replayed', pet: { ...rex, id: (await recordOf(keyed))?.petId } });
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1 });
  });

  it("the record put whose first answer was lost: the SDK's retry finds its own record, and the create is a creation", async () => {
    const keyed = request();
    const before = await counts();
    proxy.inject({ operation: 'PutItem', table: tables.idempotency, fault: 'lose-answer', times: 1 });
    try {
      expect((await faultedRepository().createOnce(rex, keyed)).kind).toBe('created');
    } finally {
      proxy.recover();
    }
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1 });
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
    expect(await counts()).toEqual({ pets: before.pets, records: before.records + 1 });
    expect(await repository().get(petId)).toBeUndefined(); // GET /pets/{id} is 404 until the retry

    const retry = await repository().createOnce(rex, keyed);
    expect(retry).toEqual({ kind: 'replayed', pet: { ...rex, id: petId } });
    expect(await repository().get(petId)).toEqual({ ...rex, id: petId });
    expect(await repository().createOnce(rex, keyed)).toEqual(retry);
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1 });
  });

  it('a replicated write conflict on the record is tried again: the create goes through', async () => {
    const keyed = request();
    proxy.resetCalls();
    // Two conflicts: the first call's SDK retry meets the second, the repository's next call goes through.
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
    expect(proxy.calls({ operation: 'PutItem', table: tables.idempotency })).toBe(3);
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

describe('createOnce across regions: one strongly consistent idempotency table, a pets table in each region', () => {
  let other: TestTables;
  beforeAll(async () => {
    other = await createTestTables();
  });

  /** The region's repository: its own pets table and ids, the idempotency table every region shares. */
  const inRegion = (region: number, petsTable: string) => repository({ tableName: petsTable, newId: () => newPetId({ region }) });

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
});
