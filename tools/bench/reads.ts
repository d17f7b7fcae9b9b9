/**
 * Read cost against table size and status index shards: the real repository lists pages on
 * DynamoDB Local with ReturnConsumedCapacity, at two table sizes and 1, 4 and 8 shards. A page
 * that costs the same at 1,000 and 20,000 pets never reads the whole table; a page of one status
 * sends one Query per shard, each costing at least half a read unit.
 */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { RCU_PER_SHARD_QUERY } from '../../infra/capacity';
import { createDocumentClient } from '../../shared/dynamodb';
import { PetStatus } from '../../shared/models';
import { petsRepository, statusShardOf } from '../../shared/pets-repository';
import { petsStatusIndex, petsTable } from '../../shared/tables';
import { ensureTables } from '../dynamodb-local';
import { meterCapacity } from './capacity';
import { atMost, type Check, type PartResult } from './results';
import { round } from '../stats';

const SIZES = [1_000, 20_000] as const;
/** The shard counts measured: the development stages' 1, staging's and prod's 4, and twice that. */
const SHARD_COUNTS = [1, 4, 8] as const;
const PAGE = 20;
/** The page a "later page" is: the 5th, reached by following the cursor. */
const LATER_PAGE = 5;
const STATUSES: readonly PetStatus[] = PetStatus.options;
/**
 * What this part counts is capacity units, which time does not change: its clients wait longer
 * than the functions' one second, so that a busy machine slows the run rather than failing it.
 */
const benchClient = (endpoint: string) => createDocumentClient({ endpoint, connectionTimeout: 10_000, requestTimeout: 10_000 });

/** A fresh pets table filled with `count` pets, written for `shards` status index shards, 25 to a BatchWrite, 8 batches in flight. */
export const seededTable = async (endpoint: string, count: number, shards = 1) => {
  const client = benchClient(endpoint);
  const tableName = `bench-pets-${count}-${randomUUID().slice(0, 8)}`;
  await ensureTables(client, [{ definition: petsTable, name: tableName }]);
  const items = Array.from({ length: count }, (_, index) => {
    const id = 1_000_000 + index;
    const status = STATUSES[index % STATUSES.length] ?? 'available';
    return {
      id,
      name: `pet ${index}`,
      categoryId: 1 + (index % 7),
      status,
      [petsStatusIndex.partitionKey.name]: statusShardOf(status, id, shards),
      createdAt: new Date().toISOString(),
      writeId: randomUUID(),
    };
  });
  const batches: Array<typeof items> = [];
  for (let start = 0; start < items.length; start += 25) batches.push(items.slice(start, start + 25));
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      let pending: Array<Record<string, unknown>> = (batches[next++] ?? []).map((Item) => ({ PutRequest: { Item } }));
      while (pending.length > 0) {
        const { UnprocessedItems } = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } }));
        pending = (UnprocessedItems?.[tableName] ?? []) as Array<Record<string, unknown>>;
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return { client, tableName };
};

/** Capacity units of one listing page, first or later, through the real repository. */
const pageCost = async (endpoint: string, tableName: string, shards: number, status: PetStatus | undefined, pageNumber: number) => {
  const client = benchClient(endpoint);
  const meter = meterCapacity(client);
  const pets = petsRepository({ client, tableName, statusShards: shards });
  let afterId: number | undefined;
  for (let page = 1; page < pageNumber; page += 1) afterId = (await pets.list({ limit: PAGE, status, afterId })).lastId;
  meter.units = 0;
  meter.calls = 0;
  const page = await pets.list({ limit: PAGE, status, afterId });
  if (page.pets.length !== PAGE) throw new Error(`expected a full page, got ${page.pets.length}`);
  return { units: meter.units, calls: meter.calls };
};

interface ReadCase {
  readonly label: string;
  readonly status: PetStatus | undefined;
  readonly page: number;
  readonly shards: number;
}

/** The unfiltered listing is a Scan of the table, the same at any shard count: measured once. */
const CASES: readonly ReadCase[] = [
  { label: 'no filter (Scan, Limit 21)', status: undefined, page: 1, shards: 1 },
  { label: 'no filter, page 5', status: undefined, page: LATER_PAGE, shards: 1 },
  ...SHARD_COUNTS.flatMap((shards) => [
    { label: `status=available, ${shards} shard(s) (${shards} Query, Limit 21 each)`, status: 'available' as const, page: 1, shards },
    { label: `status=available, ${shards} shard(s), page 5`, status: 'available' as const, page: LATER_PAGE, shards },
  ]),
];

const caseKey = (size: number, testCase: ReadCase) => `${size}:${testCase.label}`;

export const runReads = async ({ endpoint }: { endpoint: string }): Promise<PartResult> => {
  const started = Date.now();
  const costs = new Map<string, { units: number; calls: number }>();
  const seedSeconds: number[] = [];
  for (const size of SIZES) {
    for (const shards of SHARD_COUNTS) {
      const seedStart = Date.now();
      const { tableName, client } = await seededTable(endpoint, size, shards);
      seedSeconds.push((Date.now() - seedStart) / 1000);
      for (const testCase of CASES.filter((candidate) => candidate.shards === shards)) {
        costs.set(caseKey(size, testCase), await pageCost(endpoint, tableName, shards, testCase.status, testCase.page));
      }
      client.destroy();
    }
  }
  const checks: Check[] = [];
  const rows = CASES.map((testCase) => {
    const small = costs.get(caseKey(SIZES[0], testCase)) ?? { units: NaN, calls: 0 };
    const large = costs.get(caseKey(SIZES[1], testCase)) ?? { units: NaN, calls: 0 };
    const ratio = round(large.units / small.units);
    const id = `reads.${testCase.status ?? 'all'}${testCase.status ? `.shards${testCase.shards}` : ''}.page${testCase.page}`;
    checks.push(
      atMost(
        {
          id,
          label: `page of ${PAGE}, ${testCase.label}: RCU at 20k pets`,
          value: large.units,
          unit: 'RCU',
          reference: { label: 'RCU at 1k pets', value: small.units },
          ratio,
        },
        'ratio 20k/1k = 1.00',
        1,
      ),
    );
    if (testCase.status !== undefined) {
      // What infra/capacity.ts counts a page of one status to cost: a Query of each shard.
      const counted = testCase.shards * RCU_PER_SHARD_QUERY;
      checks.push(
        atMost(
          {
            id: `${id}.counted`,
            label: `page of ${PAGE}, ${testCase.label}: RCU at 20k pets against ${testCase.shards} × ${RCU_PER_SHARD_QUERY} RCU`,
            value: large.units,
            unit: 'RCU',
            reference: { label: 'RCU counted in infra/capacity.ts', value: counted },
            ratio: round(large.units / counted),
          },
          'at most the RCU counted',
          1,
        ),
      );
    }
    return [testCase.label, testCase.shards, small.units, large.units, ratio, `${small.calls} / ${large.calls}`];
  });
  return {
    part: 'reads',
    measuredAt: new Date().toISOString(),
    seconds: round((Date.now() - started) / 1000, 0),
    checks,
    tables: [
      {
        title: `Read cost of one page of ${PAGE} (DynamoDB Local, ReturnConsumedCapacity TOTAL, summed over the repository's calls)`,
        columns: [
          'listing',
          'status index shards',
          `RCU at ${SIZES[0]} pets`,
          `RCU at ${SIZES[1]} pets`,
          'ratio 20k/1k',
          'DynamoDB calls (1k / 20k)',
        ],
        rows,
      },
    ],
    notes: [
      `Pets spread evenly over the three statuses, written for each shard count in turn; seeded by BatchWrite in ${seedSeconds
        .map((s) => `${round(s, 1)} s`)
        .join(', ')}. Capacity is deterministic (item sizes, not time): one run suffices, the median of one.`,
      "A client middleware sets ReturnConsumedCapacity on the repository's own calls and sums ConsumedCapacity.CapacityUnits, " +
        'so the real listing code runs, cursor and all: a page of one status is one Query per shard, in parallel, merged by id.',
    ],
  };
};
