/**
 * PetStoreFunctions: one function per operation of the route table, plus the authorizer, each
 * allowed exactly the DynamoDB actions its code sends, on exactly the table or index it reads.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { CORS_ORIGINS_VARIABLE } from '../../shared/http/cors';
import { REGION_INDEX_VARIABLE } from '../../shared/ids';
import { docsOf } from '../../shared/route-docs';
import { routes, type HandledOperationId, type Route } from '../../shared/routes';
import type { TableAccess } from '../../shared/table-access';
import {
  apiKeysExpiryIndex,
  apiKeysUsageKeyReleaseIndex,
  STATUS_SHARDS_VARIABLE,
  tableDefinitions,
  type TableNames,
} from '../../shared/tables';
import type { ReservedConcurrency } from '../stages';
import { requestPathBundling } from '../bundling';
import { ApiFunction } from './api-function';
import { RequestMetrics } from './request-metrics';
import { functionNameOf, pascalCase } from './names';

export { pascalCase } from './names';

/**
 * The operations that run a function, the authorizer, the key audit trail's two
 * (infra/constructs/key-audit.ts), the idempotency sweep (infra/constructs/idempotency-sweep.ts)
 * and the region's health probe (infra/constructs/health-probe.ts).
 */
export type FunctionName = HandledOperationId | 'authorizer' | 'keyAudit' | 'keyExpiry' | 'idempotencySweep' | 'healthProbe';

export type { TableAccess } from '../../shared/table-access';

/** Each operation's grants, from its route. */
const operationAccess = Object.fromEntries(
  routes.flatMap((route: Route) => ('handler' in route ? [[route.operationId, route.tableAccess ?? []]] : [])),
) as Record<HandledOperationId, readonly TableAccess[]>;

/**
 * What each function may do, and nothing more: each operation's function what its route grants,
 * and here the others'. No function may delete an item, but the idempotency sweep an expired
 * record. An UpdateItem grant names the only attributes it may touch, and asks nothing back
 * (ALL_OLD or ALL_NEW would return the others).
 * Only the authorizer and the expiry sweep read the keys, and only they change one: an
 * unrestricted UpdateItem could remove a `revokedAt`, widen `scopes` or give a key another plan.
 * A test runs every handler against DynamoDB Local and checks that the commands it sends, and the
 * attributes they name, are exactly these; test/infra/stack.test.ts holds every grant to these rules.
 */
export const tableAccess: Readonly<Record<FunctionName, readonly TableAccess[]>> = {
  ...operationAccess,
  // The authorizer reads a key and, alongside, its last use, which it writes at most once an hour
  // (a conditional update) in a table of its own: it writes nothing of the key's item, so that no
  // write of its can undo a revoke made in another region (docs/architecture.md, "Keys across regions").
  authorizer: [
    { table: 'apiKeys', actions: ['dynamodb:GetItem'] },
    { table: 'apiKeyLastUse', actions: ['dynamodb:GetItem'] },
    { table: 'apiKeyLastUse', actions: ['dynamodb:UpdateItem'], attributes: ['keyHash', 'lastUsedAt'], returnValues: ['NONE'] },
  ],
  // The keys table's stream reaches it through its event source mapping, which grants the stream read.
  keyAudit: [],
  // Reads the keys due in the expiry index, and no other, then marks each expired one: its
  // expiredAt and who changed it, on the condition that it is still in the index at the time read
  // (a key the key tool revoked meanwhile has left it, one it rolled to another expiry moved), and
  // takes it out of the index (or moves it there, its expiry moved in the console), into the
  // usage-key release index. Then reads the keys of that index, each and the keys of its rolls by their hash, and
  // records each usage key it deleted (usageKeyDeletedAt), taking the key out. IAM's
  // dynamodb:Attributes holds the attributes a condition evaluates as well as those written
  // (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html),
  // so its conditions read only what it writes: its role cannot touch expiresAt or revokedAt.
  keyExpiry: [
    { table: 'apiKeys', index: apiKeysExpiryIndex.indexName, actions: ['dynamodb:Query'] },
    { table: 'apiKeys', index: apiKeysUsageKeyReleaseIndex.indexName, actions: ['dynamodb:Query'] },
    { table: 'apiKeys', actions: ['dynamodb:GetItem'] },
    {
      table: 'apiKeys',
      actions: ['dynamodb:UpdateItem'],
      attributes: [
        'keyHash',
        'expiredAt',
        'changedBy',
        'changedAt',
        // The region the change was written in (the sweep's own, the home region): each region's
        // audit logs the change once, where it was made (shared/key-audit.ts).
        'changedInRegion',
        // Not usageKeyId: no condition of the sweep reads it, so its role may not write it either.
        'usageKeyDeletedAt',
        apiKeysExpiryIndex.partitionKey.name,
        apiKeysExpiryIndex.sortKey.name,
        apiKeysUsageKeyReleaseIndex.partitionKey.name,
      ],
      returnValues: ['NONE'],
    },
  ],
  // Reads the expired records' keys in the expiry index, and deletes each on the condition that it
  // is still expired: the delete names the key and expiresAt alone, and asks nothing back. The one
  // delete any function may send; it cannot put or change a record.
  idempotencySweep: [
    // It reads the table whole (a Scan returning the expired items' keys): no index of expiries. Of
    // each item its key and expiry only, as the keys-only index it replaces gave it.
    { table: 'idempotency', actions: ['dynamodb:Scan'], attributes: ['id', 'expiresAt'] },
    { table: 'idempotency', actions: ['dynamodb:DeleteItem'], attributes: ['id', 'expiresAt'], returnValues: ['NONE'] },
  ],
  // The region's health probe runs the health route's check (shared/database-health.ts): the same
  // reads, each of a key no item has, naming its key attribute alone. Its metric is a log line (EMF).
  healthProbe: operationAccess.getHealth,
};

export const AUTHORIZER_ENTRY = 'functions/authorizer.ts';

export interface PetStoreFunctionsProps {
  /** Names the functions `<namePrefix>-<operationId>` (and their log groups). */
  readonly namePrefix: string;
  /** The `service` of the functions' log lines and metrics: the stage's own. */
  readonly serviceName: string;
  /** Every table, by its key in shared/tables.ts: each function is granted those its grants name. */
  readonly tables: Readonly<Record<keyof TableNames, ITableV2>>;
  /** Origins the API's functions answer CORS for; none turns CORS off. */
  readonly corsAllowedOrigins: readonly string[];
  /** The index of the stack's region among its stage's regions, which the pet ids it mints carry. */
  readonly regionIndex: number;
  /** Executions kept for the authorizer, and for (and the most used by) each operation's function; none: unreserved. */
  readonly reservedConcurrency?: ReservedConcurrency;
  /** The status index's shards: the functions granted the pets table write and list by them. */
  readonly statusIndexShards: number;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

export class PetStoreFunctions extends Construct {
  /** The API's functions by operationId. */
  readonly operations: ReadonlyMap<string, ApiFunction>;
  readonly authorizer: ApiFunction;

  constructor(scope: Construct, id: string, props: PetStoreFunctionsProps) {
    super(scope, id);
    const { tables } = props;

    // A function is told the name of each table it is granted, and of no other: its grants say
    // which tables its code uses, so the two cannot drift apart.
    const build = (
      name: FunctionName,
      entry: string,
      description: string,
      reservedConcurrentExecutions: number | undefined,
      environment: Record<string, string> = {},
    ) => {
      const grants = tableAccess[name];
      const tableNames = tableNameVariables(grants, tables);
      const region: Record<string, string> = writesPets(grants) ? { [REGION_INDEX_VARIABLE]: String(props.regionIndex) } : {};
      const shards: Record<string, string> = grants.some(({ table }) => table === 'pets')
        ? { [STATUS_SHARDS_VARIABLE]: String(props.statusIndexShards) }
        : {};
      const fn = new ApiFunction(this, pascalCase(name), {
        entry,
        functionName: functionNameOf(props.namePrefix, name),
        description,
        serviceName: props.serviceName,
        environment: { ...tableNames, ...region, ...shards, ...environment },
        reservedConcurrentExecutions,
        // Each of them is on a request's path: built for it, and with no START and REPORT line of
        // Lambda's beside its own access line (infra/costs.ts counts the bytes).
        bundling: requestPathBundling(props.corsAllowedOrigins),
        withoutPlatformLines: true,
        logRetention: props.logRetention,
        removalPolicy: props.removalPolicy,
      });
      grantTableAccess(fn, grants, tables);
      return fn;
    };

    const origins = props.corsAllowedOrigins;
    const cors: Record<string, string> = origins.length > 0 ? { [CORS_ORIGINS_VARIABLE]: origins.join(',') } : {};
    const reserved = props.reservedConcurrency;
    const operations = new Map<HandledOperationId, ApiFunction>();
    for (const route of routes) {
      if (!('handler' in route)) continue;
      operations.set(
        route.operationId,
        build(route.operationId, route.handler, `pet store: ${docsOf(route.operationId).summary}`, reserved?.eachOperation, cors),
      );
    }
    this.operations = operations;
    // What each answer counts, from its function's access lines.
    new RequestMetrics(this, 'RequestMetrics', { functions: operations });
    this.authorizer = build('authorizer', AUTHORIZER_ENTRY, 'pet store: bearer API key authorizer', reserved?.authorizer);
  }
}

/** Grants a function its table access, action by action, on exactly the table or index named. */
export const grantTableAccess = (
  fn: ApiFunction,
  grants: readonly TableAccess[],
  tables: Readonly<Partial<Record<TableAccess['table'], ITableV2>>>,
) => {
  for (const access of grants) {
    const table = tables[access.table];
    if (!table) throw new Error(`No ${access.table} table to grant ${access.actions.join(', ')} on.`);
    const arn = access.index ? `${table.tableArn}/index/${access.index}` : table.tableArn;
    fn.function.addToRolePolicy(policyStatement(access, arn));
  }
};

/** Whether a function may put items in the pets table: it creates pets, so it mints their ids. */
const writesPets = (grants: readonly TableAccess[]) =>
  grants.some(({ table, index, actions }) => table === 'pets' && index === undefined && actions.includes('dynamodb:PutItem'));

/** The environment that tells a function the names of the tables it is granted, and of no other. */
export const tableNameVariables = (grants: readonly TableAccess[], tables: Readonly<Partial<Record<TableAccess['table'], ITableV2>>>) =>
  Object.fromEntries(grants.map(({ table }) => [tableDefinitions[table].nameVariable, tables[table]?.tableName ?? '']));

/**
 * One statement per grant. Attributes and return values become AWS's documented fine-grained access
 * conditions: every attribute the request names is one of them, and it asks for no other return
 * values than the grant's. This cannot be tried without an AWS account: DynamoDB Local checks no IAM.
 */
const policyStatement = ({ actions, attributes, returnValues }: TableAccess, resource: string) => {
  const conditions = {
    ...(attributes === undefined
      ? {}
      : {
          'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...attributes] },
          // ForAllValues is true of a request that names no attributes at all: the key must be there.
          Null: { 'dynamodb:Attributes': 'false' },
        }),
    ...(returnValues === undefined ? {} : { StringEqualsIfExists: { 'dynamodb:ReturnValues': [...returnValues] } }),
  };
  return new PolicyStatement({
    actions: [...actions],
    resources: [resource],
    ...(Object.keys(conditions).length > 0 ? { conditions } : {}),
  });
};
