/**
 * The local stand-in for the audit log group: a DynamoDB Local table next to the keys table
 * (`<keys table>-audit-log`), so the trail lives and dies with the local database (in memory, or
 * in the --persist folder). One item per audit line, keyed by its stream record's id: a record
 * handed twice is still one line, as a reader of the deployed log would count it. One more item
 * says, while it lasts, that the local server cannot read the stream; and one item per stream
 * record whose line could not be written after the retries stands in for the deployed
 * FailedBatches queue. `npm run keys -- audit` runs in another process, and this table is what
 * the two share.
 */
import { DeleteCommand, GetCommand, paginateScan, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AuditWriter } from '../../functions/key-audit';
import type { KeyAuditEntry } from '../../shared/key-audit';
import type { TableDefinition } from '../../shared/tables';
import { ensureTables } from '../dynamodb-local';

/** The local audit log of a keys table. */
export const localAuditLogName = (keysTableName: string): string => `${keysTableName}-audit-log`;

const auditLogTable = {
  id: 'KeyAuditLog',
  defaultName: localAuditLogName('api-keys'),
  // No function reads it: the local log's name follows its keys table's.
  nameVariable: 'KEY_AUDIT_LOG_TABLE_NAME',
  partitionKey: { name: 'eventId', type: 'S' },
  globalSecondaryIndexes: [],
} as const satisfies TableDefinition;

interface AuditLogItem {
  readonly eventId: string;
  readonly keyId: string;
  readonly at: string;
  /** The stream record's sequence number: the order of a key's changes (`at` of a console edit is the stream's, to the minute locally). */
  readonly sequenceNumber: string;
  /** The line as the deployed function logs it. */
  readonly line: string;
}

/** The id of the item that says the trail is stalled: no stream record's id (a UUID) looks like it. */
const STALL_ID = 'trail-stalled';

/** The local server has been failing to read the keys table's stream: nothing is being recorded. */
export interface TrailStall {
  /** When the reads started failing, ISO 8601. */
  readonly since: string;
  /** The error's name; never its message, which may name the stream. */
  readonly reason: string;
}

export const recordTrailStall = async (client: DynamoDBDocumentClient, keysTableName: string, stall: TrailStall): Promise<void> => {
  await client.send(new PutCommand({ TableName: localAuditLogName(keysTableName), Item: { eventId: STALL_ID, ...stall } }));
};

export const clearTrailStall = async (client: DynamoDBDocumentClient, keysTableName: string): Promise<void> => {
  await client.send(new DeleteCommand({ TableName: localAuditLogName(keysTableName), Key: { eventId: STALL_ID } }));
};

/** The stall the local server recorded, if the trail is stalled. */
export const readTrailStall = async (client: DynamoDBDocumentClient, keysTableName: string): Promise<TrailStall | undefined> => {
  const { Item } = await client.send(new GetCommand({ TableName: localAuditLogName(keysTableName), Key: { eventId: STALL_ID } }));
  return Item === undefined ? undefined : { since: String(Item.since), reason: String(Item.reason) };
};

/** What the ids of the failed records' items start with: no stream record's id (a UUID) does. */
const FAILED_RECORD_PREFIX = 'failed-record:';

/**
 * A stream record whose audit line could not be written after the retries, set aside so that the
 * trail moves on: the local stand-in for a message of the deployed FailedBatches queue. It names
 * the record, never its content.
 */
export interface FailedAuditRecord {
  /** The stream record's id. */
  readonly eventId: string;
  readonly sequenceNumber: string;
  /** The id of the key the record is a change of. */
  readonly keyId: string;
  /** When the table's stream recorded the write, ISO 8601. */
  readonly streamAt: string;
  /** When the local server set it aside, ISO 8601. */
  readonly failedAt: string;
  /** How many times its line was tried. */
  readonly attempts: number;
}

export const recordFailedAuditRecord = async (
  client: DynamoDBDocumentClient,
  keysTableName: string,
  failed: FailedAuditRecord,
): Promise<void> => {
  await client.send(
    new PutCommand({
      TableName: localAuditLogName(keysTableName),
      Item: { ...failed, eventId: `${FAILED_RECORD_PREFIX}${failed.eventId}` },
    }),
  );
};

export const ensureLocalAuditLog = (client: DynamoDBDocumentClient, keysTableName: string): Promise<void> =>
  ensureTables(client, [{ definition: auditLogTable, name: localAuditLogName(keysTableName) }]);

/** The key-audit function's writer for the local server: each line an item of the local audit log. */
export const localAuditWriter =
  (client: DynamoDBDocumentClient, keysTableName: string): AuditWriter =>
  async (entry) => {
    const { eventId, sequenceNumber } = entry;
    const item: AuditLogItem = { eventId, keyId: entry.keyId, at: entry.at, sequenceNumber, line: JSON.stringify(entry) };
    await client.send(new PutCommand({ TableName: localAuditLogName(keysTableName), Item: item }));
  };

/** Stream order: sequence numbers are decimal strings of any length. */
const byStreamOrder = (a: { readonly sequenceNumber: string }, b: { readonly sequenceNumber: string }) =>
  a.sequenceNumber.length - b.sequenceNumber.length || a.sequenceNumber.localeCompare(b.sequenceNumber);

/** What the local audit log holds of the trail: its lines, and the records set aside (the stall is read apart). */
export interface LocalAuditTrail {
  /** The lines, in the order the changes were made. */
  readonly entries: KeyAuditEntry[];
  /** The records set aside, in stream order. */
  readonly failed: FailedAuditRecord[];
}

/** A failed record's item as the record it stands for. */
const failedRecordOf = (item: Record<string, unknown>): FailedAuditRecord => ({
  eventId: String(item.eventId).slice(FAILED_RECORD_PREFIX.length),
  sequenceNumber: String(item.sequenceNumber),
  keyId: String(item.keyId),
  streamAt: String(item.streamAt),
  failedAt: String(item.failedAt),
  attempts: Number(item.attempts),
});

/**
 * The local audit trail, in one scan of the log (a Scan reads every item whatever it returns):
 * only one key's lines and records when `keyId` is given (both name their key; the stall names none).
 */
export const readLocalAuditTrail = async (
  client: DynamoDBDocumentClient,
  keysTableName: string,
  keyId?: string,
): Promise<LocalAuditTrail> => {
  const lines: AuditLogItem[] = [];
  const failed: FailedAuditRecord[] = [];
  const filter = keyId === undefined ? {} : { FilterExpression: 'keyId = :keyId', ExpressionAttributeValues: { ':keyId': keyId } };
  for await (const page of paginateScan({ client }, { TableName: localAuditLogName(keysTableName), ...filter })) {
    for (const item of page.Items ?? []) {
      const { eventId } = item as { readonly eventId: string };
      if (eventId.startsWith(FAILED_RECORD_PREFIX)) failed.push(failedRecordOf(item));
      else if (eventId !== STALL_ID) lines.push(item as AuditLogItem);
    }
  }
  return {
    entries: lines.sort(byStreamOrder).map((item) => JSON.parse(item.line) as KeyAuditEntry),
    failed: failed.sort(byStreamOrder),
  };
};
