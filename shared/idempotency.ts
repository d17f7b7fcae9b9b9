/**
 * Idempotent creates (Powertools idempotency, DynamoDB persistence). A keyed create runs once per
 * (caller, Idempotency-Key) for 24 hours: a retry with the same pet gets the first answer's pet,
 * one with another pet is refused, one while the first still runs is told to wait. Powertools'
 * errors become the API's: 422, 409, or 503 when its database calls fail.
 *
 * `makeIdempotent` wraps the create, not the whole handler (`makeHandlerIdempotent`): the
 * middleware's onError deletes the record whenever the request fails, even when it failed because
 * another request holds the record, and its early return skips the other middlewares' `after`.
 */
import { createHash } from 'node:crypto';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import { ApiError } from './errors';
import { classifyDatabaseError, DatabaseUnavailable } from './dynamodb';
import { idClaims } from './idempotency-claims';
import { Pet, type NewPet } from './models';
import type { PetsRepository } from './pets-repository';

/** How long a key is remembered (the draft suggests at least 24 hours). */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;

export interface KeyedCreate {
  /** The caller's key id: keys are scoped to the caller. */
  readonly caller: string;
  /** The Idempotency-Key the caller sent. */
  readonly key: string;
  readonly newPet: NewPet;
}

export interface CreateOutcome {
  readonly pet: Pet;
  /** True when this is the stored answer of an earlier request with the same key. */
  readonly replayed: boolean;
}

export interface IdempotentCreates {
  create(request: KeyedCreate, context: Context): Promise<CreateOutcome>;
}

export interface IdempotentCreatesOptions {
  readonly pets: PetsRepository;
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
}

/** Identifies (caller, key) without storing either: the records' key and the pet's write id. */
export const writeIdOf = (caller: string, key: string): string =>
  createHash('sha256').update(`${caller}\n${key}`).digest('hex');

interface Payload {
  readonly scope: string;
  readonly newPet: NewPet;
}

/** Powertools' errors (matched by name, so other bundles need not import them) as the API's. */
export const classifyIdempotencyError = (error: unknown): unknown => {
  if (!(error instanceof Error)) return error;
  switch (error.name) {
    case 'IdempotencyValidationError':
    // After a lost answer Powertools has forgotten the key, but the pet it stored has not.
    case 'WriteIdReused':
      return new ApiError('idempotency_key_reused');
    case 'IdempotencyAlreadyInProgressError':
      return new ApiError('idempotency_in_progress');
    case 'IdempotencyInconsistentStateError':
      return new DatabaseUnavailable('idempotency record changed meanwhile');
    case 'IdempotencyPersistenceLayerError': {
      const cause = classifyDatabaseError(error.cause);
      return cause instanceof DatabaseUnavailable ? cause : error;
    }
    default:
      return classifyDatabaseError(error);
  }
};

export const idempotentCreates = ({ pets, client, tableName }: IdempotentCreatesOptions): IdempotentCreates => {
  const claims = idClaims({ client, tableName, ttlSeconds: IDEMPOTENCY_WINDOW_SECONDS });
  const persistenceStore = new DynamoDBPersistenceLayer({ tableName, awsSdkV3Client: client });
  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'scope',
    payloadValidationJmesPath: 'newPet',
    throwOnNoIdempotencyKey: true,
    expiresAfterSeconds: IDEMPOTENCY_WINDOW_SECONDS,
    // DynamoDB keeps the stored answer as a map, which does not keep key order: the Pet model
    // puts the fields back in the order of the first answer (and checks what storage returned).
    responseHook: (stored) => ({ pet: Pet.parse((stored as { pet?: unknown } | null)?.pet), replayed: true }),
  });
  const createOnce = makeIdempotent(
    async ({ scope, newPet }: Payload, _context: Context): Promise<CreateOutcome> => ({
      pet: await pets.create(newPet, claims(scope)),
      replayed: false,
    }),
    // The Lambda context as second argument sets how long an in-progress record blocks retries.
    { persistenceStore, config, keyPrefix: 'createPet' },
  );
  return {
    create: async ({ caller, key, newPet }, context) => {
      try {
        return (await createOnce({ scope: writeIdOf(caller, key), newPet }, context)) as CreateOutcome;
      } catch (error) {
        throw classifyIdempotencyError(error);
      }
    },
  };
};
