/**
 * Reading pets: one by its id, and a page of them. Listing reads one page's worth of items (plus
 * one, to know whether another page exists): a status filter is one Query per shard of the status
 * index, merged by id; the unfiltered listing a Scan with a Limit. Neither ever reads the whole
 * table. A module of its own, apart from the writes (shared/pets-repository.ts), so that the
 * bundles of the operations that only read hold no write.
 */
import { GetCommand, paginateQuery, paginateScan, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { dynamoDBOptions, petsTableName, statusShardCount } from './config';
import { callDatabase, createDocumentClient } from './dynamodb';
import type { Pet, PetStatus } from './models';
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

export interface PetReads {
  get(id: number): Promise<Pet | undefined>;
  list(input: ListPetsInput): Promise<PetsPage>;
}

export interface PetReadsOptions {
  readonly client?: DynamoDBDocumentClient;
  readonly tableName?: string;
  /** The status index's shards (docs/operations.md, Status index shards). @default from the environment */
  readonly statusShards?: number;
}

// Only the Pet fields are read back; other stored attributes (createdAt, writeId) stay in the table.
const PET_PROJECTION = {
  ProjectionExpression: '#id, #name, categoryId, #status',
  ExpressionAttributeNames: { '#id': 'id', '#name': 'name', '#status': 'status' },
};

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

export const petReads = ({
  client = createDocumentClient(dynamoDBOptions()),
  tableName = petsTableName(),
  statusShards = statusShardCount(),
}: PetReadsOptions = {}): PetReads => {
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

  return { get, list };
};
