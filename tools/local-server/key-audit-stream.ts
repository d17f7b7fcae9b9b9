/**
 * The key audit trail, locally: the same key-audit function Lambda runs, fed from the keys
 * table's stream in DynamoDB Local as Lambda's event source mapping feeds it (a
 * DynamoDBStreamEvent in AWS's shape, from the oldest record on, a batch handed again while the
 * function reports a record of it failed), writing to the local audit log; and the expiry sweep on a timer,
 * as the schedule runs it deployed.
 */
import { DescribeTableCommand, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type GetRecordsCommandOutput,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { createHandler as createKeyAuditHandler } from '../../functions/key-audit';
import { createHandler as createKeyExpiryHandler } from '../../functions/key-expiry';
import type { ApiKeysRepository } from '../../shared/api-keys-repository';
import { logger, safeErrorFields } from '../../shared/logger';
import { apiKeysTable } from '../../shared/tables';
import { lambdaContext } from '../../shared/gateway-events';
import { ensureLocalAuditLog, localAuditWriter } from './key-audit-log';
import { asInvocation } from './invocation';

export interface LocalKeyAuditOptions {
  /** Milliseconds between reads of the stream. */
  readonly pollIntervalMs?: number;
  /** Milliseconds between runs of the expiry sweep (DEFAULT_EXPIRY_SWEEP_INTERVAL_MS; deployed: EXPIRY_SWEEP_INTERVAL of the stack). */
  readonly expirySweepIntervalMs?: number;
}

export interface LocalKeyAuditDependencies {
  readonly client: DynamoDBDocumentClient;
  readonly endpoint: string;
  readonly keysTableName: string;
  readonly keys: ApiKeysRepository;
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
const REGION = 'local';

/** The keys table's latest stream, turned on first for a table made before the audit trail (a persisted one). */
const keysTableStream = async (client: DynamoDBDocumentClient, tableName: string): Promise<string> => {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  if (Table?.StreamSpecification?.StreamEnabled && Table.LatestStreamArn) return Table.LatestStreamArn;
  const { TableDescription } = await client.send(
    new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: true, StreamViewType: apiKeysTable.stream } }),
  );
  if (!TableDescription?.LatestStreamArn) throw new Error(`The keys table ${tableName} has no stream after turning it on.`);
  return TableDescription.LatestStreamArn;
};

/**
 * A stream record as Lambda hands it: the same fields, ApproximateCreationDateTime in epoch
 * seconds. The images' attribute values are the same JSON shape in both type definitions.
 */
const lambdaRecord = (record: StreamRecord, streamArn: string): DynamoDBRecord => {
  const created = record.dynamodb?.ApproximateCreationDateTime;
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: record.eventSource ?? 'aws:dynamodb',
    awsRegion: record.awsRegion ?? REGION,
    dynamodb: {
      ...(record.dynamodb as NonNullable<DynamoDBRecord['dynamodb']>),
      ...(created ? { ApproximateCreationDateTime: Math.floor(created.getTime() / 1000) } : {}),
    },
    eventSourceARN: streamArn,
  };
};

export const startLocalKeyAudit = async (
  { client, endpoint, keysTableName, keys }: LocalKeyAuditDependencies,
  { pollIntervalMs = DEFAULT_POLL_INTERVAL_MS, expirySweepIntervalMs = DEFAULT_EXPIRY_SWEEP_INTERVAL_MS }: LocalKeyAuditOptions = {},
): Promise<LocalKeyAudit> => {
  const streamArn = await keysTableStream(client, keysTableName);
  await ensureLocalAuditLog(client, keysTableName);
  // DynamoDB Local takes any credentials and region.
  const streams = new DynamoDBStreamsClient({ endpoint, region: REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  // Run as the two functions' invocations; the audit log's table stands in for CloudWatch Logs.
  const keysTable = { tables: { apiKeys: keysTableName } };
  const writeAudit = asInvocation(
    { functionName: 'keyAudit', ...keysTable },
    createKeyAuditHandler({ write: localAuditWriter(client, keysTableName) }),
  );
  const sweepExpired = asInvocation({ functionName: 'keyExpiry', ...keysTable }, createKeyExpiryHandler({ keys }));

  /** Each shard's next iterator; undefined once a closed shard is read to its end. */
  const iterators = new Map<string, string | undefined>();

  const readShards = async () => {
    let exclusiveStartShardId: string | undefined;
    do {
      const { StreamDescription } = await streams.send(
        new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: exclusiveStartShardId }),
      );
      for (const { ShardId } of StreamDescription?.Shards ?? []) {
        if (ShardId === undefined || iterators.has(ShardId)) continue;
        const { ShardIterator } = await streams.send(
          new GetShardIteratorCommand({ StreamArn: streamArn, ShardId, ShardIteratorType: 'TRIM_HORIZON' }),
        );
        iterators.set(ShardId, ShardIterator);
      }
      exclusiveStartShardId = StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId !== undefined);
  };

  const readShard = async (shardId: string, iterator: string) => {
    for (let position: string | undefined = iterator; position !== undefined;) {
      const { Records = [], NextShardIterator }: GetRecordsCommandOutput = await streams.send(
        new GetRecordsCommand({ ShardIterator: position, Limit: 100 }),
      );
      if (Records.length > 0) {
        const { batchItemFailures } = await writeAudit(
          { Records: Records.map((record) => lambdaRecord(record, streamArn)) },
          lambdaContext('pet-store-local-keyAudit'),
        );
        // Handed again on the next read from the batch's start, where Lambda (ReportBatchItemFailures)
        // resumes at the failed record: the lines before it are written again under the same
        // eventId, which the local log keeps once.
        if (batchItemFailures.length > 0) return;
      }
      iterators.set(shardId, NextShardIterator);
      if (Records.length === 0) return; // read up to now
      position = NextShardIterator;
    }
  };

  let polling: Promise<void> = Promise.resolve();
  const poll = (): Promise<void> => {
    // One read at a time, whether the one before failed or not.
    polling = polling
      .catch(() => undefined)
      .then(async () => {
        await readShards();
        for (const [shardId, iterator] of iterators) if (iterator !== undefined) await readShard(shardId, iterator);
      });
    return polling;
  };
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweep = async () => {
    sweeping = sweepExpired({}, lambdaContext('pet-store-local-keyExpiry'));
    await sweeping;
  };

  let stopped = false;
  const reportFailure = (task: string) => (error: unknown) => {
    if (!stopped) logger.warn('local key audit', { task, ...safeErrorFields(error) });
  };
  let pollTimer: NodeJS.Timeout | undefined;
  const schedulePoll = () => {
    pollTimer = setTimeout(() => {
      void poll()
        .catch(reportFailure('stream'))
        .finally(() => !stopped && schedulePoll());
    }, pollIntervalMs);
  };
  schedulePoll();
  void sweep().catch(reportFailure('expiry sweep'));
  const sweepTimer = setInterval(() => void sweep().catch(reportFailure('expiry sweep')), expirySweepIntervalMs);

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
