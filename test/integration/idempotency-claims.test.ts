/**
 * Keyed creates against DynamoDB Local: the claim keeps one pet id for one (caller, key) across
 * requests, moves off an id another pet holds, and an expired claim is claimed afresh.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { idClaims } from '../../shared/idempotency-claims';
import { classifyIdempotencyError, writeIdOf } from '../../shared/idempotency';
import { ApiError } from '../../shared/errors';
import { DatabaseUnavailable } from '../../shared/dynamodb';
import { petsRepository } from '../../shared/pets-repository';
import { createTestTables, type TestTables } from '../support/tables';

let tables: TestTables;
beforeAll(async () => {
  tables = await createTestTables();
});

const rex = { name: 'Rex', categoryId: 1, status: 'available' as const };

describe('id claims', () => {
  it('a second create with the same write id finds the first one\'s pet instead of storing another', async () => {
    const claims = idClaims({ client: tables.client, tableName: tables.idempotency, ttlSeconds: 60 });
    let next = 1_000;
    const pets = petsRepository({ client: tables.client, tableName: tables.pets, newId: () => next++ });
    const writeId = writeIdOf('caller-a', 'key-1');
    const first = await pets.create(rex, claims(writeId));
    const again = await pets.create(rex, claims(writeId));
    expect(again).toEqual(first);
    // Another caller with the same key is another create.
    const other = await pets.create(rex, claims(writeIdOf('caller-b', 'key-1')));
    expect(other.id).not.toBe(first.id);
  });

  it('moves the claim off an id another pet holds, and later attempts use the new id', async () => {
    const claims = idClaims({ client: tables.client, tableName: tables.idempotency, ttlSeconds: 60 });
    await tables.client.send(new PutCommand({ TableName: tables.pets, Item: { id: 5_000, ...rex, writeId: 'someone else' } }));
    const ids = [5_000, 5_001, 5_002];
    const pets = petsRepository({ client: tables.client, tableName: tables.pets, newId: () => ids.shift() ?? 9_999 });
    const writeId = writeIdOf('caller-a', 'key-2');
    const pet = await pets.create(rex, claims(writeId));
    expect(pet.id).toBe(5_001);
    expect(await pets.create(rex, claims(writeId))).toEqual(pet);
    const { Item } = await tables.client.send(new GetCommand({ TableName: tables.idempotency, Key: { id: `pet-claim#${writeId}` } }));
    expect(Item).toMatchObject({ petId: 5_001 });
  });

  it('an expired claim (TTL deletes lazily) is claimed afresh', async () => {
    const writeId = writeIdOf('caller-a', 'key-3');
    await tables.client.send(
      new PutCommand({ TableName: tables.idempotency, Item: { id: `pet-claim#${writeId}`, petId: 7_000, expiration: 1 } }),
    );
    const claims = idClaims({ client: tables.client, tableName: tables.idempotency, ttlSeconds: 60 });
    expect(await claims(writeId).claimId(7_100)).toBe(7_100);
  });
});

describe('Powertools errors as the API answers them', () => {
  const named = (name: string, cause?: unknown) => Object.assign(new Error(name, { cause }), { name });
  it.each([
    ['IdempotencyValidationError', 'idempotency_key_reused'],
    ['IdempotencyAlreadyInProgressError', 'idempotency_in_progress'],
  ])('%s is %s', (name, code) => {
    expect(classifyIdempotencyError(named(name))).toEqual(new ApiError(code as 'idempotency_key_reused'));
  });

  it('a persistence error caused by a database fault, or an inconsistent record, is DatabaseUnavailable (503)', () => {
    const throttled = Object.assign(new Error('slow down'), { name: 'ThrottlingException', $metadata: {} });
    expect(classifyIdempotencyError(named('IdempotencyPersistenceLayerError', throttled))).toBeInstanceOf(DatabaseUnavailable);
    expect(classifyIdempotencyError(named('IdempotencyInconsistentStateError'))).toBeInstanceOf(DatabaseUnavailable);
  });

  it('a persistence error with another cause stays unexpected (500)', () => {
    const missing = Object.assign(new Error('no table'), { name: 'ResourceNotFoundException', $metadata: {} });
    const error = named('IdempotencyPersistenceLayerError', missing);
    expect(classifyIdempotencyError(error)).toBe(error);
  });
});
