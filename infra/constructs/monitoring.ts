/**
 * Monitoring: one CloudWatch dashboard for the stage in this region, and the alarms an operator is
 * paged for, all sent to one SNS topic (and to an e-mail address when the stage has one).
 */
import { type CfnResource, Duration, Stack } from 'aws-cdk-lib';
import type { Stage } from 'aws-cdk-lib/aws-apigateway';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, type IFilterPattern, type ILogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { AUTHORIZER_FAILURE_LINE } from '../../shared/http/authorizer-log';
import { METRICS_NAMESPACE, SERVICE_DIMENSION } from '../../shared/metrics';
import { API_KEYS_PER_REGION, USAGE_KEYS_ALARM_SHARE, USAGE_KEYS_REGION_DIMENSION } from '../../shared/usage-key-release';
import { serverErrorRate } from './api-metrics';
import { dashboardNameOf, functionErrorsAlarmId, keysReplicationAlarmId } from './names';
import { STAGE_THROTTLE_ALARM_SHARE } from '../stages';
import { THROTTLING_METRICS, type Throttling } from './throttling';

export interface MonitoredTable {
  readonly table: ITableV2;
  /** The table's global secondary indexes, whose throttles back-pressure the table's writes. */
  readonly indexNames: readonly string[];
}

export interface MonitoringProps {
  /**
   * The stage's `pet-store-<stage>`: the dashboard is `<namePrefix>-<region>` (dashboardNameOf), as
   * an account holds a dashboard name once whatever the region.
   */
  readonly namePrefix: string;
  /** The stage's `service` (its functions' POWERTOOLS_SERVICE_NAME): its own metrics are under it, no other stage's. */
  readonly serviceName: string;
  /** The API's deployed stage. */
  readonly apiStage: Stage;
  /** The functions by name, as the dashboard labels them. */
  readonly functions: ReadonlyMap<string, IFunction>;
  readonly authorizer: IFunction;
  /** The authorizer's log group, whose failure lines its alarm counts (its Errors count refusals too). */
  readonly authorizerLogGroup: ILogGroup;
  readonly tables: readonly MonitoredTable[];
  /**
   * The key audit trail: its functions (alarmed on their errors), the one that reads the keys
   * table's stream (alarmed on how far behind it is) and the queue of batches it could not write.
   */
  readonly keyAudit?: {
    readonly functions: ReadonlyMap<string, IFunction>;
    readonly streamReader: IFunction;
    readonly failedBatches: IQueue;
    /**
     * The API keys the expiry sweep counts, graphed and alarmed on (UsageKeysNearLimit) in the stack
     * that runs it only: it publishes UsageKeys in its own region's CloudWatch, so another region's
     * stack would watch a metric that never comes. `regions`: those of a stage in several, whose
     * API keys it counts each (UsageKeys by Region); none for a stage in one (by service alone).
     */
    readonly usageKeys?: { readonly regions?: readonly string[] };
  };
  /**
   * A stage in several regions, in its home region's stack: the keys table, whose replication to
   * each other region of the stage is alarmed. DynamoDB publishes ReplicationLatency in the region
   * the write was made in (keys: the home region), by receiving region, and an alarm watches only
   * its own region's metrics, so every region's alarm is the home region's.
   */
  readonly keysReplication?: { readonly table: ITableV2; readonly receivingRegions: readonly string[] };
  /** The idempotency sweep (the home region's stack only), alarmed on its errors. */
  readonly idempotencySweep?: IFunction;
  /** The access log's 429s by plan, and the stage throttle's condition: a graph and the StageThrottled alarm. */
  readonly throttling?: Throttling;
  /** Where alarms are e-mailed. @default none: the topic only */
  readonly alarmEmail?: string;
}

const FIVE_MINUTES = Duration.minutes(5);
/** Share of requests answered 5xx, over 5 minutes, that pages: 1%. */
const SERVER_ERROR_RATE_THRESHOLD = 0.01;
/** p99 latency in ms, over 5 minutes, that pages. */
const LATENCY_P99_THRESHOLD_MS = 1000;
/**
 * Age in ms of the oldest stream record the audit function has not finished, over 5 minutes, that
 * pages: a record retried (a partial batch failure is a successful invocation, so no Errors) or a
 * stuck mapping, well before the stream's 24 hours drop it.
 */
export const AUDIT_ITERATOR_AGE_THRESHOLD_MS = 5 * 60 * 1000;

/**
 * Average time in ms, over 5 minutes, for a key's change written in the home region to reach
 * another region's replica, that pages. Normally about a second; while a region lags, its
 * authorizer keeps accepting a key revoked at home (its audit writer flushes the region's cache
 * only once the change arrives). A minute is far above normal replication, so a passing slow
 * write does not page, and far below the authorizer cache's TTL (the longest a revoke otherwise waits).
 */
export const KEYS_REPLICATION_LATENCY_THRESHOLD_MS = 60 * 1000;

/** The keys table's replication time from this (the home) region to `receivingRegion`, as DynamoDB publishes it. */
export const keysReplicationLatency = (table: ITableV2, receivingRegion: string): Metric =>
  new Metric({
    namespace: 'AWS/DynamoDB',
    metricName: 'ReplicationLatency',
    dimensionsMap: { TableName: table.tableName, ReceivingRegion: receivingRegion },
    statistic: 'Average',
    period: FIVE_MINUTES,
  });

/** How often the expiry sweep counts the account's API keys (functions/key-expiry.ts): the UsageKeys metric's period. */
const ONE_HOUR = Duration.hours(1);

/**
 * The API keys the account holds in the region, as this stage's expiry sweep counts them once an
 * hour; in a stage of several regions, those of `region` (the sweep, in the home region, counts each).
 */
export const usageKeysHeld = (serviceName: string, region?: string): Metric =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: 'UsageKeys',
    dimensionsMap: { [SERVICE_DIMENSION]: serviceName, ...(region === undefined ? {} : { [USAGE_KEYS_REGION_DIMENSION]: region }) },
    statistic: 'Maximum',
    period: ONE_HOUR,
    ...(region === undefined ? {} : { label: `API keys held in ${region}` }),
  });

/**
 * What UsageKeysNearLimit watches: the API keys held in the one region, or in a stage of several
 * regions the fullest region's (each region holds its own API_KEYS_PER_REGION), so that it fires for any.
 */
export const usageKeysAlarmMetric = (serviceName: string, regions: readonly string[] = []): IMetric => {
  if (regions.length === 0) return usageKeysHeld(serviceName);
  const usingMetrics = Object.fromEntries(regions.map((region, index) => [`region${index}`, usageKeysHeld(serviceName, region)]));
  return new MathExpression({
    expression: `MAX([${Object.keys(usingMetrics).join(', ')}])`,
    usingMetrics,
    label: 'API keys held in the fullest region',
    period: ONE_HOUR,
  });
};

/** The authorizer's failure lines, in CloudWatch Logs' JSON filter syntax: `{ $.decision = "fail" }`. */
export const authorizerFailurePattern = (): IFilterPattern =>
  FilterPattern.stringValue(`$.${AUTHORIZER_FAILURE_LINE.field}`, '=', AUTHORIZER_FAILURE_LINE.value);

/**
 * The dimensions of the authorizer's failures, read from each failure line (CloudWatch Logs' JSON
 * path): its `service`, which Powertools writes in every line, so that each stage counts its own.
 */
export const AUTHORIZER_FAILURE_DIMENSIONS: Readonly<Record<string, string>> = { [SERVICE_DIMENSION]: `$.${SERVICE_DIMENSION}` };

/** The authorizer's failures on one stage (its `service`), as its metric filter counts them. */
export const authorizerFailures = (serviceName: string, period: Duration): Metric =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: AUTHORIZER_FAILURE_LINE.metricName,
    dimensionsMap: { [SERVICE_DIMENSION]: serviceName },
    statistic: 'Sum',
    period,
  });

export class Monitoring extends Construct {
  readonly dashboard: Dashboard;
  /** The dashboard's name, this region's own (dashboardNameOf). */
  readonly dashboardName: string;
  readonly alarmTopic: Topic;
  readonly alarms: Alarm[] = [];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const stage = props.apiStage;
    const allFunctions = new Map([...props.functions, ['authorizer', props.authorizer]]);

    // Alarm notifications carry no customer data; CloudWatch cannot publish to a topic encrypted
    // with the AWS-managed SNS key, so the topic relies on SNS's default at-rest protection.
    this.alarmTopic = new Topic(this, 'AlarmTopic', { displayName: 'Pet store alarms', enforceSSL: true });
    if (props.alarmEmail) this.alarmTopic.addSubscription(new EmailSubscription(props.alarmEmail));
    const action = new SnsAction(this.alarmTopic);
    const alarm = (alarmId: string, alarmProps: ConstructorParameters<typeof Alarm>[2]) => {
      const created = new Alarm(this, alarmId, { treatMissingData: TreatMissingData.NOT_BREACHING, ...alarmProps });
      created.addAlarmAction(action);
      created.addOkAction(action);
      this.alarms.push(created);
      return created;
    };

    // The share of requests answered 5xx, the not-implemented routes' 501s left out (a client
    // polling one would otherwise page the operator for a route that works as designed).
    alarm('ServerErrorRate', {
      alarmDescription:
        "More than the threshold share of requests answered 5xx (the not-implemented routes' 501s left out): the database or a function is failing.",
      metric: serverErrorRate(stage.restApi.restApiName, FIVE_MINUTES),
      threshold: SERVER_ERROR_RATE_THRESHOLD,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    });
    alarm('LatencyP99', {
      alarmDescription: "p99 latency above the threshold for 15 minutes: check the functions' duration and DynamoDB.",
      metric: stage.metricLatency({ statistic: 'p99', period: FIVE_MINUTES }),
      threshold: LATENCY_P99_THRESHOLD_MS,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
    });
    for (const [name, fn] of props.functions) {
      alarm(functionErrorsAlarmId(name), {
        alarmDescription: `The ${name} function failed (crashed or timed out) at least once in 5 minutes.`,
        metric: fn.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
    }
    // The authorizer refuses a key by throwing (a TOKEN authorizer's only way to answer 401), which
    // Lambda counts in Errors: on a public API that alarm would fire all the time. Its failures are
    // counted from its log instead; a crash before its log middleware or a timeout is answered 503
    // by API Gateway, which ServerErrorRate sees.
    new MetricFilter(this, 'AuthorizerFailuresFilter', {
      logGroup: props.authorizerLogGroup,
      filterPattern: authorizerFailurePattern(),
      metricNamespace: METRICS_NAMESPACE,
      metricName: AUTHORIZER_FAILURE_LINE.metricName,
      metricValue: '1',
      dimensions: AUTHORIZER_FAILURE_DIMENSIONS,
    });
    const stageAuthorizerFailures = authorizerFailures(props.serviceName, FIVE_MINUTES);
    alarm('AuthorizerFailures', {
      alarmDescription:
        'The authorizer failed (its keys table unreadable) at least once in 5 minutes: clients got 503. Refused keys do not count; a crash or timeout shows in ServerErrorRate.',
      metric: stageAuthorizerFailures,
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
    });
    for (const [name, fn] of props.keyAudit?.functions ?? []) {
      alarm(functionErrorsAlarmId(name), {
        alarmDescription: `The ${name} function failed at least once in 5 minutes: key changes may be missing from the audit trail until it succeeds.`,
        metric: fn.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
    }
    if (props.keyAudit) {
      alarm('KeyAuditIteratorAge', {
        alarmDescription:
          'The key audit function is more than 5 minutes behind the keys table stream: a record is being retried or the mapping is stuck (docs/operations.md, Audit trail).',
        metric: props.keyAudit.streamReader.metric('IteratorAge', { statistic: 'Maximum', period: FIVE_MINUTES }),
        threshold: AUDIT_ITERATOR_AGE_THRESHOLD_MS,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
      });
      const usageKeys = props.keyAudit.usageKeys;
      if (usageKeys) {
        alarm('UsageKeysNearLimit', {
          alarmDescription:
            `The account holds ${USAGE_KEYS_ALARM_SHARE * 100}% or more of the ${API_KEYS_PER_REGION} API keys API Gateway allows per region, a quota that cannot be raised: ` +
            'new keys will be refused (docs/architecture.md, Scaling; docs/keys.md, Room for keys: capacity).',
          metric: usageKeysAlarmMetric(props.serviceName, usageKeys.regions),
          threshold: API_KEYS_PER_REGION * USAGE_KEYS_ALARM_SHARE,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: 1,
        });
      }
      alarm('KeyAuditFailedBatches', {
        alarmDescription:
          'Key changes the audit function could not write after its retries: their records are in the queue (docs/operations.md, Audit trail).',
        metric: props.keyAudit.failedBatches.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: FIVE_MINUTES }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
    }
    if (props.keysReplication) {
      const { table, receivingRegions } = props.keysReplication;
      for (const receivingRegion of receivingRegions) {
        alarm(keysReplicationAlarmId(receivingRegion), {
          alarmDescription:
            `Key changes take more than ${KEYS_REPLICATION_LATENCY_THRESHOLD_MS / 1000} s on average to reach ${receivingRegion}: ` +
            'its authorizer keeps accepting keys revoked in the home region until they arrive (docs/operations.md, Alarms).',
          metric: keysReplicationLatency(table, receivingRegion),
          threshold: KEYS_REPLICATION_LATENCY_THRESHOLD_MS,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
        });
      }
    }
    if (props.idempotencySweep) {
      alarm(functionErrorsAlarmId('idempotencySweep'), {
        alarmDescription:
          'The idempotency sweep failed at least once in 5 minutes: expired idempotency records stay stored until a run succeeds; no answer changes (an expired record counts as none).',
        metric: props.idempotencySweep.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
    }
    if (props.throttling) {
      alarm('StageThrottled', {
        alarmDescription:
          `The stage throttle, which every client shares, refused requests in 2 of 3 minutes: 429s while the stage served keys at least ${STAGE_THROTTLE_ALARM_SHARE * 100}% of its rate. ` +
          "One client at its plan's limit cannot fire it (docs/operations.md, Alarms).",
        metric: props.throttling.stageThrottled(),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
      });
    }
    for (const monitored of props.tables) {
      alarm(`${monitored.table.node.id}Throttles`, {
        alarmDescription: 'DynamoDB throttled reads or writes on the table or its indexes: clients see 503.',
        metric: throttleEvents(monitored),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
      });
    }

    this.dashboardName = dashboardNameOf(props.namePrefix, Stack.of(this).region);
    this.dashboard = new Dashboard(this, 'Dashboard', { dashboardName: this.dashboardName });
    // The stack's tags reach the dashboard (CloudFormation takes Tags on it), but cfn-lint's
    // bundled schema of AWS::CloudWatch::Dashboard lacks Tags: E3002 is a false positive here only.
    (this.dashboard.node.defaultChild as CfnResource).addMetadata('cfn-lint', { config: { ignore_checks: ['E3002'] } });
    const perFunction = (title: string, metric: (fn: IFunction, label: string) => IMetric) =>
      new GraphWidget({ title, width: 6, left: [...allFunctions].map(([name, fn]) => metric(fn, name)), leftYAxis: { min: 0 } });
    const perTable = (title: string, metricName: string) =>
      new GraphWidget({
        title,
        width: 8,
        left: props.tables.map(({ table }) => table.metric(metricName, { statistic: 'Sum', label: table.node.id })),
        leftYAxis: { min: 0 },
      });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: '# Pet store API\nRequests and errors as clients see them, then the functions, the authorizer and DynamoDB.',
        width: 24,
        height: 2,
      }),
      new AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 3 }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({ title: 'Requests', width: 8, left: [stage.metricCount({ statistic: 'Sum', label: 'requests' })] }),
      new GraphWidget({
        title: '4xx and 5xx answers',
        width: 8,
        left: [stage.metricClientError({ statistic: 'Sum', label: '4xx' }), stage.metricServerError({ statistic: 'Sum', label: '5xx' })],
      }),
      new GraphWidget({
        title: 'Latency (ms)',
        width: 8,
        left: [
          stage.metricLatency({ statistic: 'p50', label: 'p50' }),
          stage.metricLatency({ statistic: 'p99', label: 'p99' }),
          stage.metricIntegrationLatency({ statistic: 'p99', label: 'integration p99' }),
        ],
      }),
    );
    this.dashboard.addWidgets(
      perFunction('Function errors', (fn, label) =>
        fn.metricErrors({ statistic: 'Sum', label: fn === props.authorizer ? `${label} (refusals included)` : label }),
      ),
      perFunction('Function throttles', (fn, label) => fn.metricThrottles({ statistic: 'Sum', label })),
      perFunction('Function duration p99 (ms)', (fn, label) => fn.metricDuration({ statistic: 'p99', label })),
      perFunction('Concurrent executions', (fn, label) => fn.metric('ConcurrentExecutions', { statistic: 'Maximum', label })),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Authorizer: calls (cache misses), errors and failures',
        width: 8,
        left: [
          props.authorizer.metricInvocations({ statistic: 'Sum', label: 'invocations' }),
          props.authorizer.metricErrors({ statistic: 'Sum', label: 'errors (refusals included)' }),
          stageAuthorizerFailures.with({ label: 'failures' }),
        ],
      }),
      new GraphWidget({
        title: 'DynamoDB throttle events (tables and indexes)',
        width: 16,
        left: props.tables.map((monitored) => throttleEvents(monitored).with({ label: monitored.table.node.id })),
        leftYAxis: { min: 0 },
      }),
    );
    // The functions' own metrics (EMF, namespace PetStore), by operation and by error code: this
    // stage's service only.
    const appMetric = (metricName: string, operation: string) =>
      new Metric({
        namespace: METRICS_NAMESPACE,
        metricName,
        dimensionsMap: { [SERVICE_DIMENSION]: props.serviceName, operation },
        statistic: 'Sum',
        label: `${operation} ${metricName}`,
      });
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Requests by operation (EMF)',
        width: 8,
        left: [...props.functions.keys()].map((operation) => appMetric('Requests', operation)),
        leftYAxis: { min: 0 },
      }),
      new GraphWidget({
        title: 'Pets created and idempotent replays (EMF)',
        width: 8,
        left: [appMetric('PetsCreated', 'createPet'), appMetric('IdempotentReplays', 'createPet')],
        leftYAxis: { min: 0 },
      }),
      new GraphWidget({
        title: 'Errors by operation and code (EMF)',
        width: 8,
        left: [
          new MathExpression({
            expression: `SEARCH('{${METRICS_NAMESPACE},${SERVICE_DIMENSION},operation,errorCode} MetricName="Errors" ${SERVICE_DIMENSION}="${props.serviceName}"', 'Sum', 300)`,
            label: '',
            period: FIVE_MINUTES,
          }),
        ],
        leftYAxis: { min: 0 },
      }),
    );
    const { throttling } = props;
    if (throttling) {
      const byPlan = (metricName: (typeof THROTTLING_METRICS)['tooManyRequests' | 'quotaExceeded']) =>
        throttling.planValues.map((plan) => throttling.metric(metricName, plan, FIVE_MINUTES));
      this.dashboard.addWidgets(
        new GraphWidget({
          title: '429 too_many_requests by plan (access log)',
          width: 12,
          left: byPlan(THROTTLING_METRICS.tooManyRequests),
          leftYAxis: { min: 0 },
        }),
        new GraphWidget({
          title: '429 quota_exceeded by plan (access log)',
          width: 12,
          left: byPlan(THROTTLING_METRICS.quotaExceeded),
          leftYAxis: { min: 0 },
        }),
      );
    }
    const usageKeys = props.keyAudit?.usageKeys;
    if (usageKeys) {
      this.dashboard.addWidgets(
        new GraphWidget({
          title: `API keys held in the account and region (quota ${API_KEYS_PER_REGION}, cannot be raised)`,
          width: 24,
          left:
            (usageKeys.regions ?? []).length === 0
              ? [usageKeysHeld(props.serviceName).with({ label: 'API keys held' })]
              : (usageKeys.regions ?? []).map((region) => usageKeysHeld(props.serviceName, region)),
          leftYAxis: { min: 0, max: API_KEYS_PER_REGION },
          leftAnnotations: [{ value: API_KEYS_PER_REGION * USAGE_KEYS_ALARM_SHARE, label: 'UsageKeysNearLimit' }],
        }),
      );
    }
    this.dashboard.addWidgets(
      perTable('DynamoDB consumed read capacity', 'ConsumedReadCapacityUnits'),
      perTable('DynamoDB consumed write capacity', 'ConsumedWriteCapacityUnits'),
      perTable('DynamoDB system errors', 'SystemErrors'),
    );
  }

  /** The dashboard's address in the console: this region's console, this region's dashboard. */
  get dashboardUrl(): string {
    const region = Stack.of(this).region;
    return `https://${region}.console.aws.amazon.com/cloudwatch/home?region=${region}#dashboards:name=${this.dashboardName}`;
  }
}

/** Read and write throttle events of a table and its indexes, as one series (missing points are 0). */
const throttleEvents = ({ table, indexNames }: MonitoredTable): MathExpression => {
  const usingMetrics: Record<string, IMetric> = {};
  const dimensionSets = [
    { TableName: table.tableName },
    ...indexNames.map((indexName) => ({ TableName: table.tableName, GlobalSecondaryIndexName: indexName })),
  ];
  // Metric ids must be unique within a graph that shows several tables.
  const prefix = table.node.id.toLowerCase().replace(/[^a-z0-9]/g, '');
  dimensionSets.forEach((dimensionsMap, position) => {
    for (const [kind, metricName] of [
      ['r', 'ReadThrottleEvents'],
      ['w', 'WriteThrottleEvents'],
    ] as const) {
      usingMetrics[`${prefix}_${kind}${position}`] = new Metric({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensionsMap,
        statistic: 'Sum',
        period: FIVE_MINUTES,
      });
    }
  });
  return new MathExpression({
    expression: Object.keys(usingMetrics)
      .map((name) => `FILL(${name}, 0)`)
      .join(' + '),
    usingMetrics,
    period: FIVE_MINUTES,
    label: 'throttle events',
  });
};
