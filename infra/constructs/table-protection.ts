/**
 * TableProtection: a kept stage's tables end every successful deploy with DynamoDB's deletion
 * protection on, in every region that holds a replica, with no step by hand.
 *
 * The setting cannot be in the template: DynamoDB refuses to delete a protected table to
 * CloudFormation too, so a first create that fails would end ROLLBACK_FAILED, its tables left to
 * block the retry with "already exists" (test/infra/deploy-rules.test.ts). Instead, one custom
 * resource per table and region has our function (functions/table-protection.ts) turn it on at deploy:
 *
 * - last: each depends on every other resource of the stack (and on the one before it, so the
 *   calls go one at a time), so nothing of a create can fail after a table is protected but
 *   another of these calls. This holds per stack, which is enough: the tables live only in the
 *   home region's stack (the other regions' stacks hold no table, and no protection);
 * - the function waits until the table, its replicas and indexes are settled, and retries what
 *   passes with time (a busy table, a role not yet effective) for minutes, so a table still
 *   changing after the rest of the deploy does not roll the release back;
 * - RetainExceptOnCreate: CloudFormation sends it a Delete only when the stack operation that
 *   created it rolls back. Its create records whether the protection was on before (a running
 *   stage's tables, protected by hand), and its Delete turns the protection off only if it turned
 *   it on, so that the rollback deletes the tables it made and leaves a protected table protected.
 *   A stack deleted, or the resource taken out of the template or replaced, sends none: the tables
 *   stay protected;
 * - its properties carry a fingerprint of its table's template: any change of the table makes
 *   CloudFormation update it after the table's own update, which turns the protection on again
 *   (AWS does not document what a GlobalTable update does to a replica setting its template
 *   leaves out).
 *
 * The function's role may describe and update exactly these tables, in exactly these regions, and
 * write its own log group; the calls wait for the role's policy explicitly. A function that never
 * answers fails its resource after the service timeout, not CloudFormation's hour.
 */
import { Aspects, CustomResource, Duration, Lazy, RemovalPolicy, Stack, type CfnResource, type IAspect } from 'aws-cdk-lib';
import type { CfnGlobalTable, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Policy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct, type IConstruct } from 'constructs';
import { createHash } from 'node:crypto';
import {
  PROTECTION_BUDGET_SECONDS,
  TABLE_NAME_PROPERTY,
  TABLE_PROTECTION_RESOURCE_TYPE,
  TABLE_REGION_PROPERTY,
  TABLE_TEMPLATE_PROPERTY,
} from '../../shared/table-protection';
import { ApiFunction } from './api-function';
import { pascalCase } from './names';

export { TABLE_PROTECTION_RESOURCE_TYPE, TABLE_TEMPLATE_PROPERTY } from '../../shared/table-protection';

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
  /** The function's name, within the stage's own names. */
  readonly functionName: string;
  /** The `service` of its log lines: the stage's own. */
  readonly serviceName: string;
  readonly logRetention: RetentionDays;
  /** The stage's: its log group is kept as its tables are. */
  readonly removalPolicy: RemovalPolicy;
}

/** The function's timeout: its retries' budget, and time to answer CloudFormation. */
export const PROTECTION_FUNCTION_TIMEOUT = Duration.seconds(PROTECTION_BUDGET_SECONDS + 120);
/** How long CloudFormation waits for an answer: the function's timeout and a minute (not its default hour). */
export const PROTECTION_SERVICE_TIMEOUT = Duration.seconds(PROTECTION_FUNCTION_TIMEOUT.toSeconds() + 60);

const fingerprintOf = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

export class TableProtection extends Construct {
  /** The custom resources, in the order they run. */
  readonly resources: readonly CustomResource[];
  readonly function: ApiFunction;
  /** The role's grant on the tables: every call waits for it. */
  readonly tablesPolicy: Policy;

  constructor(
    scope: Construct,
    id: string,
    { tables, regions, functionName, serviceName, logRetention, removalPolicy }: TableProtectionProps,
  ) {
    super(scope, id);
    const stack = Stack.of(this);
    this.function = new ApiFunction(this, 'Function', {
      entry: 'functions/table-protection.ts',
      functionName,
      description: "pet store: turns on the deletion protection of the stage's tables in each region, at deploy",
      serviceName,
      environment: {},
      timeout: PROTECTION_FUNCTION_TIMEOUT,
      // CloudFormation invokes it by its ARN: no version, no alias.
      withLiveAlias: false,
      logRetention,
      removalPolicy,
    });
    const role = this.function.function.role;
    if (!role) throw new Error('The table protection function has no role');
    // The tables by their fixed names, not their resources: the role and its policy exist long before the calls.
    this.tablesPolicy = new Policy(this, 'TablesPolicy', {
      roles: [role],
      statements: [
        new PolicyStatement({
          actions: ['dynamodb:DescribeTable', 'dynamodb:UpdateTable'],
          resources: regions.flatMap((region) =>
            tables.map(({ tableName }) => stack.formatArn({ service: 'dynamodb', region, resource: 'table', resourceName: tableName })),
          ),
        }),
      ],
    });

    // Region by region, so that two calls in a row are never on one table.
    const resources = regions.flatMap((region) =>
      tables.map(({ tableName, table }) => {
        const cfnTable = table.node.defaultChild as CfnGlobalTable;
        const resource = new CustomResource(this, `${table.node.id}${region === stack.region ? '' : regionId(region)}`, {
          serviceToken: this.function.function.functionArn,
          resourceType: TABLE_PROTECTION_RESOURCE_TYPE,
          serviceTimeout: PROTECTION_SERVICE_TIMEOUT,
          properties: {
            [TABLE_NAME_PROPERTY]: tableName,
            // A replica's setting is its own: the call goes to that replica's region.
            [TABLE_REGION_PROPERTY]: region,
            [TABLE_TEMPLATE_PROPERTY]: Lazy.string({ produce: () => fingerprintOf(stack.resolve(cfnTable._toCloudFormation())) }),
          },
          removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
        });
        (resource.node.defaultChild as CfnResource).addResourceDependency(
          this.tablesPolicy.node.defaultChild as CfnResource,
          "its calls need the role's grant on the tables",
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
