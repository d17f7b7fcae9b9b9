/**
 * The key audit trail, locally: the same key-audit function Lambda runs, fed from the keys
 * table's stream in DynamoDB Local as Lambda's event source mapping feeds it (a
 * DynamoDBStreamEvent in AWS's shape, from the oldest record on, a batch handed again while the
 * function reports a record of it failed, up to AUDIT_STREAM_RETRY_ATTEMPTS times, then that
 * record set aside in the local audit log's failed records and the rest handed on), writing to
 * the local audit log; and the expiry sweep on a timer, as the schedule runs it deployed. A stream
 * it cannot read stops the start; one that fails later is said once, in the log and to
 * `npm run keys -- audit`, not at every read.
 */
import { DescribeStreamCommand } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { createHandler as createKeyAuditHandler } from '../../functions/key-audit';
import { createHandler as createKeyExpiryHandler } from '../../functions/key-expiry';
import { keyIdOf } from '../../shared/api-keys';
import type { ApiKeysRepository } from '../../shared/api-keys-repository';
import { AUDIT_STREAM_RETRY_ATTEMPTS, sequenceNumberOf } from '../../shared/key-audit';
import { logger, safeErrorFields } from '../../shared/logger';
import { lambdaContext } from '../../shared/gateway-events';
import {
  clearTrailStall,
  ensureLocalAuditLog,
  localAuditWriter,
  recordFailedAuditRecord,
  recordTrailStall,
  type FailedAuditRecord,
  type TrailStall,
} from './key-audit-log';
import { asInvocation } from './invocation';
import { keysTableStream, streamReader, streamsClientOf, type StreamRecord } from './keys-stream';

export interface LocalKeyAuditOptions {
  /** Milliseconds between reads of the stream. */
  readonly pollIntervalMs?: number;
  /** Milliseconds between runs of the expiry sweep (DEFAULT_EXPIRY_SWEEP_INTERVAL_MS; deployed: EXPIRY_SWEEP_INTERVAL of the stack). */
  readonly expirySweepIntervalMs?: number;
}

export interface LocalKeyAuditDependencies {
  /** The client on the keys table; its stream is read with the same endpoint, region and credentials. */
  readonly client: DynamoDBDocumentClient;
  readonly keysTableName: string;
  readonly keys: ApiKeysRepository;
  /**
   * The region this trail stands for: it records the changes stamped with it (logsChangeHere). By
   * default the region of the client's stream.
   */
  readonly region?: string;
  /** The home region of the stage it stands for, which records the unstamped changes; none for a stage in one region. */
  readonly homeRegion?: string;
  /**
   * The regions of the stage it stands for, the home region first: a change stamped with none of
   * them is the home region's to record, as deployed (STAGE_REGIONS).
   */
  readonly stageRegions?: readonly string[];
  /**
   * The key-audit function's flush of its stage's authorizer cache, after a change that alters
   * answers: the local gateway's (local-stack.ts), made as the function makes it deployed. None: no
   * gateway to flush.
   */
  readonly flushAuthorizerCache?: () => Promise<void>;
}

export interface LocalKeyAudit {
  /** Reads the stream once, now: every change made before the call is in the log when it resolves. */
  poll(): Promise<void>;
  /** Runs the expiry sweep once, now. */
  sweep(): Promise<void>;
  stop(): Promise<void>;
}

const DEFAULT_POLL_INTERVAL_MS = 1_000;
/** Shorter than the deployed EXPIRY_SWEEP_INTERVAL (infra/constructs/key-audit.ts), so a local expiry shows in the trail soon. */
const DEFAULT_EXPIRY_SWEEP_INTERVAL_MS = 60_000;

/** The keys table's stream cannot be read: the trail would record nothing. */
export class AuditStreamUnreadable extends Error {
  constructor(readonly reason: string) {
    super(`the audit trail of key changes cannot read the keys table's stream (${reason}), so key changes would go unrecorded`);
  }
}

const errorName = (error: unknown): string => (error instanceof Error ? error.name : typeof error);

/**
 * A stream record as Lambda hands it: the same fields, ApproximateCreationDateTime in epoch
 * seconds. The images' attribute values are the same JSON shape in both type definitions.
 */
const lambdaRecord = (record: StreamRecord, streamArn: string, region: string): DynamoDBRecord => {
  const created = record.dynamodb?.ApproximateCreationDateTime;
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: record.eventSource ?? 'aws:dynamodb',
    awsRegion: record.awsRegion ?? region,
    dynamodb: {
      ...(record.dynamodb as NonNullable<DynamoDBRecord['dynamodb']>),
      ...(created ? { ApproximateCreationDateTime: Math.floor(created.getTime() / 1000) } : {}),
    },
    eventSourceARN: streamArn,
  };
};

/** Names a stream record and nothing of its content: which key, where in the stream, when. */
const failedRecord = (record: DynamoDBRecord, attempts: number): FailedAuditRecord => {
  const sequenceNumber = sequenceNumberOf(record);
  const created = record.dynamodb?.ApproximateCreationDateTime;
  return {
    eventId: record.eventID ?? sequenceNumber,
    sequenceNumber,
    keyId: keyIdOf(record.dynamodb?.Keys?.keyHash?.S ?? ''),
    streamAt: created === undefined ? '' : new Date(created * 1000).toISOString(),
    failedAt: new Date().toISOString(),
    attempts,
  };
};

export const startLocalKeyAudit = async (
  {
    client,
    keysTableName,
    keys,
    region: ownRegion,
    homeRegion,
    stageRegions = [],
    flushAuthorizerCache = async () => undefined,
  }: LocalKeyAuditDependencies,
  { pollIntervalMs = DEFAULT_POLL_INTERVAL_MS, expirySweepIntervalMs = DEFAULT_EXPIRY_SWEEP_INTERVAL_MS }: LocalKeyAuditOptions = {},
): Promise<LocalKeyAudit> => {
  const streamArn = await keysTableStream(client, keysTableName);
  await ensureLocalAuditLog(client, keysTableName);
  const streams = await streamsClientOf(client);
  const region = await streams.config.region();
  // Read once now: a trail that records nothing is said at the start, not found out later.
  try {
    await streams.send(new DescribeStreamCommand({ StreamArn: streamArn, Limit: 1 }));
  } catch (error) {
    streams.destroy();
    throw new AuditStreamUnreadable(errorName(error));
  }
  // A stall left by an earlier run is over: the stream reads again.
  await clearTrailStall(client, keysTableName);
  // Run as the two functions' invocations; the audit log's table stands in for CloudWatch Logs.
  const keysTable = { tables: { apiKeys: keysTableName } };
  const writeAudit = asInvocation(
    { functionName: 'keyAudit', ...keysTable },
    createKeyAuditHandler({
      write: localAuditWriter(client, keysTableName),
      region: ownRegion ?? region,
      homeRegion,
      stageRegions,
      flushAuthorizerCache,
    }),
  );
  const sweepExpired = asInvocation({ functionName: 'keyExpiry', ...keysTable }, createKeyExpiryHandler({ keys }));

  /** How many times each failing record (by sequence number) has failed so far. */
  const failures = new Map<string, number>();
  /** The records set aside after their retries, left out when their batch is handed again. */
  const setAside = new Set<string>();

  /**
   * Hands a batch to the function, again without a record set aside; true once every line is
   * written, false when a record failed and is to be tried again at the next read (where Lambda
   * resumes at the failed record, with ReportBatchItemFailures: the lines before it are written
   * again under the same eventId, which the local log keeps once). A record failed the first time
   * and AUDIT_STREAM_RETRY_ATTEMPTS times more is set aside, as Lambda sends it to the
   * FailedBatches queue once its batch is bisected down to it; if that cannot be recorded, it is
   * tried again, never dropped unsaid.
   */
  const handBatch = async (batch: readonly DynamoDBRecord[]): Promise<boolean> => {
    for (;;) {
      const pending = batch.filter((record) => !setAside.has(sequenceNumberOf(record)));
      if (pending.length === 0) return true;
      const { batchItemFailures } = await writeAudit({ Records: pending }, lambdaContext('pet-store-local-keyAudit'));
      const failedId = batchItemFailures[0]?.itemIdentifier;
      if (failedId === undefined) return true;
      const failed = pending.find((record) => sequenceNumberOf(record) === failedId);
      if (failed === undefined) return false;
      const attempts = (failures.get(failedId) ?? 0) + 1;
      failures.set(failedId, attempts);
      if (attempts <= AUDIT_STREAM_RETRY_ATTEMPTS) return false;
      const record = failedRecord(failed, attempts);
      await recordFailedAuditRecord(client, keysTableName, record);
      logger.error('audit line given up after its retries: the record is set aside in the local failed records', { ...record });
      setAside.add(failedId);
      failures.delete(failedId);
    }
  };

  // From the oldest record on, as a new event source mapping starts.
  const stream = streamReader(streams, streamArn, {
    firstShardsAt: 'TRIM_HORIZON',
    handle: async (records) => {
      const batch = records.map((record) => lambdaRecord(record, streamArn, region));
      // Handed again on the next read from the batch's start.
      if (!(await handBatch(batch))) return false;
      for (const record of batch) {
        setAside.delete(sequenceNumberOf(record));
        failures.delete(sequenceNumberOf(record));
      }
      return true;
    },
  });

  let stopped = false;
  /** Since when each task has been failing: said when it starts failing and when it recovers, not at every try. */
  const failingSince = new Map<string, Date>();
  const outcome = (task: string, failure: { error: unknown } | undefined) => {
    const since = failingSince.get(task);
    if (failure !== undefined && since === undefined && !stopped) {
      failingSince.set(task, new Date());
      logger.warn('local key audit failing', { task, ...safeErrorFields(failure.error) });
    } else if (failure === undefined && since !== undefined) {
      failingSince.delete(task);
      logger.info('local key audit recovered', { task, failingSince: since.toISOString() });
    }
  };

  /** The stall the audit log should say (while the stream fails), and whether it says it yet. */
  let stall: TrailStall | undefined;
  let recordedStall = false;
  const recordStall = async () => {
    if (stall !== undefined && !recordedStall) {
      await recordTrailStall(client, keysTableName, stall);
      recordedStall = true;
    } else if (stall === undefined && recordedStall) {
      await clearTrailStall(client, keysTableName);
      recordedStall = false;
    }
  };

  let polling: Promise<void> = Promise.resolve();
  const poll = (): Promise<void> => {
    // One read at a time, whether the one before failed or not.
    polling = polling
      .catch(() => undefined)
      .then(async () => {
        let failure: { error: unknown } | undefined;
        try {
          await stream.read();
        } catch (error) {
          failure = { error };
        }
        outcome('stream', failure);
        if (!stopped) {
          const since = failingSince.get('stream');
          stall = since === undefined ? undefined : (stall ?? { since: since.toISOString(), reason: errorName(failure?.error) });
          // Tried again at the next read when the database refuses it too.
          await recordStall().catch(() => undefined);
        }
        if (failure !== undefined) throw failure.error;
      });
    return polling;
  };
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweep = async () => {
    sweeping = sweepExpired({}, lambdaContext('pet-store-local-keyExpiry')).then(
      () => outcome('expiry sweep', undefined),
      (error: unknown) => {
        outcome('expiry sweep', { error });
        throw error;
      },
    );
    await sweeping;
  };

  let pollTimer: NodeJS.Timeout | undefined;
  const schedulePoll = () => {
    pollTimer = setTimeout(() => {
      void poll()
        .catch(() => undefined) // said by outcome()
        .finally(() => !stopped && schedulePoll());
    }, pollIntervalMs);
  };
  schedulePoll();
  void sweep().catch(() => undefined);
  const sweepTimer = setInterval(() => void sweep().catch(() => undefined), expirySweepIntervalMs);

  return {
    poll,
    sweep,
    stop: async () => {
      stopped = true;
      clearTimeout(pollTimer);
      clearInterval(sweepTimer);
      await Promise.all([polling, sweeping].map((task) => task.catch(() => undefined)));
      streams.destroy();
    },
  };
};
