/**
 * Read cost against table size: the real repository lists pages on DynamoDB Local with
 * ReturnConsumedCapacity, at two table sizes. A page that costs the same at 1,000 and 20,000
 * pets never reads the whole table.
 */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { createDocumentClient } from '../../shared/dynamodb';
import { PetStatus } from '../../shared/models';
import { petsRepository } from '../../shared/pets-repository';
import { petsTable } from '../../shared/tables';
import { ensureTables } from '../dynamodb-local';
import { meterCapacity } from './capacity';
import { atMost, type Check, type PartResult } from './results';
import { round } from '../stats';

const SIZES = [1_000, 20_000] as const;
const PAGE = 20;
/** The page a "later page" is: the 5th, reached by following the cursor. */
const LATER_PAGE = 5;
const STATUSES: readonly PetStatus[] = PetStatus.options;

/** A fresh pets table filled with `count` pets, 25 to a BatchWrite, 8 batches in flight. */
export const seededTable = async (endpoint: string, count: number) => {
  const client = createDocumentClient({ endpoint });
  const tableName = `bench-pets-${count}-${randomUUID().slice(0, 8)}`;
  await ensureTables(client, [{ definition: petsTable, name: tableName }]);
  const items = Array.from({ length: count }, (_, index) => ({
    id: 1_000_000 + index,
    name: `pet ${index}`,
    categoryId: 1 + (index % 7),
    status: STATUSES[index % STATUSES.length],
    createdAt: new Date().toISOString(),
    writeId: randomUUID(),
  }));
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
const pageCost = async (endpoint: string, tableName: string, status: PetStatus | undefined, pageNumber: number) => {
  const client = createDocumentClient({ endpoint });
  const meter = meterCapacity(client);
  const pets = petsRepository({ client, tableName });
  let afterId: number | undefined;
  for (let page = 1; page < pageNumber; page += 1) afterId = (await pets.list({ limit: PAGE, status, afterId })).lastId;
  meter.units = 0;
  meter.calls = 0;
  const page = await pets.list({ limit: PAGE, status, afterId });
  if (page.pets.length !== PAGE) throw new Error(`expected a full page, got ${page.pets.length}`);
  return { units: meter.units, calls: meter.calls };
};

export const runReads = async ({ endpoint }: { endpoint: string }): Promise<PartResult> => {
  const started = Date.now();
  const cases = [
    { label: 'no filter (Scan, Limit 21)', status: undefined, page: 1 },
    { label: 'no filter, page 5', status: undefined, page: LATER_PAGE },
    { label: 'status=available (Query on the status index, Limit 21)', status: 'available' as const, page: 1 },
    { label: 'status=available, page 5', status: 'available' as const, page: LATER_PAGE },
  ];
  const costs = new Map<string, { units: number; calls: number }>();
  const seedSeconds: number[] = [];
  for (const size of SIZES) {
    const seedStart = Date.now();
    const { tableName, client } = await seededTable(endpoint, size);
    seedSeconds.push((Date.now() - seedStart) / 1000);
    for (const testCase of cases)
      costs.set(`${size}:${testCase.label}`, await pageCost(endpoint, tableName, testCase.status, testCase.page));
    client.destroy();
  }
  const checks: Check[] = [];
  const rows = cases.map((testCase) => {
    const small = costs.get(`${SIZES[0]}:${testCase.label}`) ?? { units: NaN, calls: 0 };
    const large = costs.get(`${SIZES[1]}:${testCase.label}`) ?? { units: NaN, calls: 0 };
    const ratio = round(large.units / small.units);
    checks.push(
      atMost(
        {
          id: `reads.${testCase.status ?? 'all'}.page${testCase.page}`,
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
    return [testCase.label, small.units, large.units, ratio, `${small.calls} / ${large.calls}`];
  });
  return {
    part: 'reads',
    measuredAt: new Date().toISOString(),
    seconds: round((Date.now() - started) / 1000, 0),
    checks,
    tables: [
      {
        title: `Read cost of one page of ${PAGE} (DynamoDB Local, ReturnConsumedCapacity TOTAL, summed over the repository's calls)`,
        columns: ['listing', `RCU at ${SIZES[0]} pets`, `RCU at ${SIZES[1]} pets`, 'ratio 20k/1k', 'DynamoDB calls (1k / 20k)'],
        rows,
      },
    ],
    notes: [
      `Pets spread evenly over the three statuses; seeded by BatchWrite in ${seedSeconds.map((s) => `${round(s, 1)} s`).join(' and ')}. ` +
        'Capacity is deterministic (item sizes, not time): one run suffices, the median of one.',
      "A client middleware sets ReturnConsumedCapacity on the repository's own calls and sums ConsumedCapacity.CapacityUnits, " +
        'so the real listing code runs, cursor and all.',
    ],
  };
};
