/**
 * ApiFunction: one Lambda function of the API, bundled from its handler module, with its own log
 * group (kept for the stage's retention), its own role (allowed to write only that log group,
 * plus X-Ray) and active tracing. Table permissions are granted by the caller, action by action.
 * Each deploy publishes the function as a version behind the alias `live`, which is what every
 * caller invokes (never `$LATEST`), so that a release can move, or split, the traffic between
 * versions (infra/constructs/release.ts).
 */
import { Duration, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias, type ApplicationLogLevel, LoggingFormat, SystemLogLevel, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { resolve } from 'node:path';
import { FUNCTION_TIMEOUT_SECONDS, LIVE_ALIAS } from '../../shared/stack';
import { FUNCTION_ARCHITECTURE, FUNCTION_BUNDLING, FUNCTION_RUNTIME } from '../bundling';
import { projectRoot } from '../../shared/project-root';

export interface ApiFunctionProps {
  /** The handler module, relative to the project root (as in the route table). */
  readonly entry: string;
  /** The function's name, which also names its log group (`/aws/lambda/<name>`) unless `logGroupName` is given. */
  readonly functionName: string;
  /** A log group name of its own, for a function whose lines are a record (the key audit trail). */
  readonly logGroupName?: string;
  /** Only the function's own lines in its log group: Lambda's START, END and REPORT lines are left out. */
  readonly withoutPlatformLines?: boolean;
  /**
   * Whether Lambda samples its invocations for X-Ray itself (active tracing), or only records those
   * its caller sampled (pass-through): a scheduled function's caller samples none, and its runs
   * each minute would otherwise be traces paid for every month, traffic or not.
   * @default true
   */
  readonly traced?: boolean;
  /**
   * A level of its own for the function's lines, Lambda's filter and Powertools' alike, whatever
   * the other functions' (the audit trail's lines must not fall to a noise setting).
   * @default POWERTOOLS_LOG_LEVEL INFO, Lambda's filter unset
   */
  readonly fixedLogLevel?: ApplicationLogLevel;
  readonly description: string;
  /**
   * The `service` of its log lines and metrics (POWERTOOLS_SERVICE_NAME): its stage's own, so that
   * the stages sharing an account never mix their metrics or alarms.
   */
  readonly serviceName: string;
  readonly environment: Record<string, string>;
  /** How the bundle is built. @default FUNCTION_BUNDLING */
  readonly bundling?: BundlingOptions;
  /** How long an invocation may run. @default FUNCTION_TIMEOUT_SECONDS, the API's request budget */
  readonly timeout?: Duration;
  /**
   * Whether the function is published as a version behind `live`. Off for a function nothing
   * calls through an alias (the pre-traffic hook, which CodeDeploy invokes by name).
   * @default true
   */
  readonly withLiveAlias?: boolean;
  /**
   * Lambda reserved concurrency: executions kept for this function, and the most it may use.
   * @default none: it draws on the account's unreserved executions
   */
  readonly reservedConcurrentExecutions?: number;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/** The alias every caller invokes: the API's integrations and authorizer, the stream mapping, the schedule. */
export { LIVE_ALIAS };

/** Memory in MB. Lambda gives CPU in proportion to memory, and CPU is what a cold start spends. */
const MEMORY_MB = 512;

export class ApiFunction extends Construct {
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  private readonly liveAlias?: Alias;

  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'Logs', {
      logGroupName: props.logGroupName ?? `/aws/lambda/${props.functionName}`,
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    // Its own role instead of AWSLambdaBasicExecutionRole, which may write to every log group.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `${props.description}: writes its own logs and traces, and reads or writes only what it is granted.`,
    });
    this.logGroup.grantWrite(role);

    this.function = new NodejsFunction(this, 'Function', {
      entry: resolve(projectRoot, props.entry),
      handler: 'handler',
      functionName: props.functionName,
      description: props.description,
      runtime: FUNCTION_RUNTIME,
      architecture: FUNCTION_ARCHITECTURE,
      memorySize: MEMORY_MB,
      timeout: props.timeout ?? Duration.seconds(FUNCTION_TIMEOUT_SECONDS),
      role,
      logGroup: this.logGroup,
      // Powertools already writes JSON lines; the platform's own lines become JSON too.
      loggingFormat: LoggingFormat.JSON,
      // Lambda's platform lines are INFO; its warnings (a timeout, a crash) are still written.
      ...(props.withoutPlatformLines ? { systemLogLevelV2: SystemLogLevel.WARN } : {}),
      ...(props.fixedLogLevel ? { applicationLogLevelV2: props.fixedLogLevel } : {}),
      tracing: (props.traced ?? true) ? Tracing.ACTIVE : Tracing.PASS_THROUGH,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      bundling: props.bundling ?? FUNCTION_BUNDLING,
      projectRoot,
      depsLockFilePath: resolve(projectRoot, 'package-lock.json'),
      environment: {
        POWERTOOLS_SERVICE_NAME: props.serviceName,
        POWERTOOLS_LOG_LEVEL: props.fixedLogLevel ?? 'INFO',
        // No NODE_OPTIONS=--enable-source-maps: the bundles ship no source map (infra/bundling.ts).
        ...props.environment,
      },
    });
    // currentVersion is a new version whenever the code or configuration changes. CloudFormation
    // deletes the previous one once an update succeeds; during the update it is still there, so a
    // rollback has its version to return to.
    if (props.withLiveAlias ?? true) {
      this.liveAlias = new Alias(this, 'Live', { aliasName: LIVE_ALIAS, version: this.function.currentVersion });
    }
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: "Active tracing: X-Ray's PutTraceSegments and PutTelemetryRecords have no resource-level permissions.",
    });
  }

  /** `live`, on the version this deploy publishes (`function.currentVersion`): what callers invoke. */
  get alias(): Alias {
    if (!this.liveAlias) throw new Error(`${this.node.path} is built without a live alias.`);
    return this.liveAlias;
  }
}
