/**
 * The key-audit function: reads the keys table's DynamoDB stream and writes one JSON line per
 * change to a key (shared/key-audit.ts) to its log group, the stage's audit log group. Deployed,
 * the line goes through the logger; the local server passes a writer that stores it instead.
 * A line that cannot be written fails its record and the ones after it (a partial batch
 * response), so the stream hands them again, in order; the lines before stay written.
 */
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { auditEntryOf, type KeyAuditEntry } from '../shared/key-audit';
import { logger, safeErrorFields } from '../shared/logger';

/** The stream record a line comes from: the same each time the record is handed again. */
export interface AuditSource {
  readonly eventId: string;
  /** The record's place in its shard: a key's records are in this order. */
  readonly sequenceNumber: string;
}

/** Writes one audit line. */
export type AuditWriter = (entry: KeyAuditEntry, source: AuditSource) => Promise<void> | void;

/** The line as CloudWatch Logs keeps it: the entry's fields at the top, so a filter pattern can name them. */
export const logAuditEntry: AuditWriter = (entry) => logger.info('key change', { ...entry });

export interface KeyAuditDependencies {
  readonly write?: AuditWriter;
}

const sequenceNumberOf = (record: DynamoDBRecord): string => record.dynamodb?.SequenceNumber ?? record.eventID ?? '';

export const createHandler = ({ write = logAuditEntry }: KeyAuditDependencies = {}) =>
  middy<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
    for (const record of event.Records) {
      try {
        const entry = auditEntryOf(record);
        if (entry) await write(entry, { eventId: record.eventID ?? sequenceNumberOf(record), sequenceNumber: sequenceNumberOf(record) });
      } catch (error) {
        logger.error('audit line not written: the stream hands the record again', {
          sequenceNumber: sequenceNumberOf(record),
          ...safeErrorFields(error),
        });
        // Retried from here on: the records after it wait, so the trail keeps its order.
        return { batchItemFailures: [{ itemIdentifier: sequenceNumberOf(record) }] };
      }
    }
    return { batchItemFailures: [] };
  });

export const handler = createHandler();
