/**
 * The status index's shards on DynamoDB Local: the creates of one status spread over the shards,
 * a listing of one status merges its shards' Queries into the order one unsharded index gives,
 * page by page, while pets are created between the pages; a stage that raises its shard count
 * still lists every pet; and what one create costs the index is what infra/capacity.ts says.
 */
import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { STATUS_INDEX_WCU_PER_CREATE } from '../../infra/capacity';
import { PET_NAME_MAX_LENGTH, type Pet, type PetStatus } from '../../shared/models';
import { petsRepository, statusShardOf, type PetsRepository } from '../../shared/pets-repository';
import { petsStatusIndex, petsTable } from '../../shared/tables';
import { ensureTables } from '../../tools/dynamodb-local';
import { FUZZ_SEED, storedPets, type StoredPet } from '../support/arbitraries';
import { databaseClient } from '../support/database';

let client: DynamoDBDocumentClient;

beforeAll(() => {
  client = databaseClient({ endpoint: inject('dynamodbEndpoint') });
});

/** A fresh pets table, and a repository on it with `shards` shards whose ids are the ones given, in turn. */
const freshPets = async (shards: number, tableName = `shards-${randomUUID().slice(0, 8)}`) => {
  await ensureTables(client, [{ definition: petsTable, name: tableName }]);
  return repositoryOn(tableName, shards);
};

const repositoryOn = (tableName: string, shards: number) => {
  const ids: number[] = [];
  const pets = petsRepository({ client, tableName, statusShards: shards, newId: () => ids.shift() ?? 0 });
  const store = async (id: number, status: PetStatus) => {
    ids.push(id);
    return pets.create({ name: `pet ${id}`, categoryId: 1, status });
  };
  return { tableName, pets, store };
};

/** Every page of one status, following each page's last id, as a client follows `Link rel=next`. */
const walk = async (pets: PetsRepository, status: PetStatus, limit: number) => {
  const pages: Pet[][] = [];
  let afterId: number | undefined;
  for (;;) {
    const page = await pets.list({ limit, status, afterId });
    pages.push(page.pets);
    if (page.lastId === undefined) return pages;
    afterId = page.lastId;
  }
};

const idsOf = (pets: readonly { id: number }[]) => pets.map((pet) => pet.id);
const ascending = (ids: readonly number[]) => [...ids].sort((a, b) => a - b);

describe('creates of one status', () => {
  it('write every shard of the status, each pet in the shard of its id', async () => {
    const { tableName, store } = await freshPets(4);
    for (let id = 1; id <= 8; id += 1) await store(id, 'available');
    for (let shard = 0; shard < 4; shard += 1) {
      const { Items = [] } = await client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: petsStatusIndex.indexName,
          KeyConditionExpression: '#shard = :shard',
          ExpressionAttributeNames: { '#shard': petsStatusIndex.partitionKey.name },
          ExpressionAttributeValues: { ':shard': statusShardOf('available', shard, 4) },
        }),
      );
      expect(idsOf(Items as Pet[]), `shard ${shard}`).toEqual([shard === 0 ? 4 : shard, shard === 0 ? 8 : shard + 4]);
    }
  });

  it('cost the status index the write units infra/capacity.ts counts on: 1 for a typical pet, 2 for the largest', async () => {
    const { tableName } = await freshPets(4);
    const units: number[] = [];
    const metered = databaseClient({ endpoint: inject('dynamodbEndpoint') });
    metered.middlewareStack.add(
      (next) => async (args) => {
        (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'INDEXES';
        const result = await next(args);
        const consumed = (result.output as { ConsumedCapacity?: { GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }> } })
          .ConsumedCapacity;
        units.push(consumed?.GlobalSecondaryIndexes?.[petsStatusIndex.indexName]?.CapacityUnits ?? NaN);
        return result;
      },
      { step: 'initialize', name: 'indexUnits' },
    );
    const pets = petsRepository({ client: metered, tableName, statusShards: 4 });
    const largestId = Number.MAX_SAFE_INTEGER;
    await pets.create({ name: 'a'.repeat(PET_NAME_MAX_LENGTH), categoryId: largestId, status: 'available' });
    await petsRepository({ client: metered, tableName, statusShards: 4, newId: () => largestId }).create({
      name: '😀'.repeat(PET_NAME_MAX_LENGTH),
      categoryId: largestId,
      status: 'available',
    });
    expect(units).toEqual([STATUS_INDEX_WCU_PER_CREATE.typical, STATUS_INDEX_WCU_PER_CREATE.largest]);
  });
});

describe('a listing of one status, merged from its shards', () => {
  it('pages as one unsharded index would, for any pets and 1, 2, 4 or 8 shards, while pets are created between pages', async () => {
    const PAGES = 4;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(1, 2, 4, 8),
        storedPets({ maxLength: 30, pages: PAGES }),
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom<PetStatus>('available', 'sold'),
        async (shards, stored, limit, status) => {
          const { pets, store } = await freshPets(shards);
          const createdAfter = (page: number) => stored.filter((pet) => pet.createdAfterPage === page);
          for (const pet of createdAfter(0)) await store(pet.id, pet.status);
          const existing: StoredPet[] = [...createdAfter(0)];

          // The oracle: each page is the first `limit` ids of the status after the cursor, of the
          // pets stored when it is read; another page follows exactly when more are stored.
          let afterId: number | undefined;
          const walked: number[] = [];
          for (let page = 1; ; page += 1) {
            const listed = await pets.list({ limit, status, afterId });
            const after = ascending(idsOf(existing.filter((pet) => pet.status === status && (afterId === undefined || pet.id > afterId))));
            expect(idsOf(listed.pets)).toEqual(after.slice(0, limit));
            expect(listed.lastId).toEqual(after.length > limit ? after[limit - 1] : undefined);
            walked.push(...idsOf(listed.pets));
            if (listed.lastId === undefined) break;
            afterId = listed.lastId;
            for (const pet of page <= PAGES ? createdAfter(page) : []) {
              await store(pet.id, pet.status);
              existing.push(pet);
            }
          }

          // The walk: ascending, no pet twice, and every pet of the status stored before it began.
          expect(walked).toEqual(ascending([...new Set(walked)]));
          const before = idsOf(createdAfter(0).filter((pet) => pet.status === status));
          expect(walked.filter((id) => before.includes(id))).toEqual(ascending(before));
        },
      ),
      // A fresh table a run: a few seconds on DynamoDB Local.
      { seed: FUZZ_SEED, numRuns: 24 },
    );
  });

  it('lists every pet after the stage raises its shard count, those written before the raise included', async () => {
    const { tableName, store } = await freshPets(2);
    for (let id = 1; id <= 9; id += 1) await store(id, 'pending');
    const raised = repositoryOn(tableName, 8);
    for (let id = 10; id <= 18; id += 1) await raised.store(id, 'pending');
    const pages = await walk(raised.pets, 'pending', 4);
    expect(idsOf(pages.flat())).toEqual(Array.from({ length: 18 }, (_, index) => index + 1));
  });
});
