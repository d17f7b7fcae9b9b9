/**
 * TableProtection: a kept stage's tables end every successful deploy with DynamoDB's deletion
 * protection on, in every region that holds a replica, with no step by hand.
 *
 * The setting cannot be in the template: DynamoDB refuses to delete a protected table to
 * CloudFormation too, so a first create that fails would end ROLLBACK_FAILED, its tables left to
 * block the retry with "already exists" (test/infra/deploy-rules.test.ts). Instead, one custom
 * resource per table and region calls UpdateTable {DeletionProtectionEnabled: true} at deploy:
 *
 * - last: each depends on every other resource of the stack (and on the one before it, so the
 *   calls go one at a time), so nothing of a create can fail after a table is protected but
 *   another of these calls;
 * - RetainExceptOnCreate: CloudFormation sends it a Delete only when the stack operation that
 *   created it rolls back, and its Delete then turns the protection off again, so that the
 *   rollback deletes the tables it made. A stack deleted, or the resource taken out of the
 *   template or replaced, sends none: the tables stay protected;
 * - its properties carry a fingerprint of its table's template: any change of the table makes
 *   CloudFormation update it after the table's own update, which turns the protection on again
 *   (AWS does not document what a GlobalTable update does to a replica setting its template
 *   leaves out).
 *
 * A call DynamoDB refuses (a table still busy, say) fails the deploy, which rolls back as above and
 * can be run again; the SDK retries a throttled one. One rollback turns off a protection it did not
 * make: that of a deploy that created the resource for a table that was there before (the first
 * deploy of this construct to a running stage, or a resource whose construct id changed), until the
 * next successful deploy. So the ids stay as they are: a table's id, and its region's but for the
 * stack's own.
 *
 * Their one function (CDK's AwsCustomResource provider, a singleton of the stack) has a role that
 * may update exactly these tables, in exactly these regions, and write its own log group; the role
 * and its policy are made early (they name the tables, not the tables' resources), the calls last.
 */
import { Aspects, Lazy, Stack, RemovalPolicy, type CfnResource, type IAspect } from 'aws-cdk-lib';
import type { CfnGlobalTable, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsCustomResource, Logging, PhysicalResourceId, type AwsSdkCall } from 'aws-cdk-lib/custom-resources';
import { Construct, type IConstruct } from 'constructs';
import { createHash } from 'node:crypto';
import { pascalCase } from './names';

/** A table the stack defines, by its fixed name. */
export interface ProtectedTable {
  readonly tableName: string;
  readonly table: TableV2;
}

export interface TableProtectionProps {
  /** The stack's global tables (the home region's stack's). */
  readonly tables: readonly ProtectedTable[];
  /** The regions of each table's replicas: the stack's own region first. */
  readonly regions: readonly string[];
  /** Names the custom resources' function `<functionName>`, within the stage's own names. */
  readonly functionName: string;
  readonly logRetention: RetentionDays;
  /** The stage's: its log group is kept as its tables are. */
  readonly removalPolicy: RemovalPolicy;
}

/** The custom resources' type: what the deploy rules and the IAM simulation find them by. */
export const TABLE_PROTECTION_RESOURCE_TYPE = 'Custom::TableDeletionProtection';
/** The property carrying the fingerprint of the protected table's template. */
export const TABLE_TEMPLATE_PROPERTY = 'TableTemplate';

/** Where UpdateTable's answer holds the replica's setting. */
export const PROTECTION_OUTPUT_PATH = 'TableDescription.DeletionProtectionEnabled';

/** The call that sets a replica's deletion protection, in its region. */
const deletionProtectionCall = (tableName: string, region: string, enabled: boolean): AwsSdkCall => ({
  service: 'DynamoDB',
  action: 'updateTable',
  parameters: { TableName: tableName, DeletionProtectionEnabled: enabled },
  // A replica's setting is its own: the call goes to that replica's region.
  region,
  physicalResourceId: PhysicalResourceId.of(`${tableName} in ${region}`),
  // What the resource answers CloudFormation with: the setting alone. The whole description of a
  // global table can pass the 4 KB CloudFormation takes from a custom resource.
  outputPaths: [PROTECTION_OUTPUT_PATH],
  // Its answer describes the table: it stays out of the log.
  logging: Logging.withDataHidden(),
});

const fingerprintOf = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

export class TableProtection extends Construct {
  /** The custom resources, in the order they run. */
  readonly resources: readonly AwsCustomResource[];

  constructor(scope: Construct, id: string, { tables, regions, functionName, logRetention, removalPolicy }: TableProtectionProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const logGroup = new LogGroup(this, 'Logs', { logGroupName: `/aws/lambda/${functionName}`, retention: logRetention, removalPolicy });
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: "Turns on the deletion protection of the stage's tables in each region, at deploy",
    });
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }),
    );
    // The tables by their fixed names, not their resources: the role and its policy exist long before the calls.
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['dynamodb:UpdateTable'],
        resources: regions.flatMap((region) =>
          tables.map(({ tableName }) => stack.formatArn({ service: 'dynamodb', region, resource: 'table', resourceName: tableName })),
        ),
      }),
    );

    // Region by region, so that two calls in a row are never on one table.
    const resources = regions.flatMap((region) =>
      tables.map(({ tableName, table }) => {
        const resource = new AwsCustomResource(this, `${table.node.id}${region === stack.region ? '' : regionId(region)}`, {
          resourceType: TABLE_PROTECTION_RESOURCE_TYPE,
          onCreate: deletionProtectionCall(tableName, region, true),
          onUpdate: deletionProtectionCall(tableName, region, true),
          // Sent only when the operation that created it rolls back (RetainExceptOnCreate): the
          // rollback then deletes the table, which it cannot while protected. Whatever its answer,
          // the rollback goes on: a call that failed protected nothing.
          onDelete: { ...deletionProtectionCall(tableName, region, false), ignoreErrorCodesMatching: '.*' },
          removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
          functionName,
          role,
          logGroup,
          installLatestAwsSdk: false,
        });
        const cfnTable = table.node.defaultChild as CfnGlobalTable;
        (resource.node.findChild('Resource').node.defaultChild as CfnResource).addPropertyOverride(
          TABLE_TEMPLATE_PROPERTY,
          Lazy.string({ produce: () => fingerprintOf(stack.resolve(cfnTable._toCloudFormation())) }),
        );
        return resource;
      }),
    );
    resources.forEach((resource, position) => {
      const previous = resources[position - 1];
      if (previous) resource.node.addDependency(previous);
    });
    this.resources = resources;
    // Once the stack is built: every resource outside this construct, whatever was added after it.
    Aspects.of(stack).add(new AfterEverythingElse(stack, this));
  }
}

/** Makes the protection depend on every other child of the stack, when the stack is synthesized. */
class AfterEverythingElse implements IAspect {
  constructor(
    private readonly stack: Stack,
    private readonly protection: TableProtection,
  ) {}

  visit(node: IConstruct): void {
    if (node !== this.stack) return;
    const [first] = this.protection.resources;
    if (!first) return;
    for (const child of this.stack.node.children) if (child !== this.protection) first.node.addDependency(child);
  }
}

/** `us-east-2` → `UsEast2`, for construct ids. */
const regionId = (region: string): string => region.split('-').map(pascalCase).join('');
