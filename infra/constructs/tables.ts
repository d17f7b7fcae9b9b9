/**
 * PetStoreTables: the pets, API-keys, keys' last use and idempotency tables, built from the shared definitions the
 * local server and the tests also use, so the deployed key schema and indexes cannot drift.
 *
 * Every table is a global table (TableV2, AWS::DynamoDB::GlobalTable) in every stage, with a fixed
 * name: a replica can be added later only to a global table, and each region's stack finds its
 * replica by that name. The home region's stack defines the tables, with a replica in each other
 * region of the stage; the other regions' stacks import their replica (docs/architecture.md, Regions).
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  Billing,
  MultiRegionConsistency,
  ProjectionType,
  StreamViewType,
  TableEncryptionV2,
  TableV2,
  type Attribute,
  type GlobalSecondaryIndexPropsV2,
  type ITableV2,
} from 'aws-cdk-lib/aws-dynamodb';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { deployedTableName } from '../../shared/stack';
import { TABLE_KEYS, tableDefinitions, type KeyAttribute, type TableDefinition, type TableNames } from '../../shared/tables';
import { ReplicaStream } from './replica-stream';
import type { ProtectedTable } from './table-protection';

export interface PetStoreTablesProps {
  /** Names the tables `<project>-<stage>-<table>`. */
  readonly stage: string;
  /** The stage's regions (none or one: a stage in one region, no replica) and this stack's region. */
  readonly regions: readonly string[];
  readonly region: string;
  /** Whether this stack is the home region's (or the stage's one region's): it defines the tables; the others import their replicas. */
  readonly home: boolean;
  /** The witness of the strongly consistent tables, for a stage in two regions. */
  readonly witnessRegion?: string;
  /** Names the function that reads an imported replica's stream. */
  readonly namePrefix: string;
  readonly logRetention: RetentionDays;
  /**
   * RETAIN_ON_UPDATE_OR_DELETE keeps the tables when the stack is deleted or they are replaced, but
   * lets a rolled-back first create delete them; the stack turns their deletion protection on,
   * last in every deploy (./table-protection.ts).
   */
  readonly removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE | RemovalPolicy.DESTROY;
}

/**
 * The tables whose every region must see a write at once (MRSC), in a stage in several regions: the
 * idempotency records, so that a retry in another region finds its create. The others are
 * eventually consistent (MREC), last writer wins.
 */
export const STRONGLY_CONSISTENT_TABLES: ReadonlySet<keyof TableNames> = new Set(['idempotency']);

export class PetStoreTables extends Construct {
  readonly pets: ITableV2;
  readonly apiKeys: ITableV2;
  readonly apiKeyLastUse: ITableV2;
  readonly idempotency: ITableV2;
  /** Every table of shared/tables.ts, by its key: what grants and the dashboard take, so a new table needs no line here. */
  readonly byName: Readonly<Record<keyof TableNames, ITableV2>>;
  /** The global tables this stack defines, by their fixed names: every table in the home region's stack, none in the others. */
  readonly defined: readonly ProtectedTable[];
  /** The regions of every table's replicas: this stack's region first, then the stage's others. */
  readonly replicaRegions: readonly string[];
  constructor(scope: Construct, id: string, props: PetStoreTablesProps) {
    super(scope, id);
    const defined: ProtectedTable[] = [];
    const table = (key: keyof TableNames): ITableV2 => {
      const definition = tableDefinitions[key];
      const tableName = deployedTableName(props.stage, definition);
      if (!props.home) return replicaOf(this, definition, tableName, props);
      const global = globalTable(this, definition, tableName, { ...props, strong: STRONGLY_CONSISTENT_TABLES.has(key) });
      defined.push({ tableName, table: global });
      return global;
    };
    this.byName = Object.fromEntries(TABLE_KEYS.map((key) => [key, table(key)])) as Record<keyof TableNames, ITableV2>;
    // The tables some construct uses by name (the key audit, the sweep, the stack's outputs).
    this.pets = this.byName.pets;
    this.apiKeys = this.byName.apiKeys;
    this.apiKeyLastUse = this.byName.apiKeyLastUse;
    this.idempotency = this.byName.idempotency;
    this.defined = defined;
    this.replicaRegions = [props.region, ...props.regions.filter((other) => other !== props.region)];
  }
}

const attribute = (key: KeyAttribute): Attribute => ({
  name: key.name,
  type: key.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER,
});

const globalSecondaryIndexes = (definition: TableDefinition): GlobalSecondaryIndexPropsV2[] =>
  definition.globalSecondaryIndexes.map((index) => ({
    indexName: index.indexName,
    partitionKey: attribute(index.partitionKey),
    ...(index.sortKey ? { sortKey: attribute(index.sortKey) } : {}),
    projectionType: ProjectionType[index.projection ?? 'ALL'],
  }));

/**
 * The global table, in the home region, with a replica in each other region of the stage. A
 * strongly consistent table (in a stage in several regions) has no TTL: MRSC tables do not support it.
 */
const globalTable = (
  scope: Construct,
  definition: TableDefinition,
  tableName: string,
  { regions, region, witnessRegion, removalPolicy, strong }: PetStoreTablesProps & { readonly strong: boolean },
): TableV2 => {
  const mrsc = strong && regions.length > 1;
  return new TableV2(scope, definition.id, {
    tableName,
    partitionKey: attribute(definition.partitionKey),
    billing: Billing.onDemand(),
    encryption: TableEncryptionV2.awsManagedKey(),
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    // No deletion protection in the template: a rolled-back first create must delete the tables it
    // made, which DynamoDB refuses for a protected one. TableProtection turns it on, last.
    removalPolicy,
    globalSecondaryIndexes: globalSecondaryIndexes(definition),
    ...(definition.stream ? { dynamoStream: StreamViewType[definition.stream] } : {}),
    replicas: regions.filter((other) => other !== region).map((other) => ({ region: other })),
    ...(mrsc ? { multiRegionConsistency: MultiRegionConsistency.STRONG, ...(witnessRegion ? { witnessRegion } : {}) } : {}),
  });
};

/**
 * This region's replica, by its name; with its stream, read at deploy, where the table has one
 * (the keys table's feeds the audit trail in every region).
 */
const replicaOf = (
  scope: Construct,
  definition: TableDefinition,
  tableName: string,
  { namePrefix, logRetention, removalPolicy }: PetStoreTablesProps,
): ITableV2 => {
  const grantIndexPermissions = definition.globalSecondaryIndexes.length > 0;
  if (!definition.stream) return TableV2.fromTableAttributes(scope, definition.id, { tableName, grantIndexPermissions });
  const named = TableV2.fromTableAttributes(scope, `${definition.id}Name`, { tableName });
  const { streamArn } = new ReplicaStream(scope, `${definition.id}Stream`, {
    table: named,
    functionName: `${namePrefix}-${definition.defaultName}-stream`,
    logRetention,
    removalPolicy,
  });
  return TableV2.fromTableAttributes(scope, definition.id, { tableName, grantIndexPermissions, tableStreamArn: streamArn });
};
