/**
 * The structural guarantee behind the flat read cost (`npm run bench -- reads` measures it):
 * a listing page sends one bounded request, a Query on the status index when filtered, never a
 * read of the whole table. permissions.test.ts checks which actions are sent; this checks how much
 * each may read.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../shared/dynamodb';
import { petsRepository, type PetsRepository } from '../../shared/pets-repository';
import { petsStatusIndex } from '../../shared/tables';
import { createTestTables, type TestTables } from '../support/tables';

interface Sent {
  readonly command: string;
  readonly indexName?: string;
  readonly limit?: number;
}

const recording = (endpoint: string) => {
  const client: DynamoDBDocumentClient = createDocumentClient({ endpoint });
  const sent: Sent[] = [];
  client.middlewareStack.add(
    (next, { commandName }) =>
      async (args) => {
        const input = args.input as { IndexName?: string; Limit?: number };
        sent.push({ command: String(commandName).replace(/Command$/, ''), indexName: input.IndexName, limit: input.Limit });
        return next(args);
      },
    { step: 'initialize', name: 'recordListing' },
  );
  return { client, sent };
};

let tables: TestTables;
let pets: PetsRepository;
let sent: Sent[];

beforeAll(async () => {
  tables = await createTestTables();
  const seed = petsRepository({ client: tables.client, tableName: tables.pets });
  for (let index = 0; index < 30; index += 1) {
    await seed.create({ name: `pet ${index}`, categoryId: 1, status: index % 3 === 0 ? 'sold' : 'available' });
  }
  const recorder = recording(tables.endpoint);
  sent = recorder.sent;
  pets = petsRepository({ client: recorder.client, tableName: tables.pets });
});

describe('a listing page reads a bounded number of items, whatever the table holds', () => {
  it('status filter: one Query on the status index with Limit = page size + 1', async () => {
    sent.length = 0;
    const page = await pets.list({ limit: 5, status: 'available' });
    expect(page.pets).toHaveLength(5);
    expect(page.pets.every((pet) => pet.status === 'available')).toBe(true);
    expect(sent).toEqual([{ command: 'Query', indexName: petsStatusIndex.indexName, limit: 6 }]);
  });

  it('a later page is as bounded as the first', async () => {
    const first = await pets.list({ limit: 5, status: 'available' });
    sent.length = 0;
    const second = await pets.list({ limit: 5, status: 'available', afterId: first.lastId });
    expect(second.pets.map((pet) => pet.id)).not.toContain(first.pets[0]?.id);
    expect(sent).toEqual([{ command: 'Query', indexName: petsStatusIndex.indexName, limit: 6 }]);
  });

  it('no filter: one Scan with Limit = page size + 1, not a Scan of the table', async () => {
    sent.length = 0;
    const page = await pets.list({ limit: 5 });
    expect(page.pets).toHaveLength(5);
    expect(page.lastId).toBeDefined();
    expect(sent).toEqual([{ command: 'Scan', indexName: undefined, limit: 6 }]);
  });
});
