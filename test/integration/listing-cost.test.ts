/**
 * The structural guarantee behind the flat read cost (`npm run bench -- reads` measures it):
 * a listing page sends bounded requests, one Query per shard of the status index when filtered,
 * never a read of the whole table. permissions.test.ts checks which actions are sent; this checks how much
 * each may read.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { statusShardCount } from '../../shared/config';
import { petsRepository, type PetsRepository } from '../../shared/pets-repository';
import { petsStatusIndex } from '../../shared/tables';
import { recordingClient, type SentCommand } from '../support/recording-client';
import { createTestTables, type TestTables } from '../support/tables';

/** What a listing asked DynamoDB for: the operation, the index, and how many items at most. */
interface Sent {
  readonly command: string;
  readonly indexName?: string;
  readonly limit?: number;
}

let tables: TestTables;
let pets: PetsRepository;
let sent: SentCommand[];
/** The commands since the last `sent.length = 0`, as the assertions read them. */
const listed = (): Sent[] => sent.map(({ command, indexName, limit }) => ({ command, indexName, limit }));

/** What a page of one status sends: a bounded Query to each shard. */
const shardQueries: Sent[] = Array.from({ length: statusShardCount() }, () => ({
  command: 'Query',
  indexName: petsStatusIndex.indexName,
  limit: 6,
}));

beforeAll(async () => {
  tables = await createTestTables();
  const seed = petsRepository({ client: tables.client, tableName: tables.pets });
  for (let index = 0; index < 30; index += 1) {
    await seed.create({ name: `pet ${index}`, categoryId: 1, status: index % 3 === 0 ? 'sold' : 'available' });
  }
  const recorder = recordingClient(tables.endpoint);
  sent = recorder.sent;
  pets = petsRepository({ client: recorder.client, tableName: tables.pets });
});

describe('a listing page reads a bounded number of items, whatever the table holds', () => {
  it('status filter: one Query on each shard of the status index, each with Limit = page size + 1', async () => {
    sent.length = 0;
    const page = await pets.list({ limit: 5, status: 'available' });
    expect(page.pets).toHaveLength(5);
    expect(page.pets.every((pet) => pet.status === 'available')).toBe(true);
    expect(listed()).toEqual(shardQueries);
  });

  it('a later page is as bounded as the first', async () => {
    const first = await pets.list({ limit: 5, status: 'available' });
    sent.length = 0;
    const second = await pets.list({ limit: 5, status: 'available', afterId: first.lastId });
    expect(second.pets.map((pet) => pet.id)).not.toContain(first.pets[0]?.id);
    expect(listed()).toEqual(shardQueries);
  });

  it('no filter: one Scan with Limit = page size + 1, not a Scan of the table', async () => {
    sent.length = 0;
    const page = await pets.list({ limit: 5 });
    expect(page.pets).toHaveLength(5);
    expect(page.lastId).toBeDefined();
    expect(listed()).toEqual([{ command: 'Scan', indexName: undefined, limit: 6 }]);
  });
});
