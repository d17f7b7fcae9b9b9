/**
 * Whether this region can read the tables it serves from: the only DynamoDB details of the health
 * route and of the health probe that Route 53's check of the region follows. One strongly
 * consistent GetItem of a key no item can have on each of the pets, keys and idempotency tables,
 * each naming its key attribute alone, so the read returns nothing whatever is stored. Strongly
 * consistent, because such a read needs the region's own replica (its leader) to answer; on the
 * idempotency table, a strongly consistent global table (MRSC), it needs the region to reach the
 * quorum too, so a region cut off from it, where every keyed create fails, fails the check.
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { dynamoDBOptions, tableNames as configuredTableNames } from './config';
import { createDocumentClient, DatabaseUnavailable } from './dynamodb';
import { apiKeysTable, idempotencyTable, petsTable, type TableNames } from './tables';

/** How long one execution environment reuses its answer: a flood of health requests cannot drive the tables. */
export const HEALTH_REUSE_SECONDS = 5;

/** Keys no item has: pet ids start at 1, and a key's hash and a record's key are 64 hexadecimal digits. */
export const PROBE_KEYS = {
  pets: { [petsTable.partitionKey.name]: 0 },
  apiKeys: { [apiKeysTable.partitionKey.name]: 'health-probe' },
  idempotency: { [idempotencyTable.partitionKey.name]: 'health-probe' },
} as const;

/** The tables the check reads, each by its key attribute. */
const PROBED = {
  pets: { keyName: petsTable.partitionKey.name, what: 'pet read' },
  apiKeys: { keyName: apiKeysTable.partitionKey.name, what: 'key read' },
  idempotency: { keyName: idempotencyTable.partitionKey.name, what: 'idempotency record read' },
} as const satisfies Record<keyof typeof PROBE_KEYS, unknown>;

export interface DatabaseHealth {
  /** Resolves when every table answered; DatabaseUnavailable when one did not, whatever the error. */
  check(): Promise<void>;
}

export interface DatabaseHealthOptions {
  readonly client?: DynamoDBDocumentClient;
  readonly tables?: Pick<TableNames, keyof typeof PROBE_KEYS>;
}

export const databaseHealth = ({
  client = createDocumentClient(dynamoDBOptions()),
  tables = configuredTableNames(),
}: DatabaseHealthOptions = {}): DatabaseHealth => {
  const read = async (table: keyof typeof PROBE_KEYS) => {
    const { keyName, what } = PROBED[table];
    try {
      await client.send(
        new GetCommand({ TableName: tables[table], Key: PROBE_KEYS[table], ConsistentRead: true, ProjectionExpression: keyName }),
      );
    } catch (error) {
      // Any failure is the region not reading its table, a missing table or a denied read too:
      // the health check must fail for it, with a 503, never a 500. Only the error's name is kept.
      throw new DatabaseUnavailable(`${what}: ${error instanceof Error ? error.name : typeof error}`);
    }
  };
  return {
    check: async () => {
      await Promise.all((Object.keys(PROBED) as Array<keyof typeof PROBED>).map(read));
    },
  };
};

/**
 * The check's outcome reused for `seconds` (success or failure), and one check at a time: a flood
 * of health requests reads each table at most once per `seconds` per execution environment.
 */
export const reusedFor = (health: DatabaseHealth, seconds: number, now: () => number = Date.now): DatabaseHealth => {
  let last: { readonly at: number; readonly outcome: Promise<void> } | undefined;
  return {
    check: () => {
      const at = now();
      if (last === undefined || at - last.at >= seconds * 1_000) {
        const outcome = health.check();
        // Held rejected for the callers within the window; marked handled so that none is reported unhandled.
        outcome.catch(() => undefined);
        last = { at, outcome };
      }
      return last.outcome;
    },
  };
};
