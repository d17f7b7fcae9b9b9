/** A local server on a DynamoDB Local of its own (in memory, fresh tables), for `npm run load`. */
import { generateApiKey } from '../../shared/api-keys';
import { apiKeysRepository } from '../../shared/api-keys-repository';
import { createDocumentClient } from '../../shared/dynamodb';
import { apiKeysTable, petsTable } from '../../shared/tables';
import { ensureTables, startDynamoDBLocal } from '../dynamodb-local';
import { startLocalServer } from '../local-server/server';

export const startLocalTarget = async () => {
  const database = await startDynamoDBLocal({ port: 0 });
  try {
    const client = createDocumentClient({ endpoint: database.endpoint });
    await ensureTables(client, [
      { definition: petsTable, name: petsTable.defaultName },
      { definition: apiKeysTable, name: apiKeysTable.defaultName },
    ]);
    const key = generateApiKey();
    await apiKeysRepository({ client, tableName: apiKeysTable.defaultName }).register(key, 'load');
    const server = await startLocalServer({ client, port: 0, petsTable: petsTable.defaultName, apiKeysTable: apiKeysTable.defaultName });
    return {
      url: server.url,
      key,
      stop: async () => {
        await server.close();
        await database.stop();
      },
    };
  } catch (error) {
    await database.stop();
    throw error;
  }
};
