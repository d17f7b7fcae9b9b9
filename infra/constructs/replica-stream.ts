/**
 * ReplicaStream: the stream ARN of this region's replica of a global table that another region's
 * stack defines. A replica's stream has a label of its own, known only once the replica exists, so
 * it is read at deploy with DynamoDB's DescribeTable (`Table.LatestStreamArn`), by a custom
 * resource whose role may describe that one table and write its own log group, nothing else.
 *
 * CloudFormation runs a custom resource again only when its properties change, and the call's
 * parameters (the table's name) never do. The resource therefore also carries a fingerprint of
 * what the replica's stream comes from (`streamSource`): a change of it (a stream turned off and on
 * for a new view type, a replica made again for a change of regions, a table replaced for a new
 * key) makes CloudFormation update the resource, which reads the new stream's ARN, and the audit
 * mapping follows it.
 */
import { createHash } from 'node:crypto';
import { type CfnResource, type RemovalPolicy } from 'aws-cdk-lib';
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
  /**
   * What the replica's stream comes from, as the home region's stack defines the global table: its
   * name, key and stream, and the stage's regions. Any change of it re-reads the stream's ARN.
   */
  readonly streamSource: Readonly<Record<string, unknown>>;
}

/** The property of the custom resource that carries the fingerprint of `streamSource`. */
export const STREAM_SOURCE_PROPERTY = 'StreamSource';

/** A short, stable fingerprint of a JSON value: the same value, the same text, on every synth. */
export const fingerprintOf = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

/** Where DescribeTable's answer holds the stream of the table in the region it was asked in. */
const LATEST_STREAM_ARN = 'Table.LatestStreamArn';

export class ReplicaStream extends Construct {
  /** The replica's stream ARN, read at deploy. */
  readonly streamArn: string;

  constructor(scope: Construct, id: string, { table, functionName, logRetention, removalPolicy, streamSource }: ReplicaStreamProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', { logGroupName: `/aws/lambda/${functionName}`, retention: logRetention, removalPolicy });
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: "Reads the stream ARN of this region's replica of a global table, at deploy",
    });
    role.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }),
    );
    // The same call on create and on every update: a replica whose stream was turned off and on has a new one.
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
    // Ignored by the handler; its change is what makes CloudFormation send the update.
    (resource.node.findChild('Resource').node.defaultChild as CfnResource).addPropertyOverride(
      STREAM_SOURCE_PROPERTY,
      fingerprintOf(streamSource),
    );
    this.streamArn = resource.getResponseField(LATEST_STREAM_ARN);
  }
}
