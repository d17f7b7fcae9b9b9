/** Where the functions find their tables and database, from the environment the stack sets. */
import type { DynamoDBOptions } from './dynamodb';
import {
  apiKeyLastUseTable,
  apiKeysTable,
  idempotencyTable,
  MAX_STATUS_SHARDS,
  petsTable,
  STATUS_SHARDS_VARIABLE,
  tableNamesOf,
  type TableDefinition,
  type TableNames,
} from './tables';

export type Environment = Readonly<Record<string, string | undefined>>;

export const tableName = (table: TableDefinition, env: Environment = process.env): string => env[table.nameVariable] || table.defaultName;

export const petsTableName = (env: Environment = process.env): string => tableName(petsTable, env);
export const apiKeysTableName = (env: Environment = process.env): string => tableName(apiKeysTable, env);
export const apiKeyLastUseTableName = (env: Environment = process.env): string => tableName(apiKeyLastUseTable, env);
export const idempotencyTableName = (env: Environment = process.env): string => tableName(idempotencyTable, env);

/** The tables' names, as configured: every table of shared/tables.ts. */
export const tableNames = (env: Environment = process.env): TableNames => tableNamesOf((definition) => tableName(definition, env));

/**
 * Milliseconds each DynamoDB attempt has to connect, and to be answered, when not the client's
 * default (shared/dynamodb.ts): for a DynamoDB slower than AWS's, such as DynamoDB Local on a busy
 * machine. No stack sets it: deployed, the default holds.
 */
export const DYNAMODB_TIMEOUT_VARIABLE = 'DYNAMODB_TIMEOUT_MS';
/** The most DYNAMODB_TIMEOUT_MS may be: a minute. */
export const MAX_DYNAMODB_TIMEOUT_MS = 60_000;

/** The timeouts DYNAMODB_TIMEOUT_MS sets (none when unset); a value that is not one stops the function at its start. */
export const dynamoDBTimeouts = (env: Environment = process.env): Pick<DynamoDBOptions, 'connectionTimeout' | 'requestTimeout'> => {
  const value = env[DYNAMODB_TIMEOUT_VARIABLE];
  if (value === undefined || value === '') return {};
  const ms = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(ms >= 1 && ms <= MAX_DYNAMODB_TIMEOUT_MS)) {
    throw new Error(`${DYNAMODB_TIMEOUT_VARIABLE} must be a whole number of milliseconds from 1 to ${MAX_DYNAMODB_TIMEOUT_MS}.`);
  }
  return { connectionTimeout: ms, requestTimeout: ms };
};

/** `DYNAMODB_ENDPOINT` points the functions at another DynamoDB, such as DynamoDB Local; `DYNAMODB_TIMEOUT_MS` gives it longer. */
export const dynamoDBOptions = (env: Environment = process.env): DynamoDBOptions => ({
  ...(env.DYNAMODB_ENDPOINT ? { endpoint: env.DYNAMODB_ENDPOINT } : {}),
  ...dynamoDBTimeouts(env),
});

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
