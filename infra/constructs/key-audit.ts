/**
 * KeyAuditTrail: the audit trail of API-key changes. The keys table's stream feeds the key-audit
 * function, whose log group is the audit log (`auditLogGroupName`), kept for years; batches it
 * cannot write after its retries go to an encrypted queue, which Monitoring alarms on. A scheduled
 * expiry sweep marks keys whose expiry has passed, so that an expiry reached is a change too, and
 * flushes the stage's authorizer cache when it marked one, so that the gateway honours it at once.
 * The key-audit function flushes the same cache after a change that alters the authorizer's
 * answers reaches its region's replica of the keys table (functions/key-audit.ts).
 * In a stage in several regions every region's stack has the writer, reading its own replica's
 * stream; the sweep runs in the home region only, once for the stage.
 */
import { Aws, Duration, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import {
  ApplicationLogLevel,
  StartingPosition,
  type DlqDestinationConfig,
  type IEventSourceDlq,
  type IEventSourceMapping,
  type IFunction,
} from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption, type IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { API_STAGE_NAME_VARIABLE, REST_API_ID_VARIABLE, type ApiStage } from '../../shared/authorizer-cache';
import { AUDIT_LOG_LEVEL, AUDIT_STREAM_RETRY_ATTEMPTS, HOME_REGION_VARIABLE, auditLogGroupName } from '../../shared/key-audit';
import { STAGE_REGIONS_VARIABLE } from '../../shared/usage-key-release';
import { ApiFunction } from './api-function';
import { grantTableAccess, tableAccess, tableNameVariables } from './pet-store-functions';

export interface KeyAuditTrailProps {
  /** Names the functions `<namePrefix>-keyAudit` and `<namePrefix>-keyExpiry`. */
  readonly namePrefix: string;
  /** The `service` of the functions' log lines and metrics: the stage's own. */
  readonly serviceName: string;
  /** The keys table (this region's replica), with its stream (new and old images). */
  readonly apiKeys: ITableV2;
  /** The stage whose authorizer cache the expiry sweep flushes after marking a key, and the audit function after a key change. */
  readonly apiStage: ApiStage;
  /** How long the expiry sweep's own logs are kept (the stage's retention). */
  readonly logRetention: RetentionDays;
  /** RETAIN keeps the audit log when the stack is deleted, as the stage keeps its data. */
  readonly removalPolicy: RemovalPolicy;
  /** Whether the stack runs the stage's once-only jobs (its home region's, or a stage's one region's): the expiry sweep. */
  readonly runsSweep: boolean;
  /**
   * The stage's home region, when it runs in several: the audit function there records the
   * changes no region stamped. None on a stage in one region, whose audit records every change.
   */
  readonly homeRegion?: string;
  /**
   * A stage in several regions: its regions, the home region (this stack's, where the sweep runs)
   * first. The sweep deletes a usage key's API key in each and counts each region's API keys; the
   * audit function records a change stamped with none of them in the home region. None for a
   * stage in one region: the stack's own.
   */
  readonly regions?: readonly string[];
}

/** How long the audit trail is kept: longer than any key lives, and than most audits look back. */
export const AUDIT_LOG_RETENTION = RetentionDays.TEN_YEARS;
/**
 * How often the expiry sweep runs: an expiry reached is in the trail, and flushed from the
 * authorizer cache, within this. EventBridge's shortest rate, well inside every stage's cache TTL:
 * the flush is what ends a key's cached answer sooner than the TTL would.
 */
export const EXPIRY_SWEEP_INTERVAL = Duration.minutes(1);

export class KeyAuditTrail extends Construct {
  readonly writer: ApiFunction;
  /** The expiry sweep: in the home region's stack only. */
  readonly expirySweep?: ApiFunction;
  /** Where the stream's batches go that could not be written: each message names the records, never their content. */
  readonly failedBatches: Queue;

  constructor(scope: Construct, id: string, props: KeyAuditTrailProps) {
    super(scope, id);
    const tables = { apiKeys: props.apiKeys };
    const keysTableName = props.apiKeys.tableName;

    this.writer = new ApiFunction(this, 'Writer', {
      entry: 'functions/key-audit.ts',
      functionName: `${props.namePrefix}-keyAudit`,
      description: 'pet store: writes one audit line per API-key change from the keys table stream',
      serviceName: props.serviceName,
      logGroupName: auditLogGroupName(keysTableName),
      withoutPlatformLines: true,
      // The trail's own level: lowering the other functions' to cut noise leaves it writing.
      fixedLogLevel: ApplicationLogLevel[AUDIT_LOG_LEVEL],
      environment: {
        ...tableNameVariables(tableAccess.keyAudit, tables),
        ...stageVariables(props.apiStage),
        ...(props.homeRegion === undefined ? {} : { [HOME_REGION_VARIABLE]: props.homeRegion }),
        // A change stamped with a region not among these (an edit by hand) is the home region's to record.
        ...stageRegionsVariable(props.regions),
      },
      logRetention: AUDIT_LOG_RETENTION,
      removalPolicy: props.removalPolicy,
    });
    grantTableAccess(this.writer, tableAccess.keyAudit, tables);
    // After a key change reaches this region's replica: its own stage's authorizer cache, and nothing more.
    this.writer.function.addToRolePolicy(flushStatement(props.apiStage));

    this.failedBatches = new Queue(this, 'FailedBatches', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.failedBatches).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason:
        "This queue is itself a dead-letter queue: the key-audit stream mapping's on-failure destination, alarmed on when it holds anything.",
    });
    const streamArn = props.apiKeys.tableStreamArn;
    if (streamArn === undefined) throw new Error('The keys table has no stream for the audit trail to read.');
    // On the alias, like every caller: the mapping follows `live` to each new version.
    this.writer.alias.addEventSourceMapping('KeysStream', {
      eventSourceArn: streamArn,
      // The stream keeps 24 hours: a new mapping starts from the oldest record it has.
      startingPosition: StartingPosition.TRIM_HORIZON,
      batchSize: 100,
      bisectBatchOnError: true,
      retryAttempts: AUDIT_STREAM_RETRY_ATTEMPTS,
      reportBatchItemFailures: true,
      onFailure: new SendOnlyQueueDestination(this.failedBatches),
    });
    // What Lambda reads the stream with (its documented execution-role permissions). Granted here,
    // not by the table: TableV2 grants ListStreams on the stream, which IAM only allows on "*".
    this.writer.function.addToRolePolicy(new PolicyStatement({ actions: ['dynamodb:ListStreams'], resources: ['*'] }));
    this.writer.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
        resources: [streamArn],
      }),
    );
    Validations.of(this.writer.function.role ?? this.writer).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        "Active tracing (X-Ray's PutTraceSegments and PutTelemetryRecords), and the stream mapping's dynamodb:ListStreams: none has resource-level permissions.",
    });
    if (props.runsSweep) this.expirySweep = this.expirySweepOf(props);
  }

  /** The scheduled sweep that marks expired keys and releases their usage keys, with its grants. */
  private expirySweepOf(props: KeyAuditTrailProps): ApiFunction {
    const tables = { apiKeys: props.apiKeys };
    const expirySweep = new ApiFunction(this, 'ExpirySweep', {
      entry: 'functions/key-expiry.ts',
      functionName: `${props.namePrefix}-keyExpiry`,
      description: 'pet store: marks API keys whose expiry has passed, for the audit trail',
      serviceName: props.serviceName,
      environment: {
        ...tableNameVariables(tableAccess.keyExpiry, tables),
        ...stageVariables(props.apiStage),
        ...stageRegionsVariable(props.regions),
      },
      // Run on a schedule: no START and REPORT line, and no trace of each run (infra/costs.ts).
      withoutPlatformLines: true,
      traced: false,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    grantTableAccess(expirySweep, tableAccess.keyExpiry, tables);
    expirySweep.function.addToRolePolicy(flushStatement(props.apiStage));
    // DeleteApiKey is DELETE on /apikeys/{id}, GetApiKeys GET on /apikeys: the usage keys no live
    // key uses any more, and their count against the account's quota, in each of the stage's
    // regions (API keys are regional) and no other. API keys are not tagged by stage, so no
    // narrower resource names this stage's alone.
    const regions = (props.regions ?? []).length === 0 ? [Aws.REGION] : (props.regions ?? []);
    expirySweep.function.addToRolePolicy(
      new PolicyStatement({ actions: ['apigateway:DELETE'], resources: regions.map((region) => apiKeysArn('*', region)) }),
    );
    expirySweep.function.addToRolePolicy(
      new PolicyStatement({ actions: ['apigateway:GET'], resources: regions.map((region) => apiKeysArn(undefined, region)) }),
    );
    for (const region of regions) {
      Validations.of(expirySweep.function.role ?? expirySweep).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:${region === Aws.REGION ? '<AWS::Region>' : region}::/apikeys/*]`,
        reason:
          'DeleteApiKey of the usage keys no live key uses: their ids are made at run time by the key tool, and API keys carry no stage to narrow by.',
      });
    }
    new Rule(this, 'ExpirySchedule', {
      description: 'Runs the API-key expiry sweep',
      schedule: Schedule.rate(EXPIRY_SWEEP_INTERVAL),
      targets: [new LambdaFunction(expirySweep.alias, { retryAttempts: 2 })],
    });
    return expirySweep;
  }
}

/** STAGE_REGIONS, the stage's regions (its home first), for a stage in several; nothing for a stage in one. */
const stageRegionsVariable = (regions: readonly string[] = []): Record<string, string> =>
  regions.length === 0 ? {} : { [STAGE_REGIONS_VARIABLE]: regions.join(',') };

/** The variables that name the stage whose authorizer cache a function flushes (shared/authorizer-cache.ts). */
const stageVariables = ({ restApiId, stageName }: ApiStage) => ({
  [REST_API_ID_VARIABLE]: restApiId,
  [API_STAGE_NAME_VARIABLE]: stageName,
});

/** FlushStageAuthorizersCache of the stage: DELETE on its cache/authorizers path, in the stack's region, and nothing more. */
const flushStatement = (stage: ApiStage) => new PolicyStatement({ actions: ['apigateway:DELETE'], resources: [authorizerCacheArn(stage)] });

/** The ARN IAM checks for GetApiKeys (no id), or for DeleteApiKey of the API key `id`, in `region` (the stack's by default). */
export const apiKeysArn = (id?: string, region: string = Aws.REGION): string =>
  `arn:${Aws.PARTITION}:apigateway:${region}::/apikeys${id === undefined ? '' : `/${id}`}`;

/** The ARN IAM checks for FlushStageAuthorizersCache on a stage: API Gateway's actions are HTTP verbs on its paths. */
export const authorizerCacheArn = ({ restApiId, stageName }: ApiStage): string =>
  `arn:${Aws.PARTITION}:apigateway:${Aws.REGION}::/restapis/${restApiId}/stages/${stageName}/cache/authorizers`;

/**
 * A stream mapping's on-failure destination that grants the function's role only what Lambda
 * uses on its behalf, `sqs:SendMessage` on the queue. CDK's SqsDlq grants its queue's
 * `grantSendMessages`, which adds GetQueueAttributes and GetQueueUrl that nothing calls.
 */
class SendOnlyQueueDestination implements IEventSourceDlq {
  constructor(private readonly queue: IQueue) {}

  bind(_mapping: IEventSourceMapping, target: IFunction): DlqDestinationConfig {
    target.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }));
    return { destination: this.queue.queueArn };
  }
}
