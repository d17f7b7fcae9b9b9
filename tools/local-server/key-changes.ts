/**
 * What tells the local gateway that a key changed: it reads the keys table's stream, as the audit
 * trail does, and names each key whose item changed, so that the gateway drops that key's cached
 * answers (deployed, the key tool and the expiry sweep flush API Gateway's cache instead). The
 * authorizer's record of a key's use is in the last-use table, whose writes reach no stream.
 *
 * It never stops the server: a stream it cannot read (at the start, or later) is said once in the
 * log, and the gateway caches nothing until it reads again, so no answer outlives its key's change.
 */
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { logger } from '../../shared/logger';
import { apiKeysTable, SWEEP_INDEX_ATTRIBUTES } from '../../shared/tables';
import { keysTableStream, streamReader, streamsClientOf, type StreamReader, type StreamRecord } from './keys-stream';

/** Milliseconds between reads: a change reaches the gateway within about this. */
export const KEY_CHANGES_POLL_INTERVAL_MS = 250;

/** What a cached answer does not depend on: a key's place in the sweep's indexes. */
const NOT_IN_ANSWERS = new Set<string>(SWEEP_INDEX_ATTRIBUTES);

/**
 * The hash of the key a record changed, unless no cached answer can be of it: a new item (no answer
 * let its key in before), or a write of nothing an answer depends on.
 */
export const changedKeyHash = (record: StreamRecord): string | undefined => {
  const keyHash = record.dynamodb?.Keys?.[apiKeysTable.partitionKey.name]?.S;
  if (keyHash === undefined || record.eventName === 'INSERT') return undefined;
  if (record.eventName !== 'MODIFY') return keyHash;
  const before = record.dynamodb?.OldImage ?? {};
  const after = record.dynamodb?.NewImage ?? {};
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  const changed = [...names].some((name) => !NOT_IN_ANSWERS.has(name) && JSON.stringify(before[name]) !== JSON.stringify(after[name]));
  return changed ? keyHash : undefined;
};

export interface KeyChangesOptions {
  /** The client on the keys table; its stream is read with the same endpoint, region and credentials. */
  readonly client: DynamoDBDocumentClient;
  readonly keysTableName: string;
  /** The item of the key with this hash changed. */
  readonly onChange: (keyHash: string) => void;
  /** Whether changes are followed now: false from a read that failed until one succeeds. */
  readonly onFollowing: (following: boolean) => void;
  readonly pollIntervalMs?: number;
}

export interface KeyChanges {
  /** Reads the stream once, now: every change made before the call has been named when it resolves. */
  poll(): Promise<void>;
  stop(): Promise<void>;
}

const errorName = (error: unknown): string => (error instanceof Error ? error.name : typeof error);

/** Follows the keys table's changes; resolves once the first read has been tried (whether it succeeded or not). */
export const followKeyChanges = async ({
  client,
  keysTableName,
  onChange,
  onFollowing,
  pollIntervalMs = KEY_CHANGES_POLL_INTERVAL_MS,
}: KeyChangesOptions): Promise<KeyChanges> => {
  let connection: { streams: DynamoDBStreamsClient; reader: StreamReader } | undefined;
  let following: boolean | undefined;
  let stopped = false;

  const connect = async () => {
    const streamArn = await keysTableStream(client, keysTableName);
    const streams = await streamsClientOf(client);
    // From now on: the gateway has cached nothing from before (it caches nothing while not following).
    const reader = streamReader(streams, streamArn, {
      firstShardsAt: 'LATEST',
      handle: async (records) => {
        for (const record of records) {
          const keyHash = changedKeyHash(record);
          if (keyHash !== undefined) onChange(keyHash);
        }
        return true;
      },
    });
    connection = { streams, reader };
    return reader;
  };

  const read = async () => {
    try {
      await (connection?.reader ?? (await connect())).read();
      if (following !== true) {
        if (following === false) logger.info('local authorizer cache on again', { reason: "reading the keys table's stream" });
        following = true;
        onFollowing(true);
      }
    } catch (error) {
      // Read again from the latest record once it can: nothing was cached meanwhile.
      connection?.streams.destroy();
      connection = undefined;
      if (following !== false && !stopped) {
        logger.warn('local authorizer cache off', {
          reason: `the keys table's stream cannot be read (${errorName(error)}): answers are not cached until it can`,
        });
      }
      following = false;
      onFollowing(false);
    }
  };

  let reading: Promise<void> = Promise.resolve();
  const poll = (): Promise<void> => (reading = reading.then(read));

  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    timer = setTimeout(() => void poll().finally(() => !stopped && schedule()), pollIntervalMs);
  };
  await poll();
  schedule();

  return {
    poll,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await reading;
      connection?.streams.destroy();
    },
  };
};
