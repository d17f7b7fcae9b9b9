/**
 * ReplicaStream: the stream ARN of this region's replica of a global table that another region's
 * stack defines. A replica's stream has a label of its own, known only once the replica exists, so
 * it is read at deploy with DynamoDB's DescribeTable (`Table.LatestStreamArn`), by a custom
 * resource whose role may describe that one table and write its own log group, nothing else.
 *
 * It is read once, when the stack is created: the stream of a global table with more than one
 * replica cannot be changed (CloudFormation refuses a change of its StreamSpecification), and the
 * replica in this region, by its fixed name, lives as long as the stage runs here.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsCustomResource, AwsCustomResourcePolicy, Logging, PhysicalResourceId, type AwsSdkCall } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';

export interface ReplicaStreamProps {
  /** The replica, imported by name in this stack's region. */
  readonly table: ITableV2;
  /** Names the custom resource's function `<functionName>`, within the stage's own names. */
  readonly functionName: string;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/** Where DescribeTable's answer holds the stream of the table in the region it was asked in. */
const LATEST_STREAM_ARN = 'Table.LatestStreamArn';

export class ReplicaStream extends Construct {
  /** The replica's stream ARN, read at deploy. */
  readonly streamArn: string;

  constructor(scope: Construct, id: string, { table, functionName, logRetention, removalPolicy }: ReplicaStreamProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', { logGroupName: `/aws/lambda/${functionName}`, retention: logRetention, removalPolicy });
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: "Reads the stream ARN of this region's replica of a global table, at deploy",
    });
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }),
    );
    // The same call on an update (CloudFormation sends one only if the resource's own properties change).
    const describe: AwsSdkCall = {
      service: 'DynamoDB',
      action: 'describeTable',
      parameters: { TableName: table.tableName },
      physicalResourceId: PhysicalResourceId.fromResponse(LATEST_STREAM_ARN),
      outputPaths: [LATEST_STREAM_ARN],
      // Its answer names the table: it stays out of the log.
      logging: Logging.withDataHidden(),
    };
    const resource = new AwsCustomResource(this, 'Describe', {
      onCreate: describe,
      onUpdate: describe,
      functionName,
      role,
      logGroup,
      installLatestAwsSdk: false,
      policy: AwsCustomResourcePolicy.fromStatements([
        new PolicyStatement({ actions: ['dynamodb:DescribeTable'], resources: [table.tableArn] }),
      ]),
    });
    this.streamArn = resource.getResponseField(LATEST_STREAM_ARN);
  }
}
