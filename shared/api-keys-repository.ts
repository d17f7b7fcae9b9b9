/**
 * The API-keys table: records hold a key's hash, id, name, scopes and creation time, and a
 * revocation time once revoked. The authorizer reads it; the key tool and the local server write it.
 * Scopes are stored as a String Set, so an operator can read and narrow them in the DynamoDB console.
 */
import { GetCommand, paginateScan, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { apiKeysTableName, dynamoDBOptions } from './config';
import { callDatabase, createDocumentClient, isConditionFailure } from './dynamodb';
import { hashApiKey, keyIdOf } from './api-keys';
import { grantedScopes, SCOPES, type Scope } from './scopes';

export interface ApiKeyRecord {
  readonly keyHash: string;
  readonly keyId: string;
  readonly name: string;
  /** The scopes the key grants (all of them for a key stored without a `scopes` attribute). */
  readonly scopes: readonly Scope[];
  readonly createdAt: string;
  readonly revokedAt?: string;
}

/** An item as stored: `scopes` a String Set, read back as a Set; absent on keys from before scopes. */
interface ApiKeyItem extends Omit<ApiKeyRecord, 'scopes'> {
  readonly scopes?: unknown;
}

const recordOf = (item: ApiKeyItem): ApiKeyRecord => ({ ...item, scopes: grantedScopes(item.scopes) });

export interface ApiKeysRepository {
  /**
   * Stores a key's hash under a name, with its scopes (by default all of them; at least one, as a
   * String Set cannot be empty). Registering a key that exists leaves it as it is.
   */
  register(key: string, name: string, scopes?: readonly Scope[]): Promise<ApiKeyRecord>;
  /** The key's record when it exists and is not revoked. */
  findActive(key: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** Revokes the key with this id; false when there is no such key. */
  revoke(keyId: string): Promise<boolean>;
  /** Revokes every active key of this name but the one with the id `keep`; returns the ids revoked. */
  revokeOthersNamed(name: string, keep: string): Promise<string[]>;
}

export interface ApiKeysRepositoryOptions {
  readonly client?: DynamoDBDocumentClient;
  readonly tableName?: string;
}

export const apiKeysRepository = ({
  client = createDocumentClient(dynamoDBOptions()),
  tableName = apiKeysTableName(),
}: ApiKeysRepositoryOptions = {}): ApiKeysRepository => {
  const get = async (keyHash: string): Promise<ApiKeyRecord | undefined> => {
    const { Item } = await callDatabase(() => client.send(new GetCommand({ TableName: tableName, Key: { keyHash } })));
    return Item && recordOf(Item as ApiKeyItem);
  };

  const register = async (key: string, name: string, scopes: readonly Scope[] = SCOPES): Promise<ApiKeyRecord> => {
    if (scopes.length === 0) throw new Error('A key needs at least one scope.');
    const keyHash = hashApiKey(key);
    const record: ApiKeyRecord = {
      keyHash,
      keyId: keyIdOf(keyHash),
      name,
      scopes: grantedScopes(scopes),
      createdAt: new Date().toISOString(),
    };
    const item = { ...record, scopes: new Set(record.scopes) };
    try {
      await callDatabase(() =>
        client.send(new PutCommand({ TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(keyHash)' })),
      );
      return record;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return (await get(keyHash)) ?? record;
    }
  };

  const findActive = async (key: string): Promise<ApiKeyRecord | undefined> => {
    const record = await get(hashApiKey(key));
    return record && record.revokedAt === undefined ? record : undefined;
  };

  // The keys table holds a handful of records: an operator's listing may read it whole.
  const list = async (): Promise<ApiKeyRecord[]> => {
    const records: ApiKeyRecord[] = [];
    await callDatabase(async () => {
      for await (const page of paginateScan({ client }, { TableName: tableName })) {
        records.push(...((page.Items ?? []) as ApiKeyItem[]).map(recordOf));
      }
    });
    return records.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  };

  const revokeRecord = (record: ApiKeyRecord) =>
    callDatabase(() =>
      client.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { keyHash: record.keyHash },
          UpdateExpression: 'SET revokedAt = if_not_exists(revokedAt, :now)',
          ExpressionAttributeValues: { ':now': new Date().toISOString() },
        }),
      ),
    );

  const revoke = async (keyId: string): Promise<boolean> => {
    const record = (await list()).find((candidate) => candidate.keyId === keyId);
    if (!record) return false;
    await revokeRecord(record);
    return true;
  };

  const revokeOthersNamed = async (name: string, keep: string): Promise<string[]> => {
    const others = (await list()).filter((record) => record.name === name && record.revokedAt === undefined && record.keyId !== keep);
    for (const record of others) await revokeRecord(record);
    return others.map((record) => record.keyId);
  };

  return { register, findActive, list, revoke, revokeOthersNamed };
};
