/**
 * The key-audit function: reads the keys table's DynamoDB stream and writes one JSON line per
 * change to a key (shared/key-audit.ts) to its log group, the stage's audit log group. Deployed,
 * the line goes through the logger; the local server passes a writer that stores it instead.
 * An entry too long for one log event is written truncated and marked so (fitAuditEntry). A line
 * that cannot be written fails its record and the ones after it (a partial batch response), so
 * the stream hands them again, in order; the lines before stay written.
 */
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { AUDIT_LOG_LEVEL, AUDIT_MESSAGE, auditEntryOf, fitAuditEntry, sequenceNumberOf, type KeyAuditEntry } from '../shared/key-audit';
import { logger, safeErrorFields } from '../shared/logger';

/** Writes one audit line. The entry names its stream record (eventId, sequenceNumber), and fits in one log event. */
export type AuditWriter = (entry: KeyAuditEntry) => Promise<void> | void;

/**
 * The audit lines' own logger: its level is fixed here (a level given in code wins over
 * POWERTOOLS_LOG_LEVEL), and the stack fixes the function's Lambda log level to the same, so a
 * noise setting for the other functions' lines cannot drop a line of the trail.
 */
const auditLogger = logger.createChild({ logLevel: AUDIT_LOG_LEVEL });

/** The line as CloudWatch Logs keeps it: the entry's fields at the top, so a filter pattern can name them. */
export const logAuditEntry: AuditWriter = (entry) => auditLogger.info(AUDIT_MESSAGE, { ...fitAuditEntry(entry) });

export interface KeyAuditDependencies {
  readonly write?: AuditWriter;
}

export const createHandler = ({ write = logAuditEntry }: KeyAuditDependencies = {}) =>
  middy<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
    for (const record of event.Records) {
      try {
        const entry = auditEntryOf(record);
        if (entry) await write(fitAuditEntry(entry));
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
