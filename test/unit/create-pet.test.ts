/**
 * What createPet's answers count, as the stack's metric filters read its access lines: `Requests`
 * for each, `PetsCreated` for a new pet, `IdempotentReplays` for a replayed answer, `Errors` by
 * code for a refused request. The repository is a stand-in: the data path is covered against
 * DynamoDB Local elsewhere.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHandler } from '../../functions/create-pet';
import type { Pet } from '../../shared/models';
import type { KeyedCreateOutcome, PetWrites } from '../../shared/pets-repository';
import { routeOf } from '../../shared/routes';
import { captureAccessLines, countedFrom } from '../support/access-lines';
import { apiEvent, context } from '../support/events';
import { stubOf } from '../support/stubs';

const REX: Pet = { id: 7, name: 'Rex', categoryId: 1, status: 'available' };
const route = routeOf('createPet');

/** A repository whose keyed creates end with `keyed`; unkeyed creates store REX. */
const repository = (keyed: KeyedCreateOutcome): PetWrites => stubOf<PetWrites>({ create: async () => REX, createOnce: async () => keyed });

const create = (pets: PetWrites, idempotencyKey?: string) =>
  createHandler({ pets })(
    apiEvent({
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}) },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    }),
    context,
  );

let capture: ReturnType<typeof captureAccessLines> | undefined;
afterEach(() => {
  capture?.stop();
  capture = undefined;
  vi.unstubAllEnvs();
});

/** The metrics the answers so far count, by name. */
const counted = () => countedFrom(route, capture?.lines() ?? []).map(({ metricName }) => metricName);

describe("createPet's metrics, from its access lines", () => {
  it('counts a new pet as PetsCreated, and the request, by service and operation', async () => {
    capture = captureAccessLines();
    const pets = repository({ kind: 'created', pet: REX });
    expect((await create(pets)).statusCode).toBe(201);
    expect((await create(pets, '"key-1"')).statusCode).toBe(201);
    expect(counted()).toEqual(['Requests', 'PetsCreated', 'Requests', 'PetsCreated']);
    expect(countedFrom(route, capture.lines())[0]?.dimensions).toEqual({ service: 'pet-store', operation: 'createPet' });
  });

  it('counts a replayed answer as IdempotentReplays, not as a new pet', async () => {
    capture = captureAccessLines();
    const response = await create(repository({ kind: 'replayed', pet: REX }), '"key-1"');
    expect(response.headers).toMatchObject({ 'Idempotent-Replayed': 'true' });
    expect(counted()).toEqual(['Requests', 'IdempotentReplays']);
  });

  it('counts neither for a key reused with another body: the request, and its error by the code the client got', async () => {
    capture = captureAccessLines();
    expect((await create(repository({ kind: 'reused' }), '"key-1"')).statusCode).toBe(422);
    expect(countedFrom(route, capture.lines())).toEqual([
      { metricName: 'Requests', dimensions: { service: 'pet-store', operation: 'createPet' } },
      { metricName: 'Errors', dimensions: { service: 'pet-store', operation: 'createPet', errorCode: 'idempotency_key_reused' } },
    ]);
  });

  it('writes its access line and no line of metrics, with metrics switched on as deployed', async () => {
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'false');
    capture = captureAccessLines();
    expect((await create(repository({ kind: 'replayed', pet: REX }), '"key-1"')).statusCode).toBe(201);
    expect((await create(repository({ kind: 'created', pet: REX }))).statusCode).toBe(201);
    expect(capture.all()).toEqual(capture.lines());
    expect(capture.lines()).toHaveLength(2);
  });
});
