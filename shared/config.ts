/** Where the functions find their tables and database, from the environment the stack sets. */
import type { DynamoDBOptions } from './dynamodb';
import {
  apiKeyLastUseTable,
  apiKeysTable,
  idempotencyTable,
  MAX_STATUS_SHARDS,
  petsTable,
  STATUS_SHARDS_VARIABLE,
  type TableDefinition,
  type TableNames,
} from './tables';

export type Environment = Readonly<Record<string, string | undefined>>;

export const tableName = (table: TableDefinition, env: Environment = process.env): string => env[table.nameVariable] || table.defaultName;

export const petsTableName = (env: Environment = process.env): string => tableName(petsTable, env);
export const apiKeysTableName = (env: Environment = process.env): string => tableName(apiKeysTable, env);
export const apiKeyLastUseTableName = (env: Environment = process.env): string => tableName(apiKeyLastUseTable, env);
export const idempotencyTableName = (env: Environment = process.env): string => tableName(idempotencyTable, env);

/** The tables' names, as configured. */
export const tableNames = (env: Environment = process.env): TableNames => ({
  pets: petsTableName(env),
  apiKeys: apiKeysTableName(env),
  apiKeyLastUse: apiKeyLastUseTableName(env),
  idempotency: idempotencyTableName(env),
});

/** `DYNAMODB_ENDPOINT` points the functions at another DynamoDB, such as DynamoDB Local. */
export const dynamoDBOptions = (env: Environment = process.env): DynamoDBOptions =>
  env.DYNAMODB_ENDPOINT ? { endpoint: env.DYNAMODB_ENDPOINT } : {};

/** Whether `count` can be a stage's number of status index shards: a whole number from 1 to MAX_STATUS_SHARDS. */
export const isStatusShardCount = (count: number): boolean => Number.isInteger(count) && count >= 1 && count <= MAX_STATUS_SHARDS;

/**
 * The status index's shards, from PETS_STATUS_SHARDS (1 when unset). A value that is not a shard
 * count stops the function at its start rather than listing some shards and not others.
 */
export const statusShardCount = (env: Environment = process.env): number => {
  const value = env[STATUS_SHARDS_VARIABLE];
  if (value === undefined || value === '') return 1;
  const count = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!isStatusShardCount(count)) throw new Error(`${STATUS_SHARDS_VARIABLE} must be a whole number from 1 to ${MAX_STATUS_SHARDS}.`);
  return count;
};
