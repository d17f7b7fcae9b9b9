/**
 * The pets repository: the only module that knows how pets are stored in DynamoDB.
 * Listing reads one page's worth of items (plus one, to know whether another page exists):
 * a status filter is one Query per shard of the status index, merged by id; the unfiltered
 * listing a Scan with a Limit. Neither ever reads the whole table.
 */
import { randomUUID } from 'node:crypto';
import {
  GetCommand,
  paginateQuery,
  paginateScan,
  PutCommand,
  TransactWriteCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { dynamoDBOptions, idempotencyTableName as defaultIdempotencyTableName, petsTableName, statusShardCount } from './config';
import {
  callDatabase,
  cancellationReasons,
  classifyCancellation,
  createDocumentClient,
  DatabaseUnavailable,
  isConditionFailure,
  type CancellationReason as SharedCancellationReason,
} from './dynamodb';
import { IDEMPOTENCY_WINDOW_SECONDS, type IdempotentRequest } from './idempotency';
import { petIdGenerator, type IdGenerator } from './ids';
import type { NewPet, Pet, PetStatus } from './models';
import { petsStatusIndex } from './tables';

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
   * Creates the pet and its idempotency record in one transaction, unless a live record for the
   * same key exists: then the same request gets that record's pet, another request `reused`.
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
  /** Mints a pet's id. @default ids of the region the environment's REGION_INDEX names */
  readonly newId?: IdGenerator;
  /** Conditional writes tried before giving up on finding a free id. */
  readonly maxIdAttempts?: number;
  /** Marks each write, so that a write the SDK retried can recognise itself. */
  readonly newWriteId?: () => string;
  /** The status index's shards (docs/operations.md, Status index shards). @default from the environment */
  readonly statusShards?: number;
}

/** Gives up on a create after this many id collisions in a row (practically never more than one). */
export const MAX_ID_ATTEMPTS = 5;
/** Keyed creates retry a transaction that met a concurrent one on the same record this often. */
const MAX_CONFLICT_ATTEMPTS = 5;

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

/** Milliseconds, times the attempt, that a keyed create waits at most after a conflict. */
const CONFLICT_BACKOFF_MS = 25;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type CancellationReason = SharedCancellationReason<StoredItem>;

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
  const storedItem = (pet: Pet) => ({
    ...pet,
    [petsStatusIndex.partitionKey.name]: statusShardOf(pet.status, pet.id, statusShards),
    createdAt: new Date().toISOString(),
  });

  const create = async (newPet: NewPet): Promise<Pet> => {
    for (let attempt = 1; ; attempt += 1) {
      const pet = petOf(newId(), newPet);
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
        if (attempt >= maxIdAttempts) throw error;
      }
    }
  };

  const createOnce = async (newPet: NewPet, { recordKey, requestHash }: IdempotentRequest): Promise<KeyedCreateOutcome> => {
    const recordsTable = idempotencyTableName ?? defaultIdempotencyTableName();
    let collisions = 0;
    let conflicts = 0;
    for (;;) {
      const pet = petOf(newId(), newPet);
      const now = Math.floor(Date.now() / 1000);
      try {
        // The SDK sends one ClientRequestToken for all its retries of this call, so DynamoDB
        // answers a retried transaction that had committed with success rather than a conflict.
        await callDatabase(() =>
          client.send(
            new TransactWriteCommand({
              TransactItems: [
                {
                  Put: {
                    TableName: tableName,
                    Item: storedItem(pet),
                    ConditionExpression: 'attribute_not_exists(#id)',
                    ExpressionAttributeNames: { '#id': 'id' },
                  },
                },
                {
                  Put: {
                    TableName: recordsTable,
                    Item: { id: recordKey, requestHash, petId: pet.id, expiration: now + IDEMPOTENCY_WINDOW_SECONDS },
                    // TTL deletes lazily: an expired record counts as none.
                    ConditionExpression: 'attribute_not_exists(#id) OR #expiration < :now',
                    ExpressionAttributeNames: { '#id': 'id', '#expiration': 'expiration' },
                    ExpressionAttributeValues: { ':now': now },
                    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
                  },
                },
              ],
            }),
          ),
        );
        return { kind: 'created', pet };
      } catch (error) {
        const [petWrite, recordWrite] = cancellationReasons<StoredItem>(error);
        if (recordWrite?.Code === 'ConditionalCheckFailed') {
          // Pets never change, so the same request's pet is this one under the recorded id.
          const record = recordWrite.Item ?? {};
          if (record.requestHash?.S !== requestHash) return { kind: 'reused' };
          return { kind: 'replayed', pet: petOf(Number(record.petId?.N), newPet) };
        }
        if (petWrite?.Code === 'ConditionalCheckFailed' && ++collisions < maxIdAttempts) continue;
        // A concurrent create with the same key: its record (or its absence) decides the next try.
        if ([petWrite, recordWrite].some((reason) => reason?.Code === 'TransactionConflict')) {
          if (++conflicts < MAX_CONFLICT_ATTEMPTS) {
            await sleep(CONFLICT_BACKOFF_MS * conflicts * Math.random());
            continue;
          }
          throw new DatabaseUnavailable('transaction conflict');
        }
        throw classifyCancellation(error, [petWrite, recordWrite]);
      }
    }
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
