/**
 * Every price the cost table (infra/costs.ts, generated/costs.md) uses, in one place: AWS's list
 * prices in US East (N. Virginia), without free tiers (they are the account's, not a stage's) or
 * volume discounts, each with the page it is read from and when. Where the page could not be read
 * (its figures are drawn by script), `seenIn` names where the figure was read instead, and the
 * figure is AWS's list price as published there.
 */

/** When these prices were read. */
export const PRICES_READ_ON = '2026-12-04';

export interface Price {
  /** US dollars per unit. */
  readonly usd: number;
  /** What one unit is. */
  readonly unit: string;
  /** AWS's pricing page for it. */
  readonly source: string;
  /** Where the figure was read, when not on `source` itself (its figures are drawn by script). */
  readonly seenIn?: string;
}

const MILLION = 1_000_000;

export const PRICES = {
  apiGatewayRestRequest: {
    usd: 3.5 / MILLION,
    unit: 'REST API request (first 333 million a month)',
    source: 'https://aws.amazon.com/api-gateway/pricing/',
    seenIn: 'https://docs.aws.amazon.com/whitepapers/latest/best-practices-api-gateway-private-apis-integration/cost-optimization.html',
  },
  lambdaRequest: {
    usd: 0.2 / MILLION,
    unit: 'Lambda invocation',
    source: 'https://aws.amazon.com/lambda/pricing/',
    seenIn: 'https://cloudchipr.com/blog/aws-lambda-pricing',
  },
  lambdaArmGbSecond: {
    usd: 0.0000133334,
    unit: 'GB-second of an Arm function (first 7.5 billion a month)',
    source: 'https://aws.amazon.com/lambda/pricing/',
    seenIn: 'https://cloudchipr.com/blog/aws-lambda-pricing',
  },
  dynamodbReadRequestUnit: {
    usd: 0.125 / MILLION,
    unit: 'on-demand read request unit (a strongly consistent read of up to 4 KB; an eventually consistent one is half)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    seenIn: 'https://airbyte.com/data-engineering-resources/dynamodb-pricing',
  },
  dynamodbWriteRequestUnit: {
    usd: 0.625 / MILLION,
    unit: 'on-demand write request unit (a write of up to 1 KB, to a table or an index)',
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
    seenIn: 'https://airbyte.com/data-engineering-resources/dynamodb-pricing',
  },
  // "Replicated write units (rWCUs and rWRUs) are priced the same as single-Region write units
  // (WCUs and WRUs)", and each replica's indexes are billed as that region's own writes:
  // https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/global-tables-billing.html
  dynamodbReplicatedWriteRequestUnit: {
    usd: 0.625 / MILLION,
    unit: 'on-demand replicated write request unit (a write of up to 1 KB, in each replica)',
    source: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/global-tables-billing.html',
  },
  interRegionTransferGb: {
    usd: 0.02,
    unit: 'GB replicated to another region',
    source: 'https://aws.amazon.com/ec2/pricing/on-demand/#Data_Transfer_within_the_same_AWS_Region',
    seenIn:
      'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/global-tables-billing.html (names the fee; the figure is the list price)',
  },
  logsIngestionGb: {
    usd: 0.5,
    unit: 'GB of logs ingested (Standard class; Lambda logs, first 10 TB a month)',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
    seenIn: 'https://www.factualminds.com/blog/amazon-cloudwatch-pricing-metrics-logs-alarms-dashboards/',
  },
  customMetricMonth: {
    usd: 0.3,
    unit: 'custom metric a month (first 10,000), prorated by the hour it is published',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
    seenIn: 'https://signoz.io/guides/cloudwatch-pricing',
  },
  alarmMetricMonth: {
    usd: 0.1,
    unit: 'metric of a standard-resolution alarm a month (an alarm on metric math pays for each metric in it)',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
    seenIn: 'https://www.factualminds.com/blog/amazon-cloudwatch-pricing-metrics-logs-alarms-dashboards/',
  },
  dashboardMonth: {
    usd: 3,
    unit: 'custom dashboard a month',
    source: 'https://aws.amazon.com/cloudwatch/pricing/',
    seenIn: 'https://www.factualminds.com/blog/amazon-cloudwatch-pricing-metrics-logs-alarms-dashboards/',
  },
  xrayTraceRecorded: {
    usd: 5 / MILLION,
    unit: 'X-Ray trace recorded',
    source: 'https://aws.amazon.com/xray/pricing/',
    seenIn: 'https://aws.amazon.com/de/xray/pricing/ (the same page, in German: 5 USD pro Million)',
  },
  route53HealthCheckMonth: {
    usd: 0.5,
    unit: 'Route 53 health check of an AWS endpoint (a CloudWatch alarm) a month',
    source: 'https://aws.amazon.com/route53/pricing/',
    seenIn: 'https://wewantcode.com/en/course/aws/lesson/7-84-health-checks-status-check.html',
  },
} as const satisfies Record<string, Price>;

export type PriceName = keyof typeof PRICES;
