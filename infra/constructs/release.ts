/**
 * Release: how a new version of the API's functions takes traffic on a stage whose release is
 * gradual (StageSettings.release). One CodeDeploy application; per function a deployment group
 * that shifts its `live` alias by the stage's canary or linear configuration; release alarms on
 * 1-minute periods, any of which rolls the release back; and the pre-traffic hook, which checks the
 * new versions before they take any request. The key audit's functions are not released this way
 * (a stream and a 15-minute schedule send a canary too little to judge): their alias moves in the
 * stack update.
 */
import { Duration, Stack, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData, type AlarmProps } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { LambdaApplication, LambdaDeploymentConfig, LambdaDeploymentGroup, type ILambdaDeploymentConfig } from 'aws-cdk-lib/aws-codedeploy';
import { ManagedPolicy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { VERSION_ARN_VARIABLES, type CheckedOperation } from '../../shared/release-checks';
import { STAGE_NAME } from '../../shared/routes';
import { HOOK_BUNDLING } from '../bundling';
import type { ReleaseStrategy } from '../stages';
import { ApiFunction, LIVE_ALIAS } from './api-function';
import { pascalCase } from './pet-store-functions';

export type GradualRelease = Exclude<ReleaseStrategy, 'AllAtOnce'>;

/** CodeDeploy's predefined configuration for each gradual release. */
const deploymentConfigs: Readonly<Record<GradualRelease, ILambdaDeploymentConfig>> = {
  Canary10Percent5Minutes: LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
  Linear10PercentEvery1Minute: LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
};

/**
 * Release alarms look at 1-minute periods, 2 of the last 3 breaching: a 5-minute canary must see
 * trouble within minutes (the operational alarms, in Monitoring, look at 5 minutes), and one bad
 * minute alone does not undo a release.
 */
const RELEASE_PERIOD = Duration.minutes(1);
const RELEASE_EVALUATION = { evaluationPeriods: 3, datapointsToAlarm: 2 } as const;
/**
 * Share of requests answered 5xx, per minute, that rolls a release back: 1%, as the operational
 * alarm. A new version that fails every request it gets during the canary's 10% puts the whole
 * API's rate near 10% of that function's share of requests, far above it.
 */
export const RELEASE_SERVER_ERROR_RATE_THRESHOLD = 0.01;
/**
 * p99 latency in ms, per minute, that rolls a release back. Higher than the operational 1 s: at
 * first every request the new version gets starts it cold (and its authorizer, in an authorizer
 * release), which stays well under 3 s; a version that waits on something (a timeout, DynamoDB
 * retries, which give up after about 3 s) crosses it.
 */
export const RELEASE_LATENCY_P99_THRESHOLD_MS = 3000;

/** The rollback every gradual release has: on a failed or stopped deployment, and on any of its alarms. */
const AUTO_ROLLBACK = { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true } as const;

export interface ReleaseProps {
  readonly strategy: GradualRelease;
  /** Names the application, the hook function (`<namePrefix>-preTrafficHook`) and its log group. */
  readonly namePrefix: string;
  /** The API's functions by operationId, and its authorizer: each gets a deployment group. */
  readonly operations: ReadonlyMap<string, ApiFunction>;
  readonly authorizer: ApiFunction;
  /**
   * The REST API's name, whose stage's 5xx rate and p99 latency every release watches. By name,
   * not by the stage: the aliases depend on their deployment groups, and the API on the aliases.
   */
  readonly apiName: string;
  /** Where the release alarms notify when they fire (the stage's alarm topic). */
  readonly alarmTopic: ITopic;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

export class Release extends Construct {
  readonly application: LambdaApplication;
  /** The deployment group of each released function, by name (operationId or `authorizer`). */
  readonly deploymentGroups: ReadonlyMap<string, LambdaDeploymentGroup>;
  readonly preTrafficHook: ApiFunction;
  /** The two alarms on the API as a whole, which every deployment group watches. */
  readonly apiAlarms: readonly Alarm[];

  constructor(scope: Construct, id: string, props: ReleaseProps) {
    super(scope, id);
    const notify = new SnsAction(props.alarmTopic);
    const apiMetric = (metricName: string, statistic: string) =>
      new Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        dimensionsMap: { ApiName: props.apiName, Stage: STAGE_NAME },
        statistic,
        period: RELEASE_PERIOD,
      });
    const releaseAlarm = (alarmId: string, alarmProps: Omit<AlarmProps, 'evaluationPeriods'>) => {
      const alarm = new Alarm(this, alarmId, {
        treatMissingData: TreatMissingData.NOT_BREACHING,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        ...RELEASE_EVALUATION,
        ...alarmProps,
      });
      // Only when it fires: the operational alarms already tell when things are well again.
      alarm.addAlarmAction(notify);
      return alarm;
    };

    this.apiAlarms = [
      releaseAlarm('ServerErrorRate', {
        alarmDescription:
          'Release alarm: more than 1% of requests answered 5xx in 2 of 3 minutes. A gradual release under way is rolled back (docs/operations.md, Releases).',
        metric: apiMetric('5XXError', 'Average'),
        threshold: RELEASE_SERVER_ERROR_RATE_THRESHOLD,
      }),
      releaseAlarm('LatencyP99', {
        alarmDescription: `Release alarm: p99 latency above ${RELEASE_LATENCY_P99_THRESHOLD_MS} ms in 2 of 3 minutes. A gradual release under way is rolled back (docs/operations.md, Releases).`,
        metric: apiMetric('Latency', 'p99'),
        threshold: RELEASE_LATENCY_P99_THRESHOLD_MS,
      }),
    ];

    // The SAM pattern: the hook's environment holds each checked function's new version, so
    // every deploy that publishes one updates the hook, before CodeDeploy runs it.
    const checked = Object.keys(VERSION_ARN_VARIABLES).map((operation) => {
      const fn = props.operations.get(operation);
      if (!fn) throw new Error(`No ${operation} function for the pre-traffic hook to check.`);
      return [operation as CheckedOperation, fn] as const;
    });
    const versionArns = checked.map(([, fn]) => fn.function.currentVersion.functionArn);
    this.preTrafficHook = new ApiFunction(this, 'PreTrafficHook', {
      entry: 'functions/pre-traffic-hook.ts',
      bundling: HOOK_BUNDLING,
      functionName: `${props.namePrefix}-preTrafficHook`,
      description: 'pet store: checks the new versions of a release before they take traffic',
      environment: Object.fromEntries(
        checked.map(([operation, fn]) => [VERSION_ARN_VARIABLES[operation], fn.function.currentVersion.functionArn]),
      ),
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    // Only the new versions: not the aliases (the traffic), not the functions' other versions.
    this.preTrafficHook.function.addToRolePolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: versionArns }));

    this.application = new LambdaApplication(this, 'Application', { applicationName: props.namePrefix });
    // One role for every group: CodeDeploy's own policy for Lambda releases, plus (granted by
    // each group with a hook) the invocation of the hook.
    const role = new Role(this, 'DeploymentRole', {
      assumedBy: new ServicePrincipal('codedeploy.amazonaws.com'),
      description:
        'CodeDeploy: shifts the live aliases of the pet store functions, watching the release alarms, and runs the pre-traffic hook.',
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSCodeDeployRoleForLambdaLimited')],
    });

    const checkedNames = new Set<string>(checked.map(([operation]) => operation));
    const groups = new Map<string, LambdaDeploymentGroup>();
    for (const [name, fn] of [...props.operations, ['authorizer', props.authorizer] as const]) {
      // The authorizer refuses a key by throwing (a TOKEN authorizer's only way to answer 401),
      // which Lambda counts as an error: its Errors would roll back a release whenever clients
      // send bad keys. Its real failures reach clients as 503 (AUTHORIZER_FAILURE), in the 5xx rate.
      const alarms = name === 'authorizer' ? [...this.apiAlarms] : [this.newVersionErrors(releaseAlarm, name, fn), ...this.apiAlarms];
      groups.set(
        name,
        new LambdaDeploymentGroup(this, `${pascalCase(name)}Deployment`, {
          application: this.application,
          alias: fn.alias,
          deploymentConfig: deploymentConfigs[props.strategy],
          alarms,
          autoRollback: AUTO_ROLLBACK,
          role,
          ...(checkedNames.has(name) ? { preHook: this.preTrafficHook.function } : {}),
        }),
      );
    }
    this.deploymentGroups = groups;
    this.acknowledgeDeploymentRole(role);
  }

  /**
   * A function's errors on the version being released only: Lambda publishes an alias's metrics
   * with the dimensions FunctionName, Resource (`<function>:live`) and ExecutedVersion, so the old
   * version's errors during the canary do not count against the new one.
   */
  private newVersionErrors(
    releaseAlarm: (alarmId: string, alarmProps: Omit<AlarmProps, 'evaluationPeriods'>) => Alarm,
    name: string,
    fn: ApiFunction,
  ): Alarm {
    const functionName = fn.function.functionName;
    return releaseAlarm(`${pascalCase(name)}NewVersionErrors`, {
      alarmDescription: `Release alarm: the ${name} function's new version failed (crashed or timed out) in 2 of 3 minutes. A gradual release under way is rolled back.`,
      metric: new Metric({
        namespace: 'AWS/Lambda',
        metricName: 'Errors',
        dimensionsMap: {
          FunctionName: functionName,
          Resource: `${functionName}:${LIVE_ALIAS}`,
          ExecutedVersion: fn.function.currentVersion.version,
        },
        statistic: 'Sum',
        period: RELEASE_PERIOD,
      }),
      threshold: 0,
    });
  }

  /** cdk-nag findings on the deployment role, each a deliberate choice with its reason. */
  private acknowledgeDeploymentRole(role: Role): void {
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        "CodeDeploy's own policy for Lambda releases, the one AWS documents and maintains for it: read and update aliases, " +
        'read alarms, publish release notifications, invoke only functions named CodeDeployHook_* (each group grants ' +
        'its hook on top). A hand-written copy could not be tried without an AWS account, and a missing action would ' +
        'fail every release.',
    });
    const hook = Stack.of(this).getLogicalId(this.preTrafficHook.function.node.defaultChild as CfnFunction);
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${hook}.Arn>:*]`,
      reason:
        "CDK's grant of the pre-traffic hook to the deployment groups: the hook function and its own versions and aliases " +
        '(`<hook ARN>:*`), no other function.',
    });
  }
}
