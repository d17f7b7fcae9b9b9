/**
 * PetStoreTables: the pets, API-keys, keys' last use and idempotency tables, built from the shared definitions the
 * local server and the tests also use, so the deployed key schema and indexes cannot drift.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  StreamViewType,
  Table,
  TableEncryption,
  type Attribute,
} from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import {
  apiKeyLastUseTable,
  apiKeysTable,
  idempotencyTable,
  petsTable,
  type KeyAttribute,
  type TableDefinition,
} from '../../shared/tables';

export interface PetStoreTablesProps {
  /** RETAIN_ON_UPDATE_OR_DELETE keeps the tables when the stack is deleted and turns on deletion protection. */
  readonly removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE | RemovalPolicy.DESTROY;
}

export class PetStoreTables extends Construct {
  readonly pets: Table;
  readonly apiKeys: Table;
  readonly apiKeyLastUse: Table;
  readonly idempotency: Table;

  constructor(scope: Construct, id: string, { removalPolicy }: PetStoreTablesProps) {
    super(scope, id);
    this.pets = tableFrom(this, petsTable, removalPolicy);
    this.apiKeys = tableFrom(this, apiKeysTable, removalPolicy);
    this.apiKeyLastUse = tableFrom(this, apiKeyLastUseTable, removalPolicy);
    this.idempotency = tableFrom(this, idempotencyTable, removalPolicy);
  }
}

const attribute = (key: KeyAttribute): Attribute => ({
  name: key.name,
  type: key.type === 'S' ? AttributeType.STRING : AttributeType.NUMBER,
});

const tableFrom = (scope: Construct, definition: TableDefinition, removalPolicy: RemovalPolicy): Table => {
  const table = new Table(scope, definition.id, {
    partitionKey: attribute(definition.partitionKey),
    billingMode: BillingMode.PAY_PER_REQUEST,
    encryption: TableEncryption.AWS_MANAGED,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    deletionProtection: removalPolicy !== RemovalPolicy.DESTROY,
    removalPolicy,
    ...(definition.stream ? { stream: StreamViewType[definition.stream] } : {}),
  });
  for (const index of definition.globalSecondaryIndexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.indexName,
      partitionKey: attribute(index.partitionKey),
      ...(index.sortKey ? { sortKey: attribute(index.sortKey) } : {}),
      projectionType: ProjectionType[index.projection ?? 'ALL'],
    });
  }
  return table;
};
