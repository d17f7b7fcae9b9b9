/** Fresh tables in the run's DynamoDB Local, so that test files never see each other's data. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { createDocumentClient } from '../../shared/dynamodb';
import { apiKeysTable, idempotencyTable, petsTable } from '../../shared/tables';
import { ensureTables } from '../../tools/dynamodb-local';

export interface TestTables {
  readonly endpoint: string;
  readonly client: DynamoDBDocumentClient;
  readonly pets: string;
  readonly apiKeys: string;
  readonly idempotency: string;
}

export const createTestTables = async (): Promise<TestTables> => {
  const endpoint = inject('dynamodbEndpoint');
  const client = createDocumentClient({ endpoint });
  const suffix = randomUUID().slice(0, 8);
  const names = { pets: `pets-${suffix}`, apiKeys: `api-keys-${suffix}`, idempotency: `idempotency-${suffix}` };
  await ensureTables(client, [
    { definition: petsTable, name: names.pets },
    { definition: apiKeysTable, name: names.apiKeys },
    { definition: idempotencyTable, name: names.idempotency },
  ]);
  return { endpoint, client, ...names };
};
