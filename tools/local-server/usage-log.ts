/**
 * The local stand-in for API Gateway's usage records: a DynamoDB Local table next to the keys
 * table (`<keys table>-usage`), one item per usage key and UTC day holding the requests the local
 * gateway's meter let through that day. `npm run keys -- usage` runs in another process, and this
 * table is what the two share. The meter is in memory and starts empty with each start of the
 * local stack, so the table is emptied then too: both count the same requests.
 */
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { logger } from '../../shared/logger';
import type { TableDefinition } from '../../shared/tables';
import { ensureTables } from '../dynamodb-local';

/** The local usage table of a keys table. */
export const localUsageLogName = (keysTableName: string): string => `${keysTableName}-usage`;

const usageLogTable = {
  id: 'KeyUsageLog',
  defaultName: localUsageLogName('api-keys'),
  // No function reads it: the local table's name follows its keys table's.
  nameVariable: 'KEY_USAGE_LOG_TABLE_NAME',
  partitionKey: { name: 'id', type: 'S' },
  globalSecondaryIndexes: [],
} as const satisfies TableDefinition;

/** An item's id: the usage key's id and the day (usage key ids hold no `#`). */
const itemId = (usageKeyId: string, day: string): string => `${usageKeyId}#${day}`;

/** BatchGetItem's most keys a call. */
const BATCH_GET_MAX_KEYS = 100;

export interface UsageLog {
  /**
   * Records that `usageKeyId` has been let through `used` times on `day` (YYYY-MM-DD): the latest
   * count wins, since the meter's count is recorded as it changes, and goes down when a request is
   * taken back. Resolves once the latest count is written, or failed to be (a warning: bookkeeping
   * never refuses a request). One write at a time per item: counts that arrive meanwhile go in the next.
   */
  record(usageKeyId: string, day: string, used: number): Promise<void>;
}

/** Empties (or creates) the usage table of `keysTableName`, and returns its writer. */
export const startLocalUsageLog = async (client: DynamoDBDocumentClient, keysTableName: string): Promise<UsageLog> => {
  const tableName = localUsageLogName(keysTableName);
  await client.send(new DeleteTableCommand({ TableName: tableName })).catch((error: unknown) => {
    if (!(error instanceof Error && error.name === 'ResourceNotFoundException')) throw error;
  });
  await ensureTables(client, [{ definition: usageLogTable, name: tableName }]);

  interface Item {
    day: string;
    wanted: number;
    written: number;
    writing: Promise<void> | undefined;
  }
  const items = new Map<string, Item>();
  const write = async (id: string, item: Item): Promise<void> => {
    while (item.written !== item.wanted) {
      const used = item.wanted;
      try {
        await client.send(new PutCommand({ TableName: tableName, Item: { id, used } }));
        item.written = used;
      } catch (error) {
        // The error's name only: its message may name the table.
        logger.warn('local usage not recorded', { reason: error instanceof Error ? error.name : typeof error });
        break;
      }
    }
    item.writing = undefined;
  };
  return {
    record(usageKeyId, day, used) {
      const id = itemId(usageKeyId, day);
      let item = items.get(id);
      if (item === undefined) {
        // A new day: the items of the days before are written for good.
        for (const [other, { day: otherDay }] of items) if (otherDay !== day) items.delete(other);
        item = { day, wanted: 0, written: 0, writing: undefined };
        items.set(id, item);
      }
      item.wanted = used;
      item.writing ??= write(id, item);
      return item.writing;
    },
  };
};

/**
 * The requests recorded for each usage key on each day asked, by usage key id and then by day
 * (a day with none is absent). No usage table (no local server has run on this database) is no use.
 */
export const readLocalUsage = async (
  client: DynamoDBDocumentClient,
  keysTableName: string,
  usageKeyIds: readonly string[],
  days: readonly string[],
): Promise<ReadonlyMap<string, ReadonlyMap<string, number>>> => {
  const tableName = localUsageLogName(keysTableName);
  const ids = [...new Set(usageKeyIds.flatMap((usageKeyId) => days.map((day) => itemId(usageKeyId, day))))];
  const used = new Map<string, number>();
  try {
    for (let start = 0; start < ids.length; start += BATCH_GET_MAX_KEYS) {
      let keys: Array<Record<string, unknown>> = ids.slice(start, start + BATCH_GET_MAX_KEYS).map((id) => ({ id }));
      while (keys.length > 0) {
        const answer = await client.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: keys } } }));
        for (const item of answer.Responses?.[tableName] ?? []) {
          if (typeof item.id === 'string' && typeof item.used === 'number') used.set(item.id, item.used);
        }
        keys = answer.UnprocessedKeys?.[tableName]?.Keys ?? [];
      }
    }
  } catch (error) {
    if (!(error instanceof Error && error.name === 'ResourceNotFoundException')) throw error;
  }
  return new Map(
    usageKeyIds.map((usageKeyId) => [
      usageKeyId,
      new Map(
        days.flatMap((day): Array<[string, number]> => {
          const count = used.get(itemId(usageKeyId, day));
          return count === undefined ? [] : [[day, count]];
        }),
      ),
    ]),
  );
};
