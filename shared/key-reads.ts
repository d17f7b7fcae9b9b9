/**
 * What the authorizer does with the key tables, and nothing more: it reads a key's item and its
 * last use, and writes its last use at most once an hour. A module of its own, apart from the key
 * administration (shared/api-keys-repository.ts, which delegates these to it), so that the
 * authorizer's bundle, on the path of every request whose key misses the cache, holds neither that
 * nor zod (its key-name rule). One DynamoDB client for both tables: one connection pool, one TLS
 * handshake on a cold start.
 */
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ApiKeyRecord } from './api-keys-repository';
import { hashApiKey, keyIdOf } from './api-keys';
import { dynamoDBOptions, tableNames } from './config';
import { callDatabase, createDocumentClient, isConditionFailure, singleAttempt } from './dynamodb';
import { parseInstant } from './instants';
import { LAST_USE_RESOLUTION_MS } from './key-state';
import { grantedScopes } from './scopes';
import type { TableNames } from './tables';

/**
 * The most the `lastUsedAt` read, and its write, may each add to a request: it is bookkeeping on
 * the authorizer's path, so one attempt (singleAttempt) with this deadline rather than the
 * client's retries.
 */
export const LAST_USE_DEADLINE_MS = 250;

/** The two tables of keys: the keys, and their last use. */
export type KeyTableNames = Pick<TableNames, 'apiKeys' | 'apiKeyLastUse'>;

/** The authorizer's reads and write of the key tables. */
export interface KeyReads {
  /** The key's record, whatever its state (keyState tells it): its item alone, without its last use (lastUseOf). */
  find(key: string): Promise<ApiKeyRecord | undefined>;
  /** The key's last use, eventually consistent: one attempt, within LAST_USE_DEADLINE_MS. */
  lastUseOf(key: string): Promise<ApiKeyRecord['lastUsedAt']>;
  /**
   * Records that the key was used at `now`, unless its `lastUsedAt` as just read (findById,
   * lastUseOf) is less than an hour old (one in the future, a typo or a skewed clock, is stale).
   * Conditional on the last use as read, so that two regions or instances write it once. One
   * attempt, within LAST_USE_DEADLINE_MS. True when it wrote.
   */
  recordUse(record: ApiKeyRecord, now?: Date): Promise<boolean>;
}

export interface KeyReadsOptions {
  /** @default a client of its own, on the configured DynamoDB */
  readonly client?: DynamoDBDocumentClient;
  /** @default the configured names (shared/config.ts) */
  readonly tables?: KeyTableNames;
  /** How long the `lastUsedAt` read, and its write, may each take. @default LAST_USE_DEADLINE_MS */
  readonly lastUseDeadlineMs?: number;
}

/** An item as stored: `scopes` a String Set, read back as a Set (or anything else a console edit left). */
export type StoredKeyItem = Omit<ApiKeyRecord, 'scopes'> & {
  readonly scopes?: unknown;
  readonly expiryQueue?: unknown;
  readonly expiryDueAt?: unknown;
  readonly usageKeyRelease?: unknown;
};

/**
 * The record of an item. Its id is derived from its hash, as the key's is: a `keyId` edited in the
 * console is not trusted. Its last use is read from the last-use table, never from the item, and
 * its places in the sweep's indexes are no part of it.
 */
export const recordOf = ({
  expiryQueue: _queue,
  expiryDueAt: _due,
  usageKeyRelease: _release,
  lastUsedAt: _notItsLastUse,
  ...item
}: StoredKeyItem): ApiKeyRecord => ({
  ...item,
  keyId: keyIdOf(item.keyHash),
  scopes: grantedScopes(item.scopes),
});

export const keyReads = ({
  client = createDocumentClient(dynamoDBOptions()),
  tables = tableNames(),
  lastUseDeadlineMs = LAST_USE_DEADLINE_MS,
}: KeyReadsOptions = {}): KeyReads => {
  const { apiKeys: keysTableName, apiKeyLastUse: lastUseTableName } = tables;

  const find = async (key: string): Promise<ApiKeyRecord | undefined> => {
    const { Item } = await callDatabase(() => client.send(new GetCommand({ TableName: keysTableName, Key: { keyHash: hashApiKey(key) } })));
    return Item && recordOf(Item as StoredKeyItem);
  };

  const lastUseOf = async (key: string): Promise<ApiKeyRecord['lastUsedAt']> => {
    const { Item } = await callDatabase(() =>
      client.send(singleAttempt(new GetCommand({ TableName: lastUseTableName, Key: { keyHash: hashApiKey(key) } })), {
        abortSignal: AbortSignal.timeout(lastUseDeadlineMs),
      }),
    );
    return Item?.lastUsedAt as ApiKeyRecord['lastUsedAt'];
  };

  const recordUse = async (record: ApiKeyRecord, now = new Date()): Promise<boolean> => {
    const sinceSeen = now.getTime() - (parseInstant(record.lastUsedAt)?.getTime() ?? Number.NaN);
    if (sinceSeen >= 0 && sinceSeen < LAST_USE_RESOLUTION_MS) return false;
    const seenAsRead =
      record.lastUsedAt === undefined
        ? { condition: 'attribute_not_exists(lastUsedAt)', values: {} }
        : { condition: 'lastUsedAt = :seen', values: { ':seen': record.lastUsedAt } };
    try {
      await callDatabase(() =>
        client.send(
          singleAttempt(
            new UpdateCommand({
              TableName: lastUseTableName,
              Key: { keyHash: record.keyHash },
              UpdateExpression: 'SET lastUsedAt = :now',
              ConditionExpression: seenAsRead.condition,
              ExpressionAttributeValues: { ':now': now.toISOString(), ...seenAsRead.values },
            }),
          ),
          { abortSignal: AbortSignal.timeout(lastUseDeadlineMs) },
        ),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false; // another caller wrote it first
      throw error;
    }
  };

  return { find, lastUseOf, recordUse };
};
