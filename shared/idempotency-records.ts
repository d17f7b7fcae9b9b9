/**
 * The idempotency records as the sweep sees them: the expired ones (records, and the reservations
 * of keyed ids beside them), found by reading the table (a Scan, which returns the expired ones
 * only), and deleted one by one on the condition that each is still expired. A Scan reads every
 * item the table holds, about a day of creates, once a run: a few read units per keyed create over
 * its day, where an index of the expiries cost a write unit more for each put and each delete, in
 * every region of the stage (docs: costs). A record
 * that a create claimed again after it expired has a new expiry, so its delete is refused and the
 * record stays. Keyed creates write the records (shared/pets-repository.ts, `createOnce`).
 */
import { DeleteCommand, paginateScan, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { dynamoDBOptions, idempotencyTableName } from './config';
import { callReplicated, classifyDatabaseError, createDocumentClient, isConditionFailure } from './dynamodb';

export interface SweepLimits {
  /** Epoch seconds: records that expired before it go. */
  readonly now: number;
  /** The most deletes one run sends: the rest waits for the next run. */
  readonly maxDeletes: number;
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

/** Deletes sent at once. */
const DELETES_AT_ONCE = 25;

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

  /** The expired items' keys, a page (up to 1 MB read) at a time. */
  const expired = (now: number) =>
    paginateScan(
      { client },
      {
        TableName: tableName,
        ProjectionExpression: '#id',
        FilterExpression: '#expiresAt < :now',
        ExpressionAttributeNames: { '#id': 'id', '#expiresAt': 'expiresAt' },
        ExpressionAttributeValues: { ':now': now },
      },
    );

  const deleteExpired = async ({ now, maxDeletes }: SweepLimits): Promise<SweepResult> => {
    let sent = 0;
    let deleted = 0;
    try {
      for await (const page of expired(now)) {
        const ids = (page.Items ?? []).map((item) => String(item.id));
        // DELETES_AT_ONCE at a time, each batch waited for: none goes on after the run has answered.
        for (let start = 0; start < ids.length && sent < maxDeletes; start += DELETES_AT_ONCE) {
          const batch = ids.slice(start, Math.min(start + DELETES_AT_ONCE, start + maxDeletes - sent));
          sent += batch.length;
          const results = await Promise.all(batch.map((id) => deleteIfExpired(id, now)));
          deleted += results.filter(Boolean).length;
        }
        if (sent >= maxDeletes) break;
      }
    } catch (error) {
      throw classifyDatabaseError(error);
    }
    return { deleted, kept: sent - deleted, cutShort: sent >= maxDeletes };
  };

  return { deleteExpired };
};
