/**
 * Where AWS holds each name the stacks' resources can be given: once in the whole account
 * (`account`: IAM, Route 53, CloudWatch dashboards), once in each region of it (`region`), or
 * nowhere (`unnamed`: the type has no name of its own, or CloudFormation always makes it). One
 * entry per resource type the stages synthesize, each with the AWS page that says so;
 * test/infra/account-wide-names.test.ts fails on a type with no entry here, so a new kind of named
 * resource is placed before it can collide with another stage's, or another region's.
 */

type Properties = Readonly<Record<string, unknown>>;
export type NameScope = 'account' | 'region';

export interface HeldName {
  /** Where the name is held once: in the account, or in each of its regions. */
  readonly scope: NameScope | ((properties: Properties) => NameScope);
  /** The property that names it, dotted when inside another (`SamplingRule.RuleName`). Unset, CloudFormation makes up a name of its own, unique. */
  readonly name: string;
  /** What the name is held within besides the account (and region): its parent's reference, a record's type. */
  readonly within?: readonly string[];
  /** Types sharing one set of names (a table and a global table). @default the type */
  readonly namespace?: string;
  /** A property by which several resources of one name tell themselves apart, when each has its own (Route 53's SetIdentifier). */
  readonly distinguishedBy?: string;
  /** How AWS compares two names: IAM ignores case, DNS case and the final dot. @default as written */
  readonly normalize?: (name: string) => string;
  /** The regions the name is held in, when not only the stack's: a global table's, in each of its replicas'. */
  readonly heldIn?: (properties: Properties, stackRegion: string) => readonly string[];
  /** CloudFormation's Ref of the resource gives this name (when set), rather than an id or ARN. */
  readonly refIsName?: boolean;
  /** AWS's page, and its words. */
  readonly source: string;
}

export interface Unnamed {
  readonly scope: 'unnamed';
  readonly source: string;
}

export type NameRule = HeldName | Unnamed;

const ignoringCase = (name: string) => name.toLowerCase();
const dnsName = (name: string) => name.toLowerCase().replace(/\.$/, '');
/** API Gateway's ids of a REST API's parts are the API's own: their names are held in it, per region. */
const WITHIN_API = ['RestApiId'];
const API_GATEWAY_ARN =
  'https://docs.aws.amazon.com/IAM/latest/UserGuide/reference-arns.html: "Be aware that the ARNs for some resources omit the ' +
  'Region, the account ID, or both"; an API Gateway ARN names its region, and each part is named within its REST API';

export const NAME_RULES: Readonly<Record<string, NameRule>> = {
  // ---- Held once in the account, whatever the region.
  'AWS::CloudWatch::Dashboard': {
    scope: 'account',
    name: 'DashboardName',
    refIsName: true,
    source:
      'https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-cloudwatch-dashboard.html: ' +
      '"All dashboards in your account are global, not region-specific."',
  },
  'AWS::IAM::Role': {
    scope: 'account',
    name: 'RoleName',
    normalize: ignoringCase,
    refIsName: true,
    source:
      'IAM CreateRole, RoleName (https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html): "IAM user, group, role, ' +
      'and policy names must be unique within the account. Names are not distinguished by case."',
  },
  'AWS::IAM::Policy': {
    // An inline policy: named within the role (user, group) it is put in, IAM being account-wide.
    scope: 'account',
    name: 'PolicyName',
    within: ['Roles', 'Users', 'Groups'],
    normalize: ignoringCase,
    source:
      'IAM PutRolePolicy (https://docs.aws.amazon.com/IAM/latest/APIReference/API_PutRolePolicy.html) names a policy in one role; ' +
      'IAM ARNs have no region: "The Region portion of the ARN is blank because IAM resources are global" ' +
      '(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html)',
  },
  'AWS::Route53::RecordSet': {
    // Hosted zones are global; a record is its zone's name and type, and several of one name and
    // type (latency, weighted…) are told apart by their SetIdentifier.
    scope: 'account',
    name: 'Name',
    within: ['HostedZoneId', 'HostedZoneName', 'Type'],
    distinguishedBy: 'SetIdentifier',
    normalize: dnsName,
    source:
      'https://docs.aws.amazon.com/Route53/latest/APIReference/API_ResourceRecordSet.html, SetIdentifier: "An identifier that ' +
      'differentiates among multiple resource record sets that have the same combination of name and type"',
  },
  'AWS::Route53::HealthCheck': {
    scope: 'unnamed',
    source:
      'https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-route53-healthcheck.html: only ' +
      'HealthCheckConfig and HealthCheckTags; CloudFormation makes the CreateHealthCheck caller reference itself (the Name tag is a label)',
  },
  'AWS::ApiGateway::DomainName': {
    // Regional: one per region (the stage's domain is served in each region of a stage); edge-optimized: one anywhere.
    scope: (properties) =>
      ((properties.EndpointConfiguration as { Types?: string[] } | undefined)?.Types ?? ['EDGE']).includes('EDGE') ? 'account' : 'region',
    name: 'DomainName',
    normalize: dnsName,
    refIsName: true,
    source:
      'https://repost.aws/knowledge-center/custom-domain-name-amazon-api-gateway: "Regional custom domain names can be shared by ' +
      'other Regional custom domain names that are in different AWS Regions. Edge-optimized custom domain names are unique"',
  },

  // ---- Held once in each region of the account.
  'AWS::DynamoDB::GlobalTable': {
    scope: 'region',
    name: 'TableName',
    namespace: 'dynamodb-table',
    // The home region's stack makes the table in every region of its replicas.
    heldIn: (properties, stackRegion) =>
      ((properties.Replicas as Array<{ Region?: string }> | undefined) ?? []).map(({ Region }) => Region ?? stackRegion),
    refIsName: true,
    source:
      'DynamoDB CreateTable (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_CreateTable.html): "In an Amazon Web ' +
      'Services account, table names must be unique within each Region. That is, you can have two tables with same name if you ' +
      'create the tables in different Regions."',
  },
  'AWS::DynamoDB::Table': {
    scope: 'region',
    name: 'TableName',
    namespace: 'dynamodb-table',
    refIsName: true,
    source: 'DynamoDB CreateTable: "table names must be unique within each Region" (as AWS::DynamoDB::GlobalTable)',
  },
  'AWS::Logs::LogGroup': {
    scope: 'region',
    name: 'LogGroupName',
    refIsName: true,
    source:
      'CloudWatch Logs CreateLogGroup (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_CreateLogGroup.html): ' +
      '"Log group names must be unique within a Region for an Amazon Web Services account."',
  },
  'AWS::XRay::SamplingRule': {
    scope: 'region',
    name: 'SamplingRule.RuleName',
    source:
      'https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsx-ray.html: a sampling rule is ' +
      '"arn:${Partition}:xray:${Region}:${Account}:sampling-rule/${SamplingRuleName}", its name held in its account\'s region',
  },
  'AWS::Logs::MetricFilter': {
    scope: 'region',
    name: 'FilterName',
    within: ['LogGroupName'],
    source:
      'CloudWatch Logs PutMetricFilter (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutMetricFilter.html) ' +
      'names a filter within its log group, which is regional',
  },
  'AWS::Logs::QueryDefinition': {
    // Regional, and keyed by its id: AWS would take a second of one name, which the console's
    // folder would then list twice. Held once per region here, for that.
    scope: 'region',
    name: 'Name',
    source:
      'CloudWatch Logs PutQueryDefinition (https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_PutQueryDefinition.html): ' +
      '"Creates or updates a query definition for CloudWatch Logs Insights. … To update a query definition, specify its ' +
      'queryDefinitionId"; a CloudWatch Logs resource is in one region (its ARN names it)',
  },
  'AWS::Lambda::Function': {
    scope: 'region',
    name: 'FunctionName',
    refIsName: true,
    source:
      'https://docs.aws.amazon.com/IAM/latest/UserGuide/reference-arns.html: a function ARN is ' +
      'arn:aws:lambda:<region>:<account>:function:<name>, its name held in its region',
  },
  'AWS::Lambda::Alias': {
    scope: 'region',
    name: 'Name',
    within: ['FunctionName'],
    source: 'Lambda CreateAlias (https://docs.aws.amazon.com/lambda/latest/api/API_CreateAlias.html) names an alias of one function',
  },
  'AWS::CloudWatch::Alarm': {
    scope: 'region',
    name: 'AlarmName',
    refIsName: true,
    source:
      'CloudWatch PutMetricAlarm (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html), AlarmName: ' +
      '"The name for the alarm. This name must be unique within the Region."',
  },
  'AWS::SNS::Topic': {
    scope: 'region',
    name: 'TopicName',
    source:
      'https://docs.aws.amazon.com/IAM/latest/UserGuide/reference-arns.html, its example: an SNS topic is ' +
      'arn:aws:sns:us-east-1:123456789012:example-sns-topic-name, its name held in its region',
  },
  'AWS::SQS::Queue': {
    scope: 'region',
    name: 'QueueName',
    source:
      'SQS CreateQueue (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html): "you must provide ' +
      'a queue name that … is unique within the scope of your queues"; a queue is in one region (https://sqs.<region>.amazonaws.com/…)',
  },
  'AWS::Events::Rule': {
    scope: 'region',
    name: 'Name',
    within: ['EventBusName'],
    source:
      'EventBridge PutRule (https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutRule.html): "A single rule watches for ' +
      'events from a single event bus"; a rule is named within its (regional) bus',
  },
  'AWS::CodeDeploy::Application': {
    scope: 'region',
    name: 'ApplicationName',
    refIsName: true,
    source:
      'https://docs.aws.amazon.com/codedeploy/latest/userguide/applications-create-cli.html: "In an AWS account, a CodeDeploy ' +
      'application name can be used only once per region. You can reuse an application name in different regions."',
  },
  'AWS::CodeDeploy::DeploymentGroup': {
    scope: 'region',
    name: 'DeploymentGroupName',
    within: ['ApplicationName'],
    source:
      'CodeDeploy CreateDeploymentGroup (https://docs.aws.amazon.com/codedeploy/latest/APIReference/API_CreateDeploymentGroup.html) ' +
      'names a group within its application',
  },
  'AWS::ApiGateway::RestApi': {
    // API Gateway keys an API by its id, but its metrics and the alarms on them by its name: two
    // APIs of one name in a region would share them. Held once per region here, for that.
    scope: 'region',
    name: 'Name',
    source:
      'https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-metrics-and-dimensions.html: the ApiName dimension ' +
      'filters a REST API\u2019s metrics by its name',
  },
  'AWS::ApiGateway::UsagePlan': {
    // Keyed by its id; held once per region here, so that the console tells each stage's plans apart.
    scope: 'region',
    name: 'UsagePlanName',
    source: API_GATEWAY_ARN,
  },
  'AWS::ApiGateway::Authorizer': { scope: 'region', name: 'Name', within: WITHIN_API, source: API_GATEWAY_ARN },
  'AWS::ApiGateway::Stage': { scope: 'region', name: 'StageName', within: WITHIN_API, source: API_GATEWAY_ARN },
  'AWS::ApiGateway::Resource': { scope: 'region', name: 'PathPart', within: [...WITHIN_API, 'ParentId'], source: API_GATEWAY_ARN },
  'AWS::ApiGateway::Method': { scope: 'region', name: 'HttpMethod', within: [...WITHIN_API, 'ResourceId'], source: API_GATEWAY_ARN },
  'AWS::ApiGateway::GatewayResponse': { scope: 'region', name: 'ResponseType', within: WITHIN_API, source: API_GATEWAY_ARN },
  'AWS::ApiGateway::BasePathMapping': {
    scope: 'region',
    name: 'BasePath',
    within: ['DomainName'],
    source: 'A base path is mapped within one custom domain (AWS::ApiGateway::DomainName, regional)',
  },

  // ---- No name of their own.
  'AWS::ApiGateway::Account': {
    // Not a name but a setting: one per account and region, which every stage's stack there sets
    // to the same role (PetStoreApi keeps that role when a stack is deleted, for the others).
    scope: 'unnamed',
    source:
      'https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-apigateway-account.html: the account\u2019s ' +
      'CloudWatch role, CloudWatchRoleArn, its only property',
  },
  'AWS::ApiGateway::Deployment': { scope: 'unnamed', source: 'A deployment has an id API Gateway makes, and a description' },
  'AWS::Lambda::Version': { scope: 'unnamed', source: 'Lambda numbers each version it publishes' },
  'AWS::Lambda::Permission': { scope: 'unnamed', source: 'CloudFormation makes the statement id of each permission' },
  'AWS::Lambda::EventSourceMapping': { scope: 'unnamed', source: 'Lambda gives each mapping a UUID' },
  'AWS::SNS::TopicPolicy': { scope: 'unnamed', source: 'A policy of the topics it names, with no name of its own' },
  'AWS::SQS::QueuePolicy': { scope: 'unnamed', source: 'A policy of the queues it names, with no name of its own' },
};

/**
 * A custom resource: a request to its provider (a Lambda function, itself an AWS::Lambda::Function
 * above), holding no name of its own in AWS.
 */
const CUSTOM_RESOURCE: Unnamed = {
  scope: 'unnamed',
  source:
    'https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-cfn-customresource.html: "Only one property is ' +
    'defined by AWS for a custom resource: ServiceToken. All other properties are defined by the service provider."',
};

/** The rule of a resource type: its entry, or a custom resource's (`Custom::…`); none for a type not classified yet. */
export const nameRuleOf = (type: string): NameRule | undefined =>
  NAME_RULES[type] ?? (type.startsWith('Custom::') || type === 'AWS::CloudFormation::CustomResource' ? CUSTOM_RESOURCE : undefined);
