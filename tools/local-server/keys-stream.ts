/**
 * The keys table's DynamoDB stream, locally: found (and turned on for a table made before it),
 * reached with the table's own endpoint, region and credentials, and read shard by shard from
 * where each read left off. The local audit trail reads it as Lambda's event source mapping would;
 * the local gateway reads it to drop the cached answers of a key that changed.
 */
import { DescribeTableCommand, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type GetRecordsCommandOutput,
  type ShardIteratorType,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { apiKeysTable } from '../../shared/tables';

export type { StreamRecord };

/**
 * A Streams client that reaches the table's stream as `client` reaches the table: the same
 * endpoint, region and credentials, resolved from it rather than set again. DynamoDB Local without
 * -sharedDb keeps one database per access key and region, where any other finds no stream.
 */
export const streamsClientOf = async ({ config }: DynamoDBDocumentClient): Promise<DynamoDBStreamsClient> =>
  new DynamoDBStreamsClient({
    ...(config.isCustomEndpoint && config.endpoint ? { endpoint: config.endpoint } : {}),
    region: await config.region(),
    credentials: config.credentials,
  });

/** The keys table's latest stream, turned on first for a table made before the audit trail (a persisted one). */
export const keysTableStream = async (client: DynamoDBDocumentClient, tableName: string): Promise<string> => {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  if (Table?.StreamSpecification?.StreamEnabled && Table.LatestStreamArn) return Table.LatestStreamArn;
  const { TableDescription } = await client.send(
    new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: true, StreamViewType: apiKeysTable.stream } }),
  );
  if (!TableDescription?.LatestStreamArn) throw new Error(`The keys table ${tableName} has no stream after turning it on.`);
  return TableDescription.LatestStreamArn;
};

export interface StreamReaderOptions {
  /**
   * Where the shards found by the first read start: TRIM_HORIZON (the oldest record, as a new
   * event source mapping does) or LATEST (only what is written from now on). Shards found later
   * are new, and start at their beginning.
   */
  readonly firstShardsAt: ShardIteratorType;
  /** Takes a batch of records; false hands the same batch again at the next read (a partial failure). */
  readonly handle: (records: StreamRecord[]) => Promise<boolean>;
}

export interface StreamReader {
  /** Reads every shard up to now, handing each batch to `handle`; throws when the stream cannot be read. */
  read(): Promise<void>;
}

export const streamReader = (
  streams: DynamoDBStreamsClient,
  streamArn: string,
  { firstShardsAt, handle }: StreamReaderOptions,
): StreamReader => {
  /** Each shard's next iterator; undefined once a closed shard is read to its end. */
  const iterators = new Map<string, string | undefined>();
  let described = false;

  const readShards = async () => {
    const position = described ? 'TRIM_HORIZON' : firstShardsAt;
    let exclusiveStartShardId: string | undefined;
    do {
      const { StreamDescription } = await streams.send(
        new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: exclusiveStartShardId }),
      );
      for (const { ShardId } of StreamDescription?.Shards ?? []) {
        if (ShardId === undefined || iterators.has(ShardId)) continue;
        const { ShardIterator } = await streams.send(
          new GetShardIteratorCommand({ StreamArn: streamArn, ShardId, ShardIteratorType: position }),
        );
        iterators.set(ShardId, ShardIterator);
      }
      exclusiveStartShardId = StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId !== undefined);
    described = true;
  };

  const readShard = async (shardId: string, iterator: string) => {
    for (let position: string | undefined = iterator; position !== undefined;) {
      const { Records = [], NextShardIterator }: GetRecordsCommandOutput = await streams.send(
        new GetRecordsCommand({ ShardIterator: position, Limit: 100 }),
      );
      if (Records.length > 0 && !(await handle(Records))) return;
      iterators.set(shardId, NextShardIterator);
      if (Records.length === 0) return; // read up to now
      position = NextShardIterator;
    }
  };

  return {
    async read() {
      await readShards();
      for (const [shardId, iterator] of iterators) if (iterator !== undefined) await readShard(shardId, iterator);
    },
  };
};
