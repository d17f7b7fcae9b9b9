/**
 * The pets repository: the only modules that know how pets are stored in DynamoDB. The writes are
 * here (a create, a keyed create); the reads in shared/pet-reads.ts, apart, so that each
 * operation's bundle holds what it does and no more. `petsRepository` is both, for the local
 * server and the tests.
 */
import { randomUUID } from 'node:crypto';
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { dynamoDBOptions, idempotencyTableName as defaultIdempotencyTableName, petsTableName, statusShardCount } from './config';
import { callDatabase, callReplicated, createDocumentClient, DatabaseUnavailable, isConditionFailure } from './dynamodb';
import { idReservationKey, IDEMPOTENCY_WINDOW_SECONDS, type IdempotentRequest } from './idempotency';
import { petIdGenerator, type IdGenerator } from './ids';
import type { NewPet, Pet, PetStatus } from './models';
import { petReads, statusShardOf, type PetReads } from './pet-reads';
import { petsStatusIndex } from './tables';

export { statusShardOf, type ListPetsInput, type PetsPage } from './pet-reads';

/** What a keyed create did: stored its pet, found its own earlier one, or found the key used by another request. */
export type KeyedCreateOutcome = { readonly kind: 'created' | 'replayed'; readonly pet: Pet } | { readonly kind: 'reused' };

export interface PetWrites {
  create(newPet: NewPet): Promise<Pet>;
  /**
   * Reserves a keyed pet id, then puts the idempotency record, which fixes the pet's id and fields,
   * then the pet, unless a live record for the same key exists: then the same request gets that
   * record's pet (and stores it only where no item holds its id yet: a replay never overwrites the
   * pet, so never undoes a later change to it), another request `reused`. No transaction:
   * shared/idempotency.ts says why.
   */
  createOnce(newPet: NewPet, request: IdempotentRequest): Promise<KeyedCreateOutcome>;
}

/** Pets, read and written. */
export type PetsRepository = PetReads & PetWrites;

export interface PetsRepositoryOptions {
  readonly client?: DynamoDBDocumentClient;
  readonly tableName?: string;
  /** The idempotency table, for keyed creates. @default from the environment, read on first use */
  readonly idempotencyTableName?: string;
  /** Mints a pet's id, of the kind asked. @default ids of the region the environment's REGION_INDEX names */
  readonly newId?: IdGenerator;
  /**
   * Conditional writes tried before giving up on finding a free id (keyed: reservations of an id,
   * and claims of a record that went); then DatabaseUnavailable.
   */
  readonly maxIdAttempts?: number;
  /** Marks each write, so that a write the SDK retried can recognise itself. */
  readonly newWriteId?: () => string;
  /** The status index's shards (docs/operations.md, Status index shards). @default from the environment */
  readonly statusShards?: number;
}

/** Gives up on a create after this many id collisions in a row (practically never more than one): 503, worth a retry. */
export const MAX_ID_ATTEMPTS = 5;

/** No free id (or no kept record) in `maxIdAttempts` tries: a retry later draws afresh. */
const exhausted = (what: string) => new DatabaseUnavailable(what);

type StoredItem = Record<string, { S?: string; N?: string } | undefined>;

/** Whether a stored item (as DynamoDB returns it on a failed condition) holds this pet. */
const sameFields = (item: StoredItem, pet: Pet): boolean =>
  item.name?.S === pet.name && Number(item.categoryId?.N) === pet.categoryId && item.status?.S === pet.status;

const petOf = (id: number, newPet: NewPet): Pet => ({
  id,
  name: newPet.name,
  categoryId: newPet.categoryId,
  status: newPet.status,
});

/** The pet an idempotency record fixed, and the record's own attributes. */
interface RecordedPet {
  readonly pet: Pet;
  /** The pet's `createdAt`, stored with it: a replay puts the very item the first try put. */
  readonly createdAt: string;
  /** Epoch seconds after which the record counts as none. */
  readonly expiresAt: number;
  /** This write's own id: the SDK's retry of a put whose answer was lost recognises its record. */
  readonly writeId: string;
}

/** What step 1 of a keyed create found: its record put, the same request's record, or the key used by another request. */
type RecordClaim = { readonly kind: 'created' | 'replayed'; readonly record: RecordedPet } | { readonly kind: 'reused' };

/** A record, as DynamoDB returns it on a failed condition. */
const recordedPetOf = (item: StoredItem): RecordedPet => ({
  pet: {
    id: Number(item.petId?.N),
    name: String(item.name?.S),
    categoryId: Number(item.categoryId?.N),
    status: item.status?.S as PetStatus,
  },
  createdAt: String(item.createdAt?.S),
  expiresAt: Number(item.expiresAt?.N),
  writeId: String(item.writeId?.S),
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

export const petWrites = ({
  client = createDocumentClient(dynamoDBOptions()),
  tableName = petsTableName(),
  // Reads the region index when the function starts: a bad one fails there, not at a request.
  newId = petIdGenerator(),
  maxIdAttempts = MAX_ID_ATTEMPTS,
  idempotencyTableName,
  newWriteId = () => randomUUID(),
  statusShards = statusShardCount(),
}: PetsRepositoryOptions = {}): PetWrites => {
  // What the table holds beside the pet: its status index key, and when it was created.
  const storedItem = (pet: Pet, createdAt = new Date().toISOString()) => ({
    ...pet,
    [petsStatusIndex.partitionKey.name]: statusShardOf(pet.status, pet.id, statusShards),
    createdAt,
  });

  const create = async (newPet: NewPet): Promise<Pet> => {
    for (let attempt = 1; ; attempt += 1) {
      const pet = petOf(newId('unkeyed'), newPet);
      const writeId = newWriteId();
      try {
        await callDatabase(() =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: { ...storedItem(pet), writeId },
              ConditionExpression: 'attribute_not_exists(#id)',
              ExpressionAttributeNames: { '#id': 'id' },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        );
        return pet;
      } catch (error) {
        if (!isConditionFailure<StoredItem>(error)) throw error;
        // The SDK repeats a write whose answer was lost and finds the item that write stored: done.
        if (error.Item?.writeId?.S === writeId && sameFields(error.Item, pet)) return pet;
        // Another pet holds this id: draw again. Nothing was written.
        if (attempt >= maxIdAttempts) throw exhausted('no free pet id');
      }
    }
  };

  /**
   * Whether the pet a record fixed is stored now. Put only where its id is free: where the id holds
   * an item of the same `createdAt` (a try before, this put's own SDK retry, or its replica), that is
   * the pet, maybe changed since, and nothing is written, so a replay never undoes a later change.
   * Another `createdAt`: another pet holds the id (a clock set back), and the record moves.
   */
  const putRecordedPet = async (record: RecordedPet): Promise<boolean> => {
    try {
      await callDatabase(() =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: storedItem(record.pet, record.createdAt),
            ConditionExpression: 'attribute_not_exists(#id)',
            ExpressionAttributeNames: { '#id': 'id' },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure<StoredItem>(error)) throw error;
      return error.Item?.createdAt?.S === record.createdAt;
    }
  };

  const createOnce = async (newPet: NewPet, request: IdempotentRequest): Promise<KeyedCreateOutcome> => {
    const records = recordsOf(idempotencyTableName ?? defaultIdempotencyTableName(), request);
    for (let claims = 1; ; claims += 1) {
      // Step 1: the record, which fixes the pet (or finds the record that did).
      const claim = await records.claim(newPet);
      if (claim.kind === 'reused') return claim;
      // Step 2: the pet it fixed; under a new id, recorded first, while another pet holds it.
      let record: RecordedPet | undefined = claim.record;
      for (let collisions = 0; record !== undefined;) {
        if (await putRecordedPet(record)) return { kind: claim.kind, pet: record.pet };
        if (++collisions >= maxIdAttempts) throw exhausted('no free pet id');
        record = await records.redraw(record);
      }
      // The record went (swept once expired) while its id was redrawn: claim the key again.
      if (claims >= maxIdAttempts) throw exhausted('idempotency record not kept');
    }
  };

  /**
   * Reserves a fresh keyed id in the idempotency table, for a window: an item `pet#<id>` with its
   * expiry, put only where no live reservation holds the id. A
   * record names an id only once it is reserved, so no other keyed create, in any region, can hold
   * it (the table is strongly consistent across regions), and no create without a key can draw it
   * (shared/ids.ts). An id's time is when it was minted: once its reservation has expired and been
   * swept, it is never drawn again. A reservation taken already: draw again.
   */
  const reserveId = async (recordsTable: string): Promise<{ readonly id: number; readonly expiresAt: number }> => {
    for (let attempt = 1; ; attempt += 1) {
      const now = nowSeconds();
      const expiresAt = now + IDEMPOTENCY_WINDOW_SECONDS;
      const id = newId('keyed');
      try {
        await callReplicated(() =>
          client.send(
            new PutCommand({
              TableName: recordsTable,
              Item: {
                id: idReservationKey(id),
                expiresAt,
              },
              ConditionExpression: 'attribute_not_exists(#id) OR #expiresAt < :now',
              ExpressionAttributeNames: { '#id': 'id', '#expiresAt': 'expiresAt' },
              ExpressionAttributeValues: { ':now': now },
            }),
          ),
        );
        return { id, expiresAt };
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        // Another create holds it (or this put's own retry found its first try: an orphan the sweep removes).
        if (attempt >= maxIdAttempts) throw exhausted('no free pet id');
      }
    }
  };

  /**
   * The record of one keyed create, in the idempotency table (a strongly consistent global table
   * where the stage has regions: every write is callReplicated). Its attributes: the request's
   * hash, the pet it fixed (`petId` and its stored fields, so that a replay in any region puts
   * the same item), its expiry, and the write's own id. The sweep deletes both once expired.
   */
  const recordsOf = (recordsTable: string, { recordKey, requestHash }: IdempotentRequest) => {
    const item = (record: RecordedPet) => ({
      id: recordKey,
      requestHash,
      petId: record.pet.id,
      name: record.pet.name,
      categoryId: record.pet.categoryId,
      status: record.pet.status,
      createdAt: record.createdAt,
      expiresAt: record.expiresAt,
      writeId: record.writeId,
    });

    /**
     * Puts a new record, under an id reserved first, unless a live one holds the key: then the same
     * request's record (whose id its first try reserved; ours is left to expire), or `reused`.
     */
    const claim = async (newPet: NewPet): Promise<RecordClaim> => {
      // The record expires with its id's reservation.
      const { id, expiresAt } = await reserveId(recordsTable);
      const now = nowSeconds();
      const record: RecordedPet = {
        pet: petOf(id, newPet),
        createdAt: new Date().toISOString(),
        expiresAt,
        writeId: newWriteId(),
      };
      try {
        await callReplicated(() =>
          client.send(
            new PutCommand({
              TableName: recordsTable,
              Item: item(record),
              // An expired record counts as none, whether or not the sweep has deleted it yet.
              ConditionExpression: 'attribute_not_exists(#id) OR #expiresAt < :now',
              ExpressionAttributeNames: { '#id': 'id', '#expiresAt': 'expiresAt' },
              ExpressionAttributeValues: { ':now': now },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        );
        return { kind: 'created', record };
      } catch (error) {
        if (!isConditionFailure<StoredItem>(error)) throw error;
        const found = error.Item ?? {};
        if (found.requestHash?.S !== requestHash) return { kind: 'reused' };
        // The SDK's retry of this very put, whose first answer was lost, finds this put's record.
        return { kind: found.writeId?.S === record.writeId ? 'created' : 'replayed', record: recordedPetOf(found) };
      }
    };

    /**
     * Moves the record to a new pet id, reserved first, on the condition that it still fixes the one
     * another pet holds. When it does not, the record another try of the same request moved it to,
     * or none (the record went, or is another request's: the caller claims again).
     */
    const redraw = async (taken: RecordedPet): Promise<RecordedPet | undefined> => {
      const record: RecordedPet = { ...taken, pet: { ...taken.pet, id: (await reserveId(recordsTable)).id }, writeId: newWriteId() };
      try {
        await callReplicated(() =>
          client.send(
            new PutCommand({
              TableName: recordsTable,
              Item: item(record),
              ConditionExpression: '#requestHash = :requestHash AND #petId = :taken',
              ExpressionAttributeNames: { '#requestHash': 'requestHash', '#petId': 'petId' },
              ExpressionAttributeValues: { ':requestHash': requestHash, ':taken': taken.pet.id },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        );
        return record;
      } catch (error) {
        if (!isConditionFailure<StoredItem>(error)) throw error;
        const found = error.Item;
        if (found?.requestHash?.S !== requestHash) return undefined;
        // Our own retried write, or another try's: the record fixes that pet now.
        return Number(found.expiresAt?.N) >= nowSeconds() ? recordedPetOf(found) : undefined;
      }
    };

    return { claim, redraw };
  };

  return { create, createOnce };
};

/** Both, on one client. */
export const petsRepository = (options: PetsRepositoryOptions = {}): PetsRepository => {
  const client = options.client ?? createDocumentClient(dynamoDBOptions());
  return { ...petReads({ ...options, client }), ...petWrites({ ...options, client }) };
};
