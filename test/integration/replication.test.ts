/**
 * The test fixture that stands in for global tables' replication (test/support/replication.ts),
 * on DynamoDB Local: it must do what AWS documents before the tests across regions may lean on it.
 */
import { CreateTableCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { LOCAL_TOOL_REQUEST_TIMEOUT_MS } from '../../tools/dynamodb-local';
import { startReplication, type Replication } from '../support/replication';
import { databaseClient } from '../support/database';

/** Regions of a fixture: no real region's names. */
const REGIONS = ['region-one', 'region-two', 'region-three'] as const;
const DELAY_MS = 300;

let client: DynamoDBDocumentClient;
let replication: Replication | undefined;

beforeAll(() => {
  client = databaseClient({ endpoint: inject('dynamodbEndpoint'), requestTimeout: LOCAL_TOOL_REQUEST_TIMEOUT_MS });
});
afterEach(async () => {
  await replication?.stop();
  replication = undefined;
});
afterAll(() => client.destroy());

/** A table with a copy in each region, its streams on, replicated with `delayMs`. */
const replicatedTable = async (delayMs = DELAY_MS) => {
  const suffix = randomUUID().slice(0, 8);
  const copies = Object.fromEntries(REGIONS.map((region) => [region, `replicated-${suffix}-${region}`]));
  for (const name of Object.values(copies)) {
    await client.send(
      new CreateTableCommand({
        TableName: name,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      }),
    );
    await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: name });
  }
  replication = await startReplication({ client, tables: [copies], delayMs });
  const put = (region: string, item: Record<string, unknown>) => client.send(new PutCommand({ TableName: copies[region], Item: item }));
  const read = async (region: string, id: string) => (await client.send(new GetCommand({ TableName: copies[region], Key: { id } }))).Item;
  const everywhere = (id: string) => Promise.all(REGIONS.map((region) => read(region, id)));
  return { replication, copies, put, read, everywhere };
};

describe('the replication fixture', () => {
  it('applies a write to every other copy after the delay, and a delete as a delete', async () => {
    const { replication, put, read, everywhere, copies } = await replicatedTable();
    const written = performance.now();
    await put('region-one', { id: 'a', colour: 'red' });
    expect(await read('region-two', 'a')).toBeUndefined();
    await expect.poll(() => read('region-three', 'a'), { timeout: 30_000, interval: 20 }).toEqual({ id: 'a', colour: 'red' });
    expect(performance.now() - written).toBeGreaterThanOrEqual(DELAY_MS);
    await replication.settled();
    expect(await everywhere('a')).toEqual(REGIONS.map(() => ({ id: 'a', colour: 'red' })));

    await client.send(new DeleteCommand({ TableName: copies['region-two'], Key: { id: 'a' } }));
    await replication.settled();
    expect(await everywhere('a')).toEqual(REGIONS.map(() => undefined));
  });

  it('keeps the later of two writes in every copy: the older, replicated after it, never overwrites it', async () => {
    const { replication, put, everywhere } = await replicatedTable();
    // Both made before either reaches the other region.
    await put('region-one', { id: 'b', colour: 'older' });
    await put('region-two', { id: 'b', colour: 'newer' });
    await replication.settled();
    expect(await everywhere('b')).toEqual(REGIONS.map(() => ({ id: 'b', colour: 'newer' })));
    expect(replication.counts.superseded).toBeGreaterThan(0);
  });

  it('keeps the later write when it is made where the older one is yet to arrive', async () => {
    const { replication, put, read, everywhere } = await replicatedTable(1_000);
    await put('region-one', { id: 'c', colour: 'older' });
    // Made in region-three after region-one's write, which reaches region-three only later.
    await put('region-three', { id: 'c', colour: 'newer' });
    expect(await read('region-three', 'c')).toEqual({ id: 'c', colour: 'newer' });
    await replication.settled();
    expect(await everywhere('c')).toEqual(REGIONS.map(() => ({ id: 'c', colour: 'newer' })));
  });

  it('never replicates back what it applied: one write is one write in each other copy', async () => {
    const { replication, put, everywhere } = await replicatedTable(0);
    await put('region-one', { id: 'd', colour: 'once' });
    await replication.settled();
    // Another read of every stream, after the applied writes' records are in them.
    await replication.settled();
    expect(await everywhere('d')).toEqual(REGIONS.map(() => ({ id: 'd', colour: 'once' })));
    expect(replication.counts).toEqual({ applied: REGIONS.length - 1, superseded: 0, echoes: REGIONS.length - 1 });
  });
});
