/**
 * Whether this region can read the tables it serves from, and is not drained: the only DynamoDB
 * details of the health route and of the health probe that Route 53's check of the region follows.
 * One strongly consistent GetItem on each of the pets, keys and idempotency tables, each naming
 * its key attribute alone. On the pets and keys tables it reads a key no item can have, so the read
 * returns nothing whatever is stored; on the idempotency table it reads this region's switch
 * (shared/region-switch.ts), which stands only while operators have drained the region: then the
 * check fails as an unreadable table does, at no extra read. Strongly consistent, because such a
 * read needs the region's own replica (its leader) to answer; on the idempotency table, a strongly
 * consistent global table (MRSC), it needs the region to reach the quorum too, so a region cut off
 * from it, where every keyed create fails, fails the check.
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { dynamoDBOptions, tableNames as configuredTableNames } from './config';
import { createDocumentClient, DatabaseUnavailable } from './dynamodb';
import { regionSwitchKey } from './region-switch';
import { routeOf, type RouteOf } from './routes';
import { tableDefinitions, type TableNames } from './tables';

/** How long one execution environment reuses its answer: a flood of health requests cannot drive the tables. */
export const HEALTH_REUSE_SECONDS = 5;

/** The tables the check reads: those its route grants it to read (a new table is read once its route says so). */
export type ProbedTable = RouteOf<'getHealth'>['tableAccess'][number]['table'];
const probedTables: readonly ProbedTable[] = routeOf('getHealth').tableAccess.map(({ table }) => table);

/**
 * Keys no item has, of each table's key type: ids start at 1, and a string key is a hash, a UUID or
 * prefixed. The idempotency table's is read only where no region is known (a local server started
 * without AWS_REGION): such a server has no switch, and nothing drains it.
 */
const absentKey = (table: keyof TableNames) => {
  const { name, type } = tableDefinitions[table].partitionKey;
  return { [name]: type === 'N' ? 0 : 'health-probe' };
};
export const PROBE_KEYS = Object.fromEntries(probedTables.map((table) => [table, absentKey(table)])) as Record<
  ProbedTable,
  Record<string, string | number>
>;

export interface DatabaseHealth {
  /**
   * Resolves when every table answered and the region is not drained; DatabaseUnavailable when a
   * table did not answer, whatever the error, and its RegionDrained when the region is drained.
   */
  check(): Promise<void>;
}

/**
 * The region is drained by its operators (`npm run region`): the check fails as it does for a
 * table it cannot read, a 503 with Retry-After that says nothing more, and a probe's 0. Only the
 * logs tell the two apart, by this message.
 */
export class RegionDrained extends DatabaseUnavailable {
  constructor() {
    super('region drained');
    this.message = 'This region is drained by its operators (npm run region): its health check fails until it is restored.';
  }
}

export interface DatabaseHealthOptions {
  readonly client?: DynamoDBDocumentClient;
  readonly tables?: Pick<TableNames, ProbedTable>;
  /**
   * The region whose switch the idempotency read reads: by default the function's own
   * (AWS_REGION, which Lambda sets, and the local servers of a stage in several regions too).
   * `null`: no region's, a key no item has (PROBE_KEYS), for a caller whose reads are no region's.
   */
  readonly region?: string | null;
}

export const databaseHealth = ({
  client = createDocumentClient(dynamoDBOptions()),
  tables = configuredTableNames(),
  region = process.env.AWS_REGION,
}: DatabaseHealthOptions = {}): DatabaseHealth => {
  const keys = { ...PROBE_KEYS, ...(region ? { idempotency: regionSwitchKey(region) } : {}) };
  const read = async (table: ProbedTable) => {
    const keyName = tableDefinitions[table].partitionKey.name;
    const what = `${table} read`;
    let found: boolean;
    try {
      const { Item } = await client.send(
        new GetCommand({ TableName: tables[table], Key: keys[table], ConsistentRead: true, ProjectionExpression: keyName }),
      );
      found = Item !== undefined;
    } catch (error) {
      // Any failure is the region not reading its table, a missing table or a denied read too:
      // the health check must fail for it, with a 503, never a 500. Only the error's name is kept.
      throw new DatabaseUnavailable(`${what}: ${error instanceof Error ? error.name : typeof error}`);
    }
    // Of the keys read, only a region's switch can be stored.
    if (found && table === 'idempotency' && region) throw new RegionDrained();
  };
  return {
    check: async () => {
      // Every read ends before the check does (none goes on after the function has answered); a
      // table that cannot be read is the failure reported before a drain, as it says more.
      const results = await Promise.allSettled(probedTables.map(read));
      const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
      const failure = failures.find((error) => !(error instanceof RegionDrained)) ?? failures[0];
      if (failure !== undefined) throw failure;
    },
  };
};

/**
 * The check's outcome reused for `seconds` once it is known (success or failure), and one check at
 * a time: a check still running is joined, however long it takes, never doubled. A flood of health
 * requests reads each table at most once per `seconds` per execution environment, and a database
 * that hangs meets one check of this environment, not one more every `seconds`.
 */
export const reusedFor = (health: DatabaseHealth, seconds: number, now: () => number = Date.now): DatabaseHealth => {
  let running: Promise<void> | undefined;
  let last: { readonly at: number; readonly outcome: Promise<void> } | undefined;
  return {
    check: () => {
      if (running) return running;
      if (last !== undefined && now() - last.at < seconds * 1_000) return last.outcome;
      const outcome = health.check();
      running = outcome;
      // Registered before any caller's: a caller that awaited the outcome finds it settled here.
      // Held rejected for the callers within the window; handled here, so none is reported unhandled.
      const settle = () => {
        running = undefined;
        last = { at: now(), outcome };
      };
      outcome.then(settle, settle);
      return outcome;
    },
  };
};
