/**
 * The pets repository: the only module that knows how pets are stored in DynamoDB.
 * Listing reads one page's worth of items (plus one, to know whether another page exists):
 * a status filter is one Query per shard of the status index, merged by id; the unfiltered
 * listing a Scan with a Limit. Neither ever reads the whole table.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, paginateQuery, paginateScan, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { dynamoDBOptions, idempotencyTableName as defaultIdempotencyTableName, petsTableName, statusShardCount } from './config';
import { callDatabase, callReplicated, createDocumentClient, DatabaseUnavailable, isConditionFailure } from './dynamodb';
import { expiryBucketOf, idReservationKey, IDEMPOTENCY_WINDOW_SECONDS, reservationBucketOf, type IdempotentRequest } from './idempotency';
import { petIdGenerator, type IdGenerator } from './ids';
import type { NewPet, Pet, PetStatus } from './models';
import { idempotencyExpiryIndex, petsStatusIndex } from './tables';

export interface ListPetsInput {
  readonly limit: number;
  readonly status?: PetStatus;
  /** Resume after the pet with this id (from the previous page). */
  readonly afterId?: number;
}

export interface PetsPage {
  readonly pets: Pet[];
  /** Id of the last pet when another page follows. */
  readonly lastId?: number;
}

/** What a keyed create did: stored its pet, found its own earlier one, or found the key used by another request. */
export type KeyedCreateOutcome = { readonly kind: 'created' | 'replayed'; readonly pet: Pet } | { readonly kind: 'reused' };

export interface PetsRepository {
  create(newPet: NewPet): Promise<Pet>;
  /**
   * Reserves a keyed pet id, then puts the idempotency record, which fixes the pet's id and fields,
   * then the pet, unless a live record for the same key exists: then the same request gets that
   * record's pet (and stores it only where no item holds its id yet: a replay never overwrites the
   * pet, so never undoes a later change to it), another request `reused`. No transaction:
   * shared/idempotency.ts says why.
   */
  createOnce(newPet: NewPet, request: IdempotentRequest): Promise<KeyedCreateOutcome>;
  get(id: number): Promise<Pet | undefined>;
  list(input: ListPetsInput): Promise<PetsPage>;
}

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

// Only the Pet fields are read back; other stored attributes (createdAt, writeId) stay in the table.
const PET_PROJECTION = {
  ProjectionExpression: '#id, #name, categoryId, #status',
  ExpressionAttributeNames: { '#id': 'id', '#name': 'name', '#status': 'status' },
};

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

/** Every promise's value, once all have settled; the first failure, once all have settled, if any failed. */
const allOrFirstFailure = async <T>(promises: ReadonlyArray<Promise<T>>): Promise<T[]> => {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<T>).value);
};

/**
 * The status index's partition key of a pet: its status and a shard, `id mod shards`. Ids end in
 * random bits, so the creates of one status spread evenly over the shards. The shard is stored
 * with the pet, so a stage that raises its shard count still finds each pet where it was written.
 */
export const statusShardOf = (status: PetStatus, id: number, shards: number): string => `${status}#${id % shards}`;

/** Every partition key of one status in the index, for a stage of `shards` shards. */
const statusShardsOf = (status: PetStatus, shards: number): string[] =>
  Array.from({ length: shards }, (_, shard) => statusShardOf(status, shard, shards));

/** The first `count` pets of several lists, each ascending by id, in ascending order of id. */
const firstById = (lists: readonly Pet[][], count: number): Pet[] =>
  lists
    .flat()
    .sort((a, b) => a.id - b.id)
    .slice(0, count);

const toPet = (item: Record<string, unknown>): Pet => ({
  id: Number(item.id),
  name: String(item.name),
  categoryId: Number(item.categoryId),
  status: item.status as PetStatus,
});

export const petsRepository = ({
  client = createDocumentClient(dynamoDBOptions()),
  tableName = petsTableName(),
  // Reads the region index when the function starts: a bad one fails there, not at a request.
  newId = petIdGenerator(),
  maxIdAttempts = MAX_ID_ATTEMPTS,
  idempotencyTableName,
  newWriteId = () => randomUUID(),
  statusShards = statusShardCount(),
}: PetsRepositoryOptions = {}): PetsRepository => {
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
   * expiry and the expiry index's partition, put only where no live reservation holds the id. A
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
                [idempotencyExpiryIndex.partitionKey.name]: reservationBucketOf(id, expiresAt),
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
   * the same item), its expiry and the expiry index's partition, and the write's own id.
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
      [idempotencyExpiryIndex.partitionKey.name]: expiryBucketOf(recordKey, record.expiresAt),
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

  const get = async (id: number): Promise<Pet | undefined> => {
    const { Item } = await callDatabase(() =>
      client.send(new GetCommand({ TableName: tableName, Key: { id }, ConsistentRead: true, ...PET_PROJECTION })),
    );
    return Item ? toPet(Item) : undefined;
  };

  /** Up to `wanted` items from the first pages of a Scan or Query. */
  const firstItems = async (pages: AsyncIterable<{ Items?: Record<string, unknown>[] }>, wanted: number): Promise<Pet[]> => {
    const pets: Pet[] = [];
    for await (const page of pages) {
      for (const item of page.Items ?? []) pets.push(toPet(item));
      if (pets.length >= wanted) break;
    }
    return pets;
  };

  const scanned = (wanted: number, afterId: number | undefined) =>
    firstItems(
      paginateScan(
        { client, pageSize: wanted },
        { TableName: tableName, ...PET_PROJECTION, ...(afterId === undefined ? {} : { ExclusiveStartKey: { id: afterId } }) },
      ),
      wanted,
    );

  // One Query per shard, in parallel: each shard's first `wanted` pets after the cursor hold the
  // first `wanted` of the status, since ids order the shards as they order the whole. The answer
  // waits for every shard, failed or not: no query goes on retrying after the function has answered
  // (Lambda would freeze it mid-call and resume it under a later request).
  const ofStatus = async (wanted: number, status: PetStatus, afterId: number | undefined) => {
    const shards = await allOrFirstFailure(
      statusShardsOf(status, statusShards).map((shard) =>
        firstItems(
          paginateQuery(
            { client, pageSize: wanted },
            {
              TableName: tableName,
              IndexName: petsStatusIndex.indexName,
              KeyConditionExpression: afterId === undefined ? '#shard = :shard' : '#shard = :shard AND #id > :after',
              ...PET_PROJECTION,
              ExpressionAttributeNames: { ...PET_PROJECTION.ExpressionAttributeNames, '#shard': petsStatusIndex.partitionKey.name },
              ExpressionAttributeValues: { ':shard': shard, ...(afterId === undefined ? {} : { ':after': afterId }) },
            },
          ),
          wanted,
        ),
      ),
    );
    return firstById(shards, wanted);
  };

  const list = async ({ limit, status, afterId }: ListPetsInput): Promise<PetsPage> => {
    const wanted = limit + 1; // one more than the page tells whether another page follows
    const pets = await callDatabase(() => (status === undefined ? scanned(wanted, afterId) : ofStatus(wanted, status, afterId)));
    if (pets.length <= limit) return { pets };
    const page = pets.slice(0, limit);
    return { pets: page, lastId: page[page.length - 1]?.id };
  };

  return { create, createOnce, get, list };
};
