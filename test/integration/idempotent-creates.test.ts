/**
 * Keyed creates against DynamoDB Local: the pet and its idempotency record are written in one
 * transaction, so a retry finds both or neither. Replays, a reused key, another caller, an
 * expired record, concurrent duplicates, an id collision and a lost answer.
 */
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient, DatabaseUnavailable } from '../../shared/dynamodb';
import { idempotentRequest, IDEMPOTENCY_WINDOW_SECONDS } from '../../shared/idempotency';
import { newPetId } from '../../shared/ids';
import type { NewPet } from '../../shared/models';
import { petsRepository, type KeyedCreateOutcome, type PetsRepositoryOptions } from '../../shared/pets-repository';
import { createTestTables, type TestTables } from '../support/tables';

let tables: TestTables;
beforeAll(async () => {
  tables = await createTestTables();
});

const rex: NewPet = { name: 'Rex', categoryId: 1, status: 'available' };
let keys = 0;
/** A fresh (caller, Idempotency-Key) pair for each test. */
const request = (newPet: NewPet = rex, caller = 'caller-hash-a', key = `key-${++keys}`) => idempotentRequest(caller, key, newPet);

const repository = (options: Partial<PetsRepositoryOptions> = {}) =>
  petsRepository({ client: tables.client, tableName: tables.pets, idempotencyTableName: tables.idempotency, ...options });

/** The pet of an outcome that has one. */
const petOf = (outcome: KeyedCreateOutcome) => {
  if (outcome.kind === 'reused') throw new Error('expected a pet, got a reused key');
  return outcome.pet;
};

const count = async (tableName: string) =>
  (await tables.client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, Select: 'COUNT' }))).Count ?? 0;
const counts = async () => ({ pets: await count(tables.pets), records: await count(tables.idempotency) });

describe('createOnce', () => {
  it('stores the pet and its record together; the same request again replays that pet and stores nothing', async () => {
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

  it('treats an expired record as none, before TTL has deleted it', async () => {
    const pets = repository();
    const keyed = request();
    const now = Math.floor(Date.now() / 1000);
    await tables.client.send(
      new PutCommand({
        TableName: tables.idempotency,
        Item: { id: keyed.recordKey, requestHash: 'another request', petId: 1, expiration: now - 1 },
      }),
    );
    const outcome = await pets.createOnce(rex, keyed);
    expect(outcome.kind).toBe('created');
    const { Items = [] } = await tables.client.send(new ScanCommand({ TableName: tables.idempotency, ConsistentRead: true }));
    const record = Items.find((item) => item.id === keyed.recordKey);
    expect(record?.requestHash).toBe(keyed.requestHash);
    expect(record?.expiration).toBeGreaterThanOrEqual(now + IDEMPOTENCY_WINDOW_SECONDS);
  });

  it('concurrent duplicates: one creates, every other replays that pet, and one pet is stored', async () => {
    const pets = repository();
    const keyed = request();
    const before = await counts();
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => pets.createOnce(rex, keyed)));
    expect(outcomes.filter((outcome) => outcome.kind === 'created')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.kind === 'replayed')).toHaveLength(7);
    expect(new Set(outcomes.map((outcome) => petOf(outcome).id)).size).toBe(1);
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1 });
  });

  it('draws a new id when the first one is taken, and records the pet it stored', async () => {
    const taken = await repository().create(rex);
    const ids = [taken.id];
    const pets = repository({ newId: () => ids.shift() ?? newPetId() });
    const keyed = request();
    const outcome = await pets.createOnce(rex, keyed);
    expect(outcome.kind).toBe('created');
    const { id } = petOf(outcome);
    expect(id).not.toBe(taken.id);
    expect(await repository().get(id)).toEqual({ ...rex, id });
    expect(await repository().createOnce(rex, keyed)).toEqual({ kind: 'replayed', pet: { ...rex, id } });
  });

  it('a transaction applied whose answer was lost: 503-worthy, and the retry replays that pet, never a second', async () => {
    const client = createDocumentClient({ endpoint: tables.endpoint });
    client.middlewareStack.add(
      (next) => async (args) => {
        await next(args);
        throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError', $metadata: {} });
      },
      { step: 'initialize', name: 'loseTheAnswer' },
    );
    const keyed = request();
    const before = await counts();
    await expect(repository({ client }).createOnce(rex, keyed)).rejects.toBeInstanceOf(DatabaseUnavailable);
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1 });
    const retry = await repository().createOnce(rex, keyed);
    expect(retry.kind).toBe('replayed');
    expect(await counts()).toEqual({ pets: before.pets + 1, records: before.records + 1 });
  });

  it('a transaction that met a concurrent one on the same record is tried again', async () => {
    const client = createDocumentClient({ endpoint: tables.endpoint });
    let conflicts = 2;
    client.middlewareStack.add(
      (next) => async (args) => {
        if (conflicts-- <= 0) return next(args);
        throw Object.assign(new Error('Transaction cancelled'), {
          name: 'TransactionCanceledException',
          $metadata: {},
          CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
        });
      },
      { step: 'initialize', name: 'conflict' },
    );
    expect((await repository({ client }).createOnce(rex, request())).kind).toBe('created');
  });

  it('a throttled transaction is the database being unavailable', async () => {
    const client = createDocumentClient({ endpoint: tables.endpoint });
    client.middlewareStack.add(
      () => async () => {
        throw Object.assign(new Error('Transaction cancelled'), {
          name: 'TransactionCanceledException',
          $metadata: {},
          CancellationReasons: [{ Code: 'None' }, { Code: 'ThrottlingError' }],
        });
      },
      { step: 'initialize', name: 'throttle' },
    );
    await expect(repository({ client }).createOnce(rex, request())).rejects.toBeInstanceOf(DatabaseUnavailable);
  });
});
