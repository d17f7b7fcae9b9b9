/**
 * The DynamoDB tables, defined once. The CDK stack builds them from these definitions, and the
 * local server and the tests create them in DynamoDB Local with `createTableInput`.
 */
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';

export interface KeyAttribute {
  readonly name: string;
  readonly type: 'S' | 'N';
}

export interface IndexDefinition {
  readonly indexName: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
  /** What the index holds of an item: every attribute (the default), or its keys only. */
  readonly projection?: 'ALL' | 'KEYS_ONLY';
  /**
   * The item's attribute a caller lists by, when the partition key is derived from it rather than
   * being it (a sharded key): a listing's query names this attribute, not the key.
   */
  readonly listedBy?: string;
}

export interface TableDefinition {
  /** Construct id in the stack. */
  readonly id: string;
  /** Table name where no name is configured (DynamoDB Local); deployed names come from the stack. */
  readonly defaultName: string;
  /** Environment variable that carries the deployed table's name to the functions. */
  readonly nameVariable: string;
  readonly partitionKey: KeyAttribute;
  readonly globalSecondaryIndexes: readonly IndexDefinition[];
  /** The table's DynamoDB stream: each write with the item before and after it. */
  readonly stream?: 'NEW_AND_OLD_IMAGES';
}

/**
 * The status index lists one status in creation order (ids increase with creation time). Its
 * partition key is the status spread over the stage's shards, `<status>#<id mod shards>`, so that
 * the creates of one status write several partitions, not one (shared/pets-repository.ts).
 */
export const petsStatusIndex = {
  indexName: 'status-shard-id-index',
  partitionKey: { name: 'statusShard', type: 'S' },
  sortKey: { name: 'id', type: 'N' },
  listedBy: 'status',
} as const satisfies IndexDefinition;

/** Environment variable that carries the stage's number of status index shards to the functions. */
export const STATUS_SHARDS_VARIABLE = 'PETS_STATUS_SHARDS';
/** A listing of one status sends one Query per shard: more than this would make a page a crowd of them. */
export const MAX_STATUS_SHARDS = 64;

export const petsTable = {
  id: 'PetsTable',
  defaultName: 'pets',
  nameVariable: 'PETS_TABLE_NAME',
  partitionKey: { name: 'id', type: 'N' },
  globalSecondaryIndexes: [petsStatusIndex],
} as const satisfies TableDefinition;

/**
 * A key's hash by its id (the hash's first 12 digits, as the key tool names keys): the tool reads
 * the one key it acts on, then reads it by its hash, strongly consistent. Keys only.
 */
export const apiKeysIdIndex = {
  indexName: 'keyId-index',
  partitionKey: { name: 'keyId', type: 'S' },
  projection: 'KEYS_ONLY',
} as const satisfies IndexDefinition;

/**
 * The keys whose expiry the sweep has yet to mark, by that expiry: sparse, as only such a key has
 * its attributes (written with the expiry, removed once it is marked or the key revoked), so a
 * sweep reads the keys that are due and no other. One partition: keys change rarely.
 */
export const apiKeysExpiryIndex = {
  indexName: 'expiry-index',
  partitionKey: { name: 'expiryQueue', type: 'S' },
  sortKey: { name: 'expiryDueAt', type: 'S' },
} as const satisfies IndexDefinition;

/** The one value of `expiryQueue`: the keys of the expiry index all sit in one partition. */
export const EXPIRY_QUEUE = 'pending';

/**
 * The keys whose usage key (their API Gateway API key) may be free to delete: sparse, as only a
 * key revoked or marked expired, whose usage key is not deleted yet, has the attribute. The expiry
 * sweep reads them all, deletes each usage key no live key uses any more, and removes the
 * attribute; a delete that fails leaves it, for the next sweep. Keys only: the sweep reads each
 * item strongly consistent before it acts.
 */
export const apiKeysUsageKeyReleaseIndex = {
  indexName: 'usage-key-release-index',
  partitionKey: { name: 'usageKeyRelease', type: 'S' },
  projection: 'KEYS_ONLY',
} as const satisfies IndexDefinition;

/** The one value of `usageKeyRelease`. */
export const USAGE_KEY_RELEASE_QUEUE = 'pending';

/** Attributes that place a key in an index the sweep reads: no part of what the key is or may do. */
export const SWEEP_INDEX_ATTRIBUTES: readonly string[] = [
  apiKeysExpiryIndex.partitionKey.name,
  apiKeysExpiryIndex.sortKey.name,
  apiKeysUsageKeyReleaseIndex.partitionKey.name,
];

/**
 * API keys, found by the SHA-256 hash of the key: the key itself is never stored. Its stream
 * feeds the audit trail of key changes (shared/key-audit.ts).
 */
export const apiKeysTable = {
  id: 'ApiKeysTable',
  defaultName: 'api-keys',
  nameVariable: 'API_KEYS_TABLE_NAME',
  partitionKey: { name: 'keyHash', type: 'S' },
  globalSecondaryIndexes: [apiKeysIdIndex, apiKeysExpiryIndex, apiKeysUsageKeyReleaseIndex],
  stream: 'NEW_AND_OLD_IMAGES',
} as const satisfies TableDefinition;

/**
 * Each key's last use, by the key's hash: `lastUsedAt` (S, ISO 8601 UTC), written by the authorizer
 * at most once an hour. Apart from the keys table so that no write of the authorizer's can touch a
 * key's item: under a global table's last writer wins, such a write made in one region could undo
 * a revoke made in another (docs/architecture.md, "Keys across regions"). No stream: a use is no
 * change of the key, for the audit trail or for the local server's cache.
 */
export const apiKeyLastUseTable = {
  id: 'ApiKeyLastUseTable',
  defaultName: 'api-key-last-use',
  nameVariable: 'API_KEY_LAST_USE_TABLE_NAME',
  partitionKey: { name: 'keyHash', type: 'S' },
  globalSecondaryIndexes: [],
} as const satisfies TableDefinition;

/**
 * Idempotent creates: one record per (caller, Idempotency-Key), written before its pet
 * (shared/idempotency.ts): the request's hash, the pet's id and stored fields, and its expiry
 * (`expiresAt`, epoch seconds). No TTL and no transaction: a strongly consistent global table
 * has neither; the sweep reads the table and deletes the expired records (shared/idempotency-records.ts).
 * No index: one would cost a write unit more for each put and each delete, in every region.
 */
export const idempotencyTable = {
  id: 'IdempotencyTable',
  defaultName: 'idempotency',
  nameVariable: 'IDEMPOTENCY_TABLE_NAME',
  partitionKey: { name: 'id', type: 'S' },
  globalSecondaryIndexes: [],
} as const satisfies TableDefinition;

/** Each table's definition, under the key every other place names it by: a table is added here once. */
export const tableDefinitions = {
  pets: petsTable,
  apiKeys: apiKeysTable,
  apiKeyLastUse: apiKeyLastUseTable,
  idempotency: idempotencyTable,
} as const satisfies Record<string, TableDefinition>;

/** The names the tables have in one place: deployed, configured, or made up for a test. */
export type TableNames = { readonly [Table in keyof typeof tableDefinitions]: string };

/** Every table's key, in the definitions' order: what a place that handles every table goes through. */
export const TABLE_KEYS = Object.keys(tableDefinitions) as ReadonlyArray<keyof TableNames>;

/** A name for every table, each made from its definition: a tool's or a test's own names, none left out. */
export const tableNamesOf = (nameOf: (definition: TableDefinition, table: keyof TableNames) => string): TableNames =>
  Object.fromEntries(TABLE_KEYS.map((table) => [table, nameOf(tableDefinitions[table], table)])) as Record<keyof TableNames, string>;

/** The CreateTable request for a definition: on-demand, each index projecting what it says, its stream on. */
export const createTableInput = (table: TableDefinition, tableName: string): CreateTableCommandInput => {
  const attributes = new Map<string, KeyAttribute>();
  for (const key of [table.partitionKey, ...table.globalSecondaryIndexes.flatMap(indexKeys)]) {
    attributes.set(key.name, key);
  }
  const indexes = table.globalSecondaryIndexes.map((index) => ({
    IndexName: index.indexName,
    KeySchema: indexKeys(index).map(keySchemaElement),
    Projection: { ProjectionType: index.projection ?? 'ALL' },
  }));
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attributes.values()].map((key) => ({ AttributeName: key.name, AttributeType: key.type })),
    KeySchema: [keySchemaElement(table.partitionKey, 0)],
    ...(indexes.length > 0 ? { GlobalSecondaryIndexes: indexes } : {}),
    ...(table.stream ? { StreamSpecification: { StreamEnabled: true, StreamViewType: table.stream } } : {}),
  };
};

const indexKeys = (index: IndexDefinition): KeyAttribute[] => (index.sortKey ? [index.partitionKey, index.sortKey] : [index.partitionKey]);

const keySchemaElement = (key: KeyAttribute, position: number) => ({
  AttributeName: key.name,
  KeyType: position === 0 ? ('HASH' as const) : ('RANGE' as const),
});
