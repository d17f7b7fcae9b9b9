/**
 * The idempotency records as the sweep sees them: the expired ones, found through the expiry index
 * (shared/tables.ts), and deleted one by one on the condition that each is still expired. A record
 * that a create claimed again after it expired has a new expiry, so its delete is refused and the
 * record stays. Keyed creates write the records (shared/pets-repository.ts, `createOnce`).
 */
import { DeleteCommand, paginateQuery, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { dynamoDBOptions, idempotencyTableName } from './config';
import { callReplicated, classifyDatabaseError, createDocumentClient, isConditionFailure } from './dynamodb';
import { expiryBucket, expiryHourOf } from './idempotency';
import { IDEMPOTENCY_EXPIRY_SHARDS, idempotencyExpiryIndex } from './tables';

export interface SweepLimits {
  /** Epoch seconds: records that expired before it go. */
  readonly now: number;
  /** The most deletes one run sends: the rest waits for the next run. */
  readonly maxDeletes: number;
  /** How many hours before `now`'s the run looks back: records that expired earlier than that stay (and still count as none). */
  readonly lookbackHours: number;
}

/** What a sweep did: counts only, never a key. */
export interface SweepResult {
  readonly deleted: number;
  /** Found expired, then claimed again by a create before the delete: kept. */
  readonly kept: number;
  /** Whether it stopped at `maxDeletes` with expired records possibly left for the next run. */
  readonly cutShort: boolean;
}

export interface IdempotencyRecords {
  deleteExpired(limits: SweepLimits): Promise<SweepResult>;
}

export interface IdempotencyRecordsOptions {
  readonly client?: DynamoDBDocumentClient;
  readonly tableName?: string;
}

/** Records a page of the index holds, and so deletes sent at once. */
const PAGE_SIZE = 25;

export const idempotencyRecords = ({
  client = createDocumentClient(dynamoDBOptions()),
  tableName = idempotencyTableName(),
}: IdempotencyRecordsOptions = {}): IdempotencyRecords => {
  /** Deletes one record if it is still expired: whether it did. */
  const deleteIfExpired = async (id: string, now: number): Promise<boolean> => {
    try {
      await callReplicated(() =>
        client.send(
          new DeleteCommand({
            TableName: tableName,
            Key: { id },
            ConditionExpression: '#expiresAt < :now',
            ExpressionAttributeNames: { '#expiresAt': 'expiresAt' },
            ExpressionAttributeValues: { ':now': now },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false; // claimed again since, or gone already
      throw error;
    }
  };

  /** The expired records' keys in one partition of the index, a page at a time. */
  const expiredIn = (bucket: string, now: number) =>
    paginateQuery(
      { client, pageSize: PAGE_SIZE },
      {
        TableName: tableName,
        IndexName: idempotencyExpiryIndex.indexName,
        KeyConditionExpression: '#bucket = :bucket AND #expiresAt < :now',
        ExpressionAttributeNames: { '#bucket': idempotencyExpiryIndex.partitionKey.name, '#expiresAt': 'expiresAt' },
        ExpressionAttributeValues: { ':bucket': bucket, ':now': now },
      },
    );

  const deleteExpired = async ({ now, maxDeletes, lookbackHours }: SweepLimits): Promise<SweepResult> => {
    let sent = 0;
    let deleted = 0;
    /** One partition's expired records, until the run's deletes reach the bound (counted as they are sent). */
    const sweepBucket = async (bucket: string) => {
      for await (const page of expiredIn(bucket, now)) {
        const ids = (page.Items ?? []).map((item) => String(item.id)).slice(0, maxDeletes - sent);
        sent += ids.length;
        const results = await Promise.all(ids.map((id) => deleteIfExpired(id, now)));
        deleted += results.filter(Boolean).length;
        if (sent >= maxDeletes) return;
      }
    };
    const lastHour = expiryHourOf(now);
    // Oldest hours first, so that a run cut short leaves the records that expired last; an hour's
    // shards together. Each waits for all: none goes on after the run has answered.
    for (let hour = lastHour - lookbackHours; hour <= lastHour && sent < maxDeletes; hour += 1) {
      const shards = Array.from({ length: IDEMPOTENCY_EXPIRY_SHARDS }, (_, shard) => sweepBucket(expiryBucket(hour, shard)));
      const failed = (await Promise.allSettled(shards)).find((result): result is PromiseRejectedResult => result.status === 'rejected');
      if (failed) throw classifyDatabaseError(failed.reason);
    }
    return { deleted, kept: sent - deleted, cutShort: sent >= maxDeletes };
  };

  return { deleteExpired };
};
