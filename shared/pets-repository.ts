/**
 * The pets repository: the only module that knows how pets are stored in DynamoDB.
 * Listing reads one page's worth of items (plus one, to know whether another page exists):
 * a status filter is a Query on the status index, the unfiltered listing a Scan with a Limit.
 * Neither ever reads the whole table.
 */
import { randomUUID } from 'node:crypto';
import {
  GetCommand,
  paginateQuery,
  paginateScan,
  PutCommand,
  type DynamoDBDocumentClient,
  type DynamoDBDocumentPaginationConfiguration,
} from '@aws-sdk/lib-dynamodb';
import { petsTableName, dynamoDBOptions } from './config';
import { callDatabase, createDocumentClient } from './dynamodb';
import { newPetId, type IdGenerator } from './ids';
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

/** Who a create is, across retries: a keyed create keeps its write id and its pet id. */
export interface WriteIdentity {
  readonly writeId: string;
  /** The id to write: an earlier attempt's, else `candidate`; `replacing` names an id found taken. */
  claimId(candidate: number, replacing?: number): Promise<number>;
}

export interface PetsRepository {
  create(newPet: NewPet, identity?: WriteIdentity): Promise<Pet>;
  get(id: number): Promise<Pet | undefined>;
  list(input: ListPetsInput): Promise<PetsPage>;
}

export interface PetsRepositoryOptions {
  readonly client?: DynamoDBDocumentClient;
  readonly tableName?: string;
  readonly newId?: IdGenerator;
  /** Conditional writes tried before giving up on finding a free id. */
  readonly maxIdAttempts?: number;
  /** Marks each write, so that a write the SDK retried can recognise itself. */
  readonly newWriteId?: () => string;
}

/** Gives up on a create after this many id collisions in a row (practically never more than one). */
export const MAX_ID_ATTEMPTS = 5;

// Only the Pet fields are read back; other stored attributes (createdAt, writeId) stay in the table.
const PET_PROJECTION = {
  ProjectionExpression: '#id, #name, categoryId, #status',
  ExpressionAttributeNames: { '#id': 'id', '#name': 'name', '#status': 'status' },
};

type StoredItem = Record<string, { S?: string; N?: string }>;

const isConditionFailure = (error: unknown): error is Error & { Item?: StoredItem } =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/** Whether a stored item (as DynamoDB returns it on a failed condition) holds this pet. */
const sameFields = (item: StoredItem, pet: Pet): boolean =>
  item.name?.S === pet.name && Number(item.categoryId?.N) === pet.categoryId && item.status?.S === pet.status;

/** A write id already stored a different pet: its key was reused with another body. */
export class WriteIdReused extends Error {
  override readonly name = 'WriteIdReused';

  constructor() {
    super('This write id already stored another pet.');
  }
}

const toPet = (item: Record<string, unknown>): Pet => ({
  id: Number(item.id),
  name: String(item.name),
  categoryId: Number(item.categoryId),
  status: item.status as PetStatus,
});

export const petsRepository = ({
  client = createDocumentClient(dynamoDBOptions()),
  tableName = petsTableName(),
  newId = () => newPetId(),
  maxIdAttempts = MAX_ID_ATTEMPTS,
  newWriteId = () => randomUUID(),
}: PetsRepositoryOptions = {}): PetsRepository => {
  const create = async (newPet: NewPet, identity?: WriteIdentity): Promise<Pet> => {
    let taken: number | undefined;
    for (let attempt = 1; ; attempt += 1) {
      const id = identity ? await identity.claimId(newId(), taken) : newId();
      const pet: Pet = { id, name: newPet.name, categoryId: newPet.categoryId, status: newPet.status };
      const writeId = identity?.writeId ?? newWriteId();
      try {
        await callDatabase(() =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: { ...pet, createdAt: new Date().toISOString(), writeId },
              ConditionExpression: 'attribute_not_exists(#id)',
              ExpressionAttributeNames: { '#id': 'id' },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        );
        return pet;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        // The SDK (or a keyed retry) repeats a write whose answer was lost and finds the item that
        // write stored: done, if it is this pet. Another pet under the same write id means a keyed
        // create reused its key with another body after that lost answer: refused, not misreported.
        if (error.Item?.writeId?.S === writeId) {
          if (sameFields(error.Item, pet)) return pet;
          throw new WriteIdReused();
        }
        // Another pet holds this id: draw again. Nothing was written.
        taken = id;
        if (attempt >= maxIdAttempts) throw error;
      }
    }
  };

  const get = async (id: number): Promise<Pet | undefined> => {
    const { Item } = await callDatabase(() =>
      client.send(new GetCommand({ TableName: tableName, Key: { id }, ConsistentRead: true, ...PET_PROJECTION })),
    );
    return Item ? toPet(Item) : undefined;
  };

  const list = async ({ limit, status, afterId }: ListPetsInput): Promise<PetsPage> => {
    const wanted = limit + 1; // one more than the page tells whether another page follows
    const config: DynamoDBDocumentPaginationConfiguration = { client, pageSize: wanted };
    const pages =
      status === undefined
        ? paginateScan(config, {
            TableName: tableName,
            ...PET_PROJECTION,
            ...(afterId === undefined ? {} : { ExclusiveStartKey: { id: afterId } }),
          })
        : paginateQuery(config, {
            TableName: tableName,
            IndexName: petsStatusIndex.indexName,
            KeyConditionExpression: '#status = :status',
            ExpressionAttributeValues: { ':status': status },
            ...PET_PROJECTION,
            ...(afterId === undefined ? {} : { ExclusiveStartKey: { status, id: afterId } }),
          });

    const pets: Pet[] = [];
    await callDatabase(async () => {
      for await (const page of pages) {
        for (const item of page.Items ?? []) pets.push(toPet(item));
        if (pets.length >= wanted) break;
      }
    });
    if (pets.length <= limit) return { pets };
    const page = pets.slice(0, limit);
    return { pets: page, lastId: page[page.length - 1]?.id };
  };

  return { create, get, list };
};
