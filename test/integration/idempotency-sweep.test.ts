/**
 * The idempotency sweep against DynamoDB Local: it deletes the records, and the reservations of
 * keyed ids, that expired, reading the table, and keeps the live ones and every pet; a record
 * claimed again after it expired is kept; a run stops at its bound and the next goes on; it logs
 * counts, never a key, and a failure in one line that names no table.
 */
import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createHandler as createSweep, IdempotencySweepFailed } from '../../functions/idempotency-sweep';
import { idempotentRequest, IDEMPOTENCY_WINDOW_SECONDS, type IdempotentRequest } from '../../shared/idempotency';
import { idempotencyRecords } from '../../shared/idempotency-records';
import { logger } from '../../shared/logger';
import type { NewPet } from '../../shared/models';
import { petsRepository } from '../../shared/pets-repository';
import { context } from '../support/events';
import { createTestTables, type TestTables } from '../support/tables';
import { databaseClient } from '../support/database';

const rex: NewPet = { name: 'Rex', categoryId: 1, status: 'available' };
const HOUR = 3600;
let keys = 0;
const request = () => idempotentRequest('sweep-caller', `sweep-key-${++keys}`, rex);

/** Fresh tables for each test: a sweep reads every record of its table. */
let tables: TestTables;
beforeEach(async () => {
  tables = await createTestTables();
});

const pets = () => petsRepository({ client: tables.client, tableName: tables.pets, idempotencyTableName: tables.idempotency });
const records = (client = tables.client) => idempotencyRecords({ client, tableName: tables.idempotency });
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The sweep's handler at `now` (epoch seconds). */
const sweepAt = (now: number, options: { maxDeletes?: number; client?: TestTables['client'] } = {}) =>
  createSweep({ records: records(options.client), now: () => new Date(now * 1000), ...options });

const recordKeys = async () => {
  const { Items = [] } = await tables.client.send(new ScanCommand({ TableName: tables.idempotency, ConsistentRead: true }));
  return Items.map((item) => String(item.id)).sort();
};
const petCount = async () =>
  (await tables.client.send(new ScanCommand({ TableName: tables.pets, ConsistentRead: true, Select: 'COUNT' }))).Count ?? 0;

/** A record as a keyed create writes it, expiring at `expiresAt`. */
const putRecord = async ({ recordKey, requestHash }: IdempotentRequest, expiresAt: number) =>
  tables.client.send(
    new PutCommand({
      TableName: tables.idempotency,
      Item: { id: recordKey, requestHash, petId: 1, expiresAt },
    }),
  );

describe('the idempotency sweep', () => {
  it('deletes the records whose window is over and the ids they reserved, keeps the live ones and every pet, and logs counts only', async () => {
    const created = [request(), request(), request()];
    for (const keyed of created) await pets().createOnce(rex, keyed);
    const live = request();
    await putRecord(live, nowSeconds() + 3 * IDEMPOTENCY_WINDOW_SECONDS);
    const info = vi.spyOn(logger, 'info');

    // A sweep inside the window deletes nothing; one an hour after it, the three created and the
    // three ids they reserved.
    expect(await recordKeys()).toHaveLength(7);
    expect(await sweepAt(nowSeconds())({}, context)).toEqual({ deleted: 0, kept: 0, cutShort: false });
    const later = nowSeconds() + IDEMPOTENCY_WINDOW_SECONDS + HOUR;
    expect(await sweepAt(later)({}, context)).toEqual({ deleted: 6, kept: 0, cutShort: false });
    expect(await recordKeys()).toEqual([live.recordKey]);
    expect(await petCount()).toBe(3);

    const logged = JSON.stringify(info.mock.calls);
    expect(info).toHaveBeenCalledWith('expired idempotency records swept', { deleted: 6, kept: 0, cutShort: false });
    for (const { recordKey, requestHash } of [...created, live]) {
      expect(logged).not.toContain(recordKey);
      expect(logged).not.toContain(requestHash);
    }
    info.mockRestore();
  });

  it('after the sweep, the same key creates anew', async () => {
    const keyed = request();
    const first = await pets().createOnce(rex, keyed);
    await sweepAt(nowSeconds() + IDEMPOTENCY_WINDOW_SECONDS + HOUR)({}, context);
    const again = await pets().createOnce(rex, keyed);
    expect(again.kind).toBe('created');
    expect(again).not.toEqual(first);
  });

  it('keeps a record that a create claimed again between the read of the table and the delete', async () => {
    const now = nowSeconds();
    const keyed = request();
    await putRecord(keyed, now - HOUR);
    // The create's claim lands just before the sweep's delete of that record.
    const client = databaseClient({ endpoint: tables.endpoint });
    let claimed = false;
    client.middlewareStack.add(
      (next, { commandName }) =>
        async (args) => {
          if (commandName === 'DeleteItemCommand' && !claimed) {
            claimed = true;
            expect((await pets().createOnce(rex, keyed)).kind).toBe('created');
          }
          return next(args);
        },
      { step: 'initialize', name: 'claimFirst' },
    );
    expect(await sweepAt(now, { client })({}, context)).toEqual({ deleted: 0, kept: 1, cutShort: false });
    const { Item } = await tables.client.send(new GetCommand({ TableName: tables.idempotency, Key: { id: keyed.recordKey } }));
    expect(Item?.expiresAt).toBeGreaterThan(now);
  });

  it('stops at its bound, and the next run deletes the rest', async () => {
    const now = nowSeconds();
    const expired = Array.from({ length: 5 }, (_, index) => ({ keyed: request(), expiresAt: now - (5 - index) * HOUR }));
    for (const { keyed, expiresAt } of expired) await putRecord(keyed, expiresAt);
    expect(await sweepAt(now, { maxDeletes: 3 })({}, context)).toEqual({ deleted: 3, kept: 0, cutShort: true });
    expect(await recordKeys()).toHaveLength(2);
    expect(await sweepAt(now, { maxDeletes: 3 })({}, context)).toEqual({ deleted: 2, kept: 0, cutShort: false });
    expect(await recordKeys()).toEqual([]);
  });

  it('deletes a record however long ago it expired, after which its key creates anew', async () => {
    const now = nowSeconds();
    const ancient = request();
    await putRecord(ancient, now - 30 * 24 * HOUR);
    expect(await sweepAt(now)({}, context)).toEqual({ deleted: 1, kept: 0, cutShort: false });
    expect(await recordKeys()).toEqual([]);
    expect((await pets().createOnce(rex, ancient)).kind).toBe('created');
  });

  it('fails in one line that names neither the table nor a key, and throws nothing else', async () => {
    const error = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    const sweep = createSweep({ records: idempotencyRecords({ client: tables.client, tableName: 'no-such-idempotency-table' }) });
    await expect(sweep({}, context)).rejects.toBeInstanceOf(IdempotencySweepFailed);
    expect(error).toHaveBeenCalledTimes(1);
    expect(JSON.stringify(error.mock.calls)).not.toContain('no-such-idempotency-table');
    error.mockRestore();
  });
});
