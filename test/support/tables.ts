/** Fresh tables in the run's DynamoDB Local, so that test files never see each other's data. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { createDocumentClient } from '../../shared/dynamodb';
import type { TableNames } from '../../shared/tables';
import { ensureApiTables } from '../../tools/dynamodb-local';

/** The fresh tables' names, with the run's DynamoDB Local and a client on it. */
export interface TestTables extends TableNames {
  readonly endpoint: string;
  readonly client: DynamoDBDocumentClient;
}

/** Names no other test file uses. */
export const freshTableNames = (): TableNames => {
  const suffix = randomUUID().slice(0, 8);
  return {
    pets: `pets-${suffix}`,
    apiKeys: `api-keys-${suffix}`,
    apiKeyLastUse: `api-key-last-use-${suffix}`,
    idempotency: `idempotency-${suffix}`,
  };
};

export const createTestTables = async (): Promise<TestTables> => {
  const endpoint = inject('dynamodbEndpoint');
  const client = createDocumentClient({ endpoint });
  const names = freshTableNames();
  await ensureApiTables(client, names);
  return { endpoint, client, ...names };
};
