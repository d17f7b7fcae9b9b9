/**
 * A stand-in for DynamoDB global tables' replication (multi-Region eventual consistency), for
 * tests: it reads each regional copy's stream on DynamoDB Local and applies every change to the
 * other regions' copies after a chosen delay, as AWS documents replication
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/V2globaltables_HowItWorks.html):
 *
 * - last writer wins per item: of two writes to one item, in whatever regions, the later one is
 *   what every copy ends up holding; a replicated older write never overwrites a newer one;
 * - a replicated write is not replicated again (no echo back to where it came from);
 * - a delete replicates as a delete.
 *
 * "Later" is the order DynamoDB Local made the writes in: every copy lives in one DynamoDB Local,
 * which numbers the stream records of all its tables in one sequence (checked by the fixture's
 * own tests). That order is exact, where AWS compares the regions' clocks: this fixture shows
 * what last-writer-wins does, never what clock skew adds to it.
 *
 * Test code only: the product never replicates anything itself.
 */
import { DescribeTableCommand, DeleteItemCommand, PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type DynamoDBStreamsClient,
} from '@aws-sdk/client-dynamodb-streams';
import { streamsClientOf, type StreamRecord } from '../../tools/local-server/keys-stream';

/** One table, as a copy in each region: region name -> table name, all in the DynamoDB `client` reaches. */
export type ReplicatedTable = Readonly<Record<string, string>>;

export interface ReplicationOptions {
  /** A client on the DynamoDB Local holding every copy. */
  readonly client: DynamoDBDocumentClient;
  /** The tables to replicate; each copy's stream must be on (NEW_AND_OLD_IMAGES). */
  readonly tables: readonly ReplicatedTable[];
  /** Milliseconds from reading a change in its region's stream to applying it to the other copies. */
  readonly delayMs: number;
  /** Milliseconds between reads of the streams. */
  readonly pollIntervalMs?: number;
}

export interface Replication {
  /** The delay for changes read from now on. */
  setDelay(delayMs: number): void;
  /** Resolves once every write made before the call has reached every copy it is to reach. */
  settled(): Promise<void>;
  /** What the fixture did so far: changes it applied to a copy, and those it dropped as older than the copy's. */
  readonly counts: { readonly applied: number; readonly superseded: number; readonly echoes: number };
  stop(): Promise<void>;
}

const DEFAULT_POLL_INTERVAL_MS = 100;

/**
 * Reads a stream from its start, each call from where the last left off, handing each record to
 * `handle` in order. A shard that has given no record yet is read with a new TRIM_HORIZON
 * iterator each time: DynamoDB Local refuses an iterator it gave while the shard was empty
 * (TrimmedDataAccessException) once the shard's first record is in, when other tables' records
 * came between; such a read is made again from the start.
 */
const streamFromStart = (streams: DynamoDBStreamsClient, streamArn: string, handle: (record: StreamRecord) => Promise<void>) => {
  /** Each shard's next iterator, once the shard has given a record; undefined once a closed shard is read to its end. */
  const iterators = new Map<string, string | undefined>();
  let shards: string[] = [];
  /** Whether a shard has been read to its end (closed) since the shards were last listed: its successor is to be found. */
  let closed = true;
  const describe = async () => {
    const found: string[] = [];
    let exclusiveStartShardId: string | undefined;
    do {
      const { StreamDescription } = await streams.send(
        new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: exclusiveStartShardId }),
      );
      for (const { ShardId } of StreamDescription?.Shards ?? []) if (ShardId !== undefined) found.push(ShardId);
      exclusiveStartShardId = StreamDescription?.LastEvaluatedShardId;
    } while (exclusiveStartShardId !== undefined);
    shards = found;
    closed = false;
  };
  const fromStart = async (shardId: string) =>
    (await streams.send(new GetShardIteratorCommand({ StreamArn: streamArn, ShardId: shardId, ShardIteratorType: 'TRIM_HORIZON' })))
      .ShardIterator;
  /** A read of an empty shard's iterator that a first record has reached meanwhile: DynamoDB Local refuses it. */
  const staleStart = (shardId: string, error: unknown) =>
    !iterators.has(shardId) && error instanceof Error && error.name === 'TrimmedDataAccessException';
  const readShard = async (shardId: string) => {
    let position = iterators.has(shardId) ? iterators.get(shardId) : await fromStart(shardId);
    while (position !== undefined) {
      const read = await streams
        .send(new GetRecordsCommand({ ShardIterator: position, Limit: 100 }))
        .catch((error: unknown) => (staleStart(shardId, error) ? undefined : Promise.reject(error)));
      if (read === undefined) {
        position = await fromStart(shardId);
        continue;
      }
      const { Records = [], NextShardIterator } = read;
      for (const record of Records) await handle(record);
      if (Records.length === 0 && !iterators.has(shardId)) {
        // Read to its end: a closed shard with no record; else an open one, still empty.
        if (NextShardIterator === undefined) {
          iterators.set(shardId, undefined);
          closed = true;
        }
        return;
      }
      iterators.set(shardId, NextShardIterator);
      if (NextShardIterator === undefined) closed = true;
      if (Records.length === 0) return; // read up to now
      position = NextShardIterator;
    }
  };
  return async () => {
    if (closed) await describe();
    for (const shardId of shards) if (!(iterators.has(shardId) && iterators.get(shardId) === undefined)) await readShard(shardId);
  };
};

type Image = Record<string, AttributeValue>;

/** The latest write of an item: the one every copy is to hold. */
interface Winner {
  readonly sequence: bigint;
  /** Undefined: the item was deleted. */
  readonly image: Image | undefined;
  readonly region: string;
}

/** A value's JSON with object keys sorted, so that two equal images read the same. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );

const DELETED = 'deleted';
const imageText = (image: Image | undefined) => (image === undefined ? DELETED : canonical(image));

export const startReplication = async ({
  client,
  tables,
  delayMs: initialDelayMs,
  pollIntervalMs = DEFAULT_POLL_INTERVAL_MS,
}: ReplicationOptions): Promise<Replication> => {
  const streams = await streamsClientOf(client);
  let delayMs = initialDelayMs;
  const counts = { applied: 0, superseded: 0, echoes: 0 };
  /** Applies waiting for their delay. */
  const pending = new Set<Promise<void>>();
  let failure: unknown;

  const readers: Array<() => Promise<void>> = [];
  for (const [tableIndex, copies] of tables.entries()) {
    /** Per item (by its key's canonical JSON): the write every copy is to hold. */
    const winners = new Map<string, Winner>();
    /** Per region and item: the images the fixture wrote there whose stream records are yet to be read. */
    const echoes = new Map<string, string[]>();
    /** Per region and item: the image the copy holds, as far as its stream has told. */
    const held = new Map<string, string>();
    const slot = (region: string, item: string) => `${region}\u0000${item}`;

    /** Writes the winner into a copy, unless the copy holds it already (a write that changes nothing reaches no stream). */
    const write = async (region: string, item: string, winner: Winner, keys: Image) => {
      const text = imageText(winner.image);
      if (held.get(slot(region, item)) === text) return;
      const expected = echoes.get(slot(region, item)) ?? [];
      echoes.set(slot(region, item), [...expected, text]);
      held.set(slot(region, item), text);
      const TableName = copies[region] ?? '';
      if (winner.image === undefined) await client.send(new DeleteItemCommand({ TableName, Key: keys }));
      else await client.send(new PutItemCommand({ TableName, Item: winner.image }));
      counts.applied += 1;
    };

    /** After the delay: the change reaches `region`'s copy, unless a later write to the item has been made meanwhile. */
    const replicate = (region: string, item: string, winner: Winner, keys: Image) => {
      const task = new Promise<void>((resolve) => setTimeout(resolve, delayMs))
        .then(async () => {
          if (winners.get(item) !== winner) {
            counts.superseded += 1;
            return;
          }
          await write(region, item, winner, keys);
        })
        .catch((error: unknown) => {
          failure ??= error;
        })
        .finally(() => pending.delete(task));
      pending.add(task);
    };

    const handle = async (region: string, record: StreamRecord) => {
      const keys = (record.dynamodb?.Keys ?? {}) as Image;
      const item = canonical(keys);
      const image = record.eventName === 'REMOVE' ? undefined : (record.dynamodb?.NewImage as Image | undefined);
      const text = imageText(image);
      held.set(slot(region, item), text);
      const expected = echoes.get(slot(region, item)) ?? [];
      const echo = expected.indexOf(text);
      if (echo >= 0) {
        // The fixture's own write: never replicated again. Should a write made in this region
        // have landed between the fixture's check and its write, the copy holds an older image
        // than its own latest: that write is put back.
        expected.splice(echo, 1);
        counts.echoes += 1;
        const winner = winners.get(item);
        if (winner !== undefined && winner.region === region && imageText(winner.image) !== text) await write(region, item, winner, keys);
        return;
      }
      const sequence = BigInt(record.dynamodb?.SequenceNumber ?? '0');
      const latest = winners.get(item);
      // A write made before the item's latest: the copies keep the latest (this one's region too, once it arrives).
      if (latest !== undefined && latest.sequence > sequence) {
        counts.superseded += 1;
        return;
      }
      const winner: Winner = { sequence, image, region };
      winners.set(item, winner);
      for (const other of Object.keys(copies)) if (other !== region) replicate(other, item, winner, keys);
    };

    for (const [region, tableName] of Object.entries(copies)) {
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      if (!Table?.StreamSpecification?.StreamEnabled || Table.LatestStreamArn === undefined) {
        throw new Error(`Table ${tableName} (copy ${tableIndex} in ${region}) has no stream to replicate from.`);
      }
      readers.push(streamFromStart(streams, Table.LatestStreamArn, (record) => handle(region, record)));
    }
  }

  let reading: Promise<void> = Promise.resolve();
  /** Reads every stream up to now, one read at a time. */
  const readAll = (): Promise<void> => {
    reading = reading.then(async () => {
      for (const read of readers) await read();
    });
    return reading;
  };
  const throwFailure = () => {
    if (failure !== undefined) throw failure;
  };

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    timer = setTimeout(() => {
      void readAll()
        .catch((error: unknown) => {
          failure ??= error;
        })
        .finally(() => !stopped && schedule());
    }, pollIntervalMs);
  };
  schedule();

  return {
    setDelay: (next) => {
      delayMs = next;
    },
    settled: async () => {
      // Each apply is a write whose record is read in turn; done when a read finds nothing left to apply.
      for (;;) {
        await readAll();
        throwFailure();
        if (pending.size === 0) return;
        await Promise.all(pending);
      }
    },
    counts,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await reading.catch(() => undefined);
      await Promise.all(pending);
      streams.destroy();
    },
  };
};
