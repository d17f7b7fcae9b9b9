/**
 * The key-audit function: reads the keys table's DynamoDB stream and writes one JSON line per
 * change to a key (shared/key-audit.ts) to its log group, the stage's audit log group. Deployed,
 * the line goes through the logger; the local server passes a writer that stores it instead.
 * An entry too long for one log event is written truncated and marked so (fitAuditEntry). A line
 * that cannot be written fails its record and the ones after it (a partial batch response), so
 * the stream hands them again, in order; the lines before stay written.
 *
 * A stage in several regions runs it in each, on its region's replica, whose stream holds every
 * change wherever it was made: it writes the lines of the changes made in its own region only
 * (logsChangeHere; a change stamped with no region of the stage, such as a console edit, in the
 * home region), and after a batch with a change that can alter the authorizer's answers
 * (changesAnswer), made here or not, it flushes its own region's authorizer cache: the replica has
 * just received the change, and an answer cached before it would outlive it by up to the cache's TTL.
 */
import middy from '@middy/core';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { stageAuthorizerCacheFlush } from '../shared/authorizer-cache';
import {
  AUDIT_LOG_LEVEL,
  AUDIT_MESSAGE,
  auditEntryOf,
  changesAnswer,
  fitAuditEntry,
  HOME_REGION_VARIABLE,
  logsChangeHere,
  sequenceNumberOf,
  type AuditRegion,
  type KeyAuditEntry,
} from '../shared/key-audit';
import { logger, safeErrorFields } from '../shared/logger';
import { stageRegionsOf } from '../shared/usage-key-release';

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
  /** The function's own region. @default AWS_REGION */
  readonly region?: string;
  /** The stage's home region, which records the changes no region stamped; none on a stage in one region. @default HOME_REGION */
  readonly homeRegion?: string;
  /**
   * The stage's regions, the home region first: a change stamped with none of them is recorded in
   * the home region (logsChangeHere). @default STAGE_REGIONS
   */
  readonly stageRegions?: readonly string[];
  /**
   * Flushes this region's stage's authorizer cache. By default that of the stage the environment
   * names (REST_API_ID, API_STAGE_NAME); none where it names none. The local server passes the
   * same flush, made on its gateway's stand-in for API Gateway (tools/local-server/key-audit-stream.ts).
   */
  readonly flushAuthorizerCache?: () => Promise<void>;
}

/**
 * After a batch with a change that alters answers: the flush. One that fails is said and does not
 * fail the batch: the answers it would drop end within the cache's TTL all the same, while a failed
 * batch would hold every later change of its shard (and its audit line) behind the control plane,
 * then set it aside after its retries.
 */
const flushAfterChange = async (flush: (() => Promise<void>) | undefined) => {
  await flush?.().catch((error: unknown) =>
    logger.error("authorizer cache not flushed after a key change: the stage's cached answers end within its TTL", safeErrorFields(error)),
  );
};

export const createHandler = ({
  write = logAuditEntry,
  region = process.env.AWS_REGION,
  homeRegion = process.env[HOME_REGION_VARIABLE] || undefined,
  stageRegions = stageRegionsOf(),
  flushAuthorizerCache = stageAuthorizerCacheFlush(),
}: KeyAuditDependencies = {}) => {
  const here: AuditRegion = { region, homeRegion, stageRegions };
  return middy<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
    let answersChanged = false;
    let failed: string | undefined;
    for (const record of event.Records) {
      try {
        const entry = logsChangeHere(record, here) ? auditEntryOf(record) : undefined;
        if (entry) await write(fitAuditEntry(entry));
      } catch (error) {
        logger.error('audit line not written: the stream hands the record again', {
          sequenceNumber: sequenceNumberOf(record),
          ...safeErrorFields(error),
        });
        // Retried from here on: the records after it wait, so the trail keeps its order.
        failed = sequenceNumberOf(record);
        break;
      }
      answersChanged ||= changesAnswer(record);
    }
    if (answersChanged) await flushAfterChange(flushAuthorizerCache);
    return { batchItemFailures: failed === undefined ? [] : [{ itemIdentifier: failed }] };
  });
};

export const handler = createHandler();
