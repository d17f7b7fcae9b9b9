/**
 * createPet counts what it did where it did it: `PetsCreated` for a new pet, `IdempotentReplays`
 * for a replayed answer, neither for a refused request; nothing at all with metrics switched off.
 * The repository is a stand-in: the data path is covered against DynamoDB Local elsewhere.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHandler } from '../../functions/create-pet';
import type { Pet } from '../../shared/models';
import type { KeyedCreateOutcome, PetsRepository } from '../../shared/pets-repository';
import { captureEmf } from '../support/emf';
import { apiEvent, context } from '../support/events';
import { stubOf } from '../support/stubs';

const saved = process.env.POWERTOOLS_METRICS_DISABLED;
afterEach(() => {
  process.env.POWERTOOLS_METRICS_DISABLED = saved;
  vi.restoreAllMocks();
});

const REX: Pet = { id: 7, name: 'Rex', categoryId: 1, status: 'available' };

/** A repository whose keyed creates end with `keyed`; unkeyed creates store REX. */
const repository = (keyed: KeyedCreateOutcome): PetsRepository =>
  stubOf<PetsRepository>({ create: async () => REX, createOnce: async () => keyed });

const create = (pets: PetsRepository, idempotencyKey?: string) =>
  createHandler({ pets })(
    apiEvent({
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}) },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    }),
    context,
  );

const counted = (name: string, value: number = 1) => ({
  namespace: 'PetStore',
  dimensions: [['service', 'operation']],
  names: [name],
  values: { service: 'pet-store', operation: 'createPet', [name]: value },
});

describe('createPet metrics', () => {
  it('counts a new pet as PetsCreated, and the request', async () => {
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    const pets = repository({ kind: 'created', pet: REX });
    const written = captureEmf();
    expect((await create(pets)).statusCode).toBe(201);
    expect((await create(pets, '"key-1"')).statusCode).toBe(201);
    expect(written()).toEqual([counted('PetsCreated'), counted('Requests'), counted('PetsCreated'), counted('Requests')]);
  });

  it('counts a replayed answer as IdempotentReplays, not as a new pet', async () => {
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    const written = captureEmf();
    const response = await create(repository({ kind: 'replayed', pet: REX }), '"key-1"');
    expect(response.headers).toMatchObject({ 'Idempotent-Replayed': 'true' });
    expect(written()).toEqual([counted('IdempotentReplays'), counted('Requests')]);
  });

  it('counts neither for a key reused with another body: only the request and its error', async () => {
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    const written = captureEmf();
    expect((await create(repository({ kind: 'reused' }), '"key-1"')).statusCode).toBe(422);
    expect(written().map(({ names }) => names)).toEqual([['Requests'], ['Errors']]);
  });

  it('writes no metric at all when metrics are switched off', async () => {
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
    const written = captureEmf();
    expect((await create(repository({ kind: 'replayed', pet: REX }), '"key-1"')).statusCode).toBe(201);
    expect((await create(repository({ kind: 'created', pet: REX }))).statusCode).toBe(201);
    expect(written()).toEqual([]);
  });
});
