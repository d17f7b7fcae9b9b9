/** Where the functions find their tables and database, from the environment the stack sets. */
import type { DynamoDBOptions } from './dynamodb';
import { apiKeyLastUseTable, apiKeysTable, idempotencyTable, petsTable, type TableDefinition, type TableNames } from './tables';

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
