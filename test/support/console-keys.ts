/** Key items written as an operator writes them in the DynamoDB console: raw attribute types, not the repository. */
import { PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import { usageKeyBinding } from '../../shared/plan-policy';
import { localUsageKey } from '../../tools/local-server/usage-plans';

/** What the key tool writes for a key's plan and its own (local) usage key, in raw types: what the authorizer meters. */
export const meteredAttributes = (keyHash: string, plan = 'default'): Record<string, AttributeValue> => {
  const { usageKeyId, usageKey } = localUsageKey();
  return {
    plan: { S: plan },
    usageKeyId: { S: usageKeyId },
    usageKey: { S: usageKey },
    usageKeyBinding: { S: usageKeyBinding(keyHash, usageKeyId, usageKey) },
  };
};

/**
 * Puts a new key's item with `extra` attributes (e.g. `{ scopes: { SS: ['pets:read'] } }`) and
 * returns the key. With `metered`, the item also has what the key tool gives every key, a plan and
 * a usage key of its own (which `extra` may override): an item the tool made, then edited by hand.
 */
export const putConsoleKey = async (
  client: DynamoDBDocumentClient,
  tableName: string,
  { name = 'console', metered = false, extra = {} }: { name?: string; metered?: boolean; extra?: Record<string, AttributeValue> } = {},
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
        ...(metered ? meteredAttributes(keyHash) : {}),
        ...extra,
      },
    }),
  );
  return key;
};
