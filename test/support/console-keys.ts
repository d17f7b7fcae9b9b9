/** Key items written as an operator writes them in the DynamoDB console: raw attribute types, not the repository. */
import { PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';

/** Puts a new key's item with `extra` attributes (e.g. `{ scopes: { SS: ['pets:read'] } }`) and returns the key. */
export const putConsoleKey = async (
  client: DynamoDBDocumentClient,
  tableName: string,
  { name = 'console', extra = {} }: { name?: string; extra?: Record<string, AttributeValue> } = {},
): Promise<string> => {
  const key = generateApiKey();
  const keyHash = hashApiKey(key);
  await client.send(
    new PutItemCommand({
      TableName: tableName,
      Item: {
        keyHash: { S: keyHash },
        keyId: { S: keyIdOf(keyHash) },
        name: { S: name },
        createdAt: { S: new Date().toISOString() },
        ...extra,
      },
    }),
  );
  return key;
};
