/** Fresh tables in the run's DynamoDB Local, so that test files never see each other's data. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { TABLE_KEYS, tableNamesOf, apiKeyLastUseTable, apiKeysTable, tableDefinitions, type TableNames } from '../../shared/tables';
import { ensureTables, LOCAL_TOOL_REQUEST_TIMEOUT_MS } from '../../tools/dynamodb-local';
import { databaseClient, functionsClient } from './database';

/** The fresh tables' names, with the run's DynamoDB Local and a client on it. */
export interface TestTables extends TableNames {
  readonly endpoint: string;
  readonly client: DynamoDBDocumentClient;
}

/** Names no other test file uses. */
export const freshTableNames = (): TableNames => {
  const suffix = randomUUID().slice(0, 8);
  return tableNamesOf(({ defaultName }) => `${defaultName}-${suffix}`);
};

/** Every table of the API, as `npm start` creates them. */
const ALL_TABLES = TABLE_KEYS;

/**
 * The tables are created by a client that waits for a busy DynamoDB Local, all at once rather than
 * one after the other; the client returned has the functions' settings, with this run's timeout.
 * `only` names the tables the code under test uses, where that is fewer than all (the others are
 * named, never created).
 */
export const createTestTables = async (only: ReadonlyArray<keyof TableNames> = ALL_TABLES): Promise<TestTables> => {
  const endpoint = inject('dynamodbEndpoint');
  const names = freshTableNames();
  const creator = databaseClient({ endpoint, requestTimeout: LOCAL_TOOL_REQUEST_TIMEOUT_MS });
  try {
    await Promise.all(only.map((table) => ensureTables(creator, [{ definition: tableDefinitions[table], name: names[table] }])));
  } finally {
    creator.destroy();
  }
  return { endpoint, client: functionsClient(endpoint), ...names };
};

/** The environment that points the key tool at these keys and last-use tables, in the DynamoDB at `endpoint`. */
export const keyTablesEnv = (endpoint: string, tables: Pick<TableNames, 'apiKeys' | 'apiKeyLastUse'>): Record<string, string> => ({
  DYNAMODB_ENDPOINT: endpoint,
  [apiKeysTable.nameVariable]: tables.apiKeys,
  [apiKeyLastUseTable.nameVariable]: tables.apiKeyLastUse,
});
