/**
 * Release: how a new version of the API's functions takes traffic on a stage whose release is
 * gradual (StageSettings.release). One CodeDeploy application; per function a deployment group
 * that shifts its `live` alias by the stage's canary or linear configuration; release alarms on
 * 1-minute periods, any of which rolls the release back; and the pre-traffic hook, which checks the
 * version each deployment moves an alias to (the new one, or in a rollback the previous one) before
 * it takes any request. The key audit's functions are not released this way
 * (a stream and a one-minute schedule send a canary too little to judge): their alias moves in the
 * stack update.
 */
import { Duration, Stack, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData, type AlarmProps } from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaApplication, LambdaDeploymentConfig, LambdaDeploymentGroup, type ILambdaDeploymentConfig } from 'aws-cdk-lib/aws-codedeploy';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction, IFunction } from 'aws-cdk-lib/aws-lambda';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { checkedFunctions, FUNCTION_NAME_VARIABLES } from '../../shared/release-checks';
import { routes, type Route } from '../../shared/routes';
import { PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS } from '../../shared/stack';
import { HOOK_BUNDLING } from '../bundling';
import type { ReleaseStrategy } from '../stages';
import { methodMetric, stageMetric } from './api-metrics';
import { ApiFunction, LIVE_ALIAS } from './api-function';
import { authorizerFailures } from './monitoring';
import { AUTHORIZER_FAILURES_ALARM_ID, functionNameOf, methodServerErrorRateAlarmId, newVersionErrorsAlarmId, pascalCase } from './names';

/** The pre-traffic hook's function name, after the stage's prefix. */
export const PRE_TRAFFIC_HOOK_NAME = 'preTrafficHook';

export type GradualRelease = Exclude<ReleaseStrategy, 'AllAtOnce'>;

/** CodeDeploy's predefined configuration for each gradual release. */
const deploymentConfigs: Readonly<Record<GradualRelease, ILambdaDeploymentConfig>> = {
  Canary10Percent5Minutes: LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
  Linear10PercentEvery1Minute: LambdaDeploymentConfig.LINEAR_10PERCENT_EVERY_1MINUTE,
};

/**
 * Release alarms look at 1-minute periods (the operational alarms, in Monitoring, at 5): a
 * 5-minute canary must see trouble within minutes. A rate (the API's, a method's) or a latency
 * alarms on 2 of the last 3 minutes: one bad minute of the whole API, which the old version
 * mostly serves, does not undo a release. The new version's own errors, and the authorizer's
 * failures, alarm on 1 of 1: with CloudWatch's delay of a minute or two, 2 of 3 would fire only
 * near the canary's end, or after it. They notify no one: they exist to stop a release, and
 * outside one a quiet stage's single 5xx would page; the operational alarms (Monitoring) page.
 */
const RELEASE_PERIOD = Duration.minutes(1);
const RATE_EVALUATION = { evaluationPeriods: 3, datapointsToAlarm: 2 } as const;
const NEW_VERSION_EVALUATION = { evaluationPeriods: 1, datapointsToAlarm: 1 } as const;
/**
 * Share of requests answered 5xx, per minute, that rolls a release back: 1%, as the operational
 * alarm, for the whole API and for each released function's own method(s). The method's rate is
 * what sees a small function: a new version that fails every request it gets during the canary's
 * 10% puts its method's rate near 10%, while the whole API's moves by 10% of that function's
 * share of requests, which may stay under 1%.
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
  /** The stage's `service` (the hook's log lines; the authorizer's failures are counted under it). */
  readonly serviceName: string;
  /** The API's functions by operationId, and its authorizer: each gets a deployment group. */
  readonly operations: ReadonlyMap<string, ApiFunction>;
  readonly authorizer: ApiFunction;
  /**
   * The REST API's name (the RestApi's own `restApiName`), whose stage's metrics the release
   * alarms watch. By name, not by the stage: the aliases depend on their deployment groups, and
   * the API on the aliases.
   */
  readonly apiName: string;
  /**
   * The deployment groups ignore their alarms: `cdk deploy -c ignoreReleaseAlarms=true`, for a
   * fix deployed while an alarm is already firing (CodeDeploy would stop it and roll it back).
   */
  readonly ignoreAlarms: boolean;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

type ReleaseAlarm = (alarmId: string, alarmProps: Omit<AlarmProps, 'evaluationPeriods'> & { evaluationPeriods?: number }) => Alarm;

export class Release extends Construct {
  readonly application: LambdaApplication;
  /** The deployment group of each released function, by name (operationId or `authorizer`). */
  readonly deploymentGroups: ReadonlyMap<string, LambdaDeploymentGroup>;
  /** The alarms each group watches, by the same names. */
  readonly groupAlarms: ReadonlyMap<string, readonly Alarm[]>;
  readonly preTrafficHook: ApiFunction;
  /**
   * The alarm on the API as a whole, which every deployment group watches: its p99 latency. Not its
   * 5xx rate: each operation's group watches its own methods' rate, which the whole API's dilutes,
   * and the authorizer's group, whose release reaches every method, watches them all; a rate of the
   * whole API would add no failure those miss, at the price of three alarm metrics in each region.
   */
  readonly apiAlarms: readonly Alarm[];

  constructor(scope: Construct, id: string, props: ReleaseProps) {
    super(scope, id);
    const releaseAlarm: ReleaseAlarm = (alarmId, alarmProps) =>
      new Alarm(this, alarmId, {
        treatMissingData: TreatMissingData.NOT_BREACHING,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        ...RATE_EVALUATION,
        ...alarmProps,
      });

    this.apiAlarms = [
      releaseAlarm('LatencyP99', {
        alarmDescription: `Release alarm: p99 latency above ${RELEASE_LATENCY_P99_THRESHOLD_MS} ms in 2 of 3 minutes. A gradual release under way is rolled back (docs/operations.md, Releases).`,
        metric: stageMetric(props.apiName, 'Latency', 'p99', RELEASE_PERIOD),
        threshold: RELEASE_LATENCY_P99_THRESHOLD_MS,
      }),
    ];

    // Every released function is checked, and every check has its function: the API's and the authorizer.
    const released = new Map([...props.operations, ['authorizer', props.authorizer] as const]);
    const checked = checkedFunctions(released);
    this.preTrafficHook = new ApiFunction(this, 'PreTrafficHook', {
      entry: 'functions/pre-traffic-hook.ts',
      bundling: HOOK_BUNDLING,
      functionName: functionNameOf(props.namePrefix, PRE_TRAFFIC_HOOK_NAME),
      description: 'pet store: checks the version a deployment moves a live alias to, before it takes traffic',
      serviceName: props.serviceName,
      // The checked functions by name, which no release changes: the version comes from each
      // deployment itself (its AppSpec's TargetVersion), so a release does not update the hook,
      // and in a stack rollback, which moves the aliases back before it restores the hook, the
      // hook checks the version the alias goes back to.
      environment: Object.fromEntries(checked.map(([name, fn]) => [FUNCTION_NAME_VARIABLES[name], fn.function.functionName])),
      timeout: Duration.seconds(PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS),
      // CodeDeploy invokes it by name: a version and an alias of its own would serve nothing.
      withLiveAlias: false,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    this.grantVersionInvocation(checked.map(([, fn]) => fn.function));

    this.application = new LambdaApplication(this, 'Application', { applicationName: props.namePrefix });
    // One role for every group, allowed what a release does on this stage's functions and alarms
    // only (grantRelease). The groups get it read-only: CDK's LambdaDeploymentGroup would attach
    // AWSCodeDeployRoleForLambdaLimited, whose UpdateAlias on `*` would let this stage's releases
    // move another stage's aliases in a shared account.
    const role = new Role(this, 'DeploymentRole', {
      assumedBy: new ServicePrincipal('codedeploy.amazonaws.com'),
      description:
        'CodeDeploy: shifts the live aliases of the pet store functions, watching the release alarms, and runs the pre-traffic hook.',
    });
    const groupRole = role.withoutPolicyUpdates();

    const groups = new Map<string, LambdaDeploymentGroup>();
    const groupAlarms = new Map<string, readonly Alarm[]>();
    // Every method's 5xx rate alarm, for the authorizer's group (released last): it is on every method's path.
    const methodRates: Alarm[] = [];
    for (const [name, fn] of released) {
      const ownRates = name === 'authorizer' ? [] : this.methodServerErrorRates(releaseAlarm, name, props.apiName);
      methodRates.push(...ownRates);
      const alarms =
        name === 'authorizer'
          ? [this.authorizerFailures(releaseAlarm, props.serviceName), ...methodRates, ...this.apiAlarms]
          : [this.newVersionErrors(releaseAlarm, name, fn), ...ownRates, ...this.apiAlarms];
      const group = new LambdaDeploymentGroup(this, `${pascalCase(name)}Deployment`, {
        application: this.application,
        alias: fn.alias,
        deploymentConfig: deploymentConfigs[props.strategy],
        alarms,
        ignoreAlarmConfiguration: props.ignoreAlarms,
        autoRollback: AUTO_ROLLBACK,
        role: groupRole,
        preHook: this.preTrafficHook.function,
      });
      // What the alias update (CodeDeploy's deployment) needs exists before it starts, in the
      // template's DependsOn rather than only through references inside its UpdatePolicy. The
      // group too: a changed group (its alarms ignored with -c ignoreReleaseAlarms=true, or
      // watched again) is updated before the deployment it is changed for starts.
      fn.alias.node.addDependency(this.preTrafficHook, group, role, ...alarms);
      groups.set(name, group);
      groupAlarms.set(name, alarms);
    }
    this.deploymentGroups = groups;
    this.groupAlarms = groupAlarms;
    this.grantRelease(role, released, new Set([...groupAlarms.values()].flat()));
    // The hook reads the deployments of these groups (their AppSpec), each as CodeDeploy's API
    // reference says: GetDeployment on the group, GetApplicationRevision on the application.
    this.preTrafficHook.function.addToRolePolicy(
      new PolicyStatement({
        actions: ['codedeploy:GetDeployment'],
        resources: [...groups.values()].map((group) => group.deploymentGroupArn),
      }),
    );
    this.preTrafficHook.function.addToRolePolicy(
      new PolicyStatement({ actions: ['codedeploy:GetApplicationRevision'], resources: [this.application.applicationArn] }),
    );
    this.acknowledgeDeploymentRole(role);
  }

  /**
   * A function's errors on the version being released only: Lambda publishes an alias's metrics
   * with the dimensions FunctionName, Resource (`<function>:live`) and ExecutedVersion, so the old
   * version's errors during the canary do not count against the new one. It counts crashes and
   * timeouts only: a handler's 500 answer is a successful invocation (the method's rate sees it).
   */
  private newVersionErrors(releaseAlarm: ReleaseAlarm, name: string, fn: ApiFunction): Alarm {
    const functionName = fn.function.functionName;
    return releaseAlarm(newVersionErrorsAlarmId(name), {
      alarmDescription: `Release alarm: the ${name} function's new version failed (crashed or timed out) in a minute. A gradual release under way is rolled back.`,
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
      ...NEW_VERSION_EVALUATION,
    });
  }

  /**
   * The authorizer's failures (its keys table unreadable: clients got 503), counted from its log
   * lines, in any minute. Not its Errors: it refuses a key by throwing (a TOKEN authorizer's only
   * way to answer 401), so they would roll back a release whenever clients send bad keys. Nor left
   * to the API's 5xx rate: the authorizer runs only on a cache miss (300 s on prod), and during
   * the canary only 10% of those reach the new version, so its failures are a sliver of the
   * requests. The count is of both versions (the lines carry no version): an old version's failure
   * stops a release too, which is still the best signal there is.
   */
  private authorizerFailures(releaseAlarm: ReleaseAlarm, serviceName: string): Alarm {
    return releaseAlarm(AUTHORIZER_FAILURES_ALARM_ID, {
      alarmDescription:
        "Release alarm: the authorizer failed (its keys table unreadable) in a minute, the old version's failures included. A gradual release under way is rolled back.",
      metric: authorizerFailures(serviceName, RELEASE_PERIOD),
      threshold: 0,
      ...NEW_VERSION_EVALUATION,
    });
  }

  /**
   * The share of requests answered 5xx on each method an operation serves (the route table's
   * method and path): the 500s its handler answers, which Lambda does not count as errors, and
   * which the whole API's rate dilutes.
   */
  private methodServerErrorRates(releaseAlarm: ReleaseAlarm, operationId: string, apiName: string): Alarm[] {
    const served = routes.filter((route: Route) => route.operationId === operationId);
    return served.map((route, position) =>
      releaseAlarm(methodServerErrorRateAlarmId(operationId, position), {
        alarmDescription: `Release alarm: more than 1% of ${route.method} ${route.path} requests answered 5xx in 2 of 3 minutes. A gradual release under way is rolled back.`,
        metric: methodMetric(apiName, route, '5XXError', 'Average', RELEASE_PERIOD),
        threshold: RELEASE_SERVER_ERROR_RATE_THRESHOLD,
      }),
    );
  }

  /**
   * The hook may invoke any version of the functions it checks (`<function ARN>:*`), never their
   * `live` alias (the traffic) nor `$LATEST` (never released). A grant no release changes: one
   * naming each new version would be rewritten seconds before CodeDeploy runs the hook, and IAM
   * takes a while to apply a change, so the hook could be refused and the release rolled back.
   */
  private grantVersionInvocation(functions: readonly IFunction[]): void {
    const hook = this.preTrafficHook.function;
    hook.addToRolePolicy(
      new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: functions.map((fn) => `${fn.functionArn}:*`) }),
    );
    // `$` opens a policy variable only before `{`: `$LATEST` is literal.
    hook.addToRolePolicy(
      new PolicyStatement({
        effect: Effect.DENY,
        actions: ['lambda:InvokeFunction'],
        resources: functions.flatMap((fn) => [`${fn.functionArn}:${LIVE_ALIAS}`, `${fn.functionArn}:$LATEST`]),
      }),
    );
    const stack = Stack.of(this);
    for (const fn of functions) {
      const id = stack.getLogicalId(fn.node.defaultChild as CfnFunction);
      Validations.of(hook.role!).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${id}.Arn>:*]`,
        reason:
          "The pre-traffic hook invokes the version each deployment moves this checked function's live alias to, read from " +
          'the deployment: any published version of this one function. Its live alias and $LATEST are denied.',
      });
    }
  }

  /**
   * What CodeDeploy does in a Lambda release (the actions of AWSCodeDeployRoleForLambdaLimited),
   * on this stage's resources only. Without its S3 reads (CloudFormation gives the AppSpec inline)
   * and its invocation of any CodeDeployHook_* function (the one hook is granted by name).
   */
  private grantRelease(role: Role, released: ReadonlyMap<string, ApiFunction>, alarms: ReadonlySet<Alarm>): void {
    const functions = [...released.values()].map((fn) => fn.function);
    // Lambda authorizes GetAlias and UpdateAlias on the function's unqualified ARN (the alias is a
    // parameter of the call): no narrower resource exists for them.
    role.addToPolicy(
      new PolicyStatement({ actions: ['lambda:GetAlias', 'lambda:UpdateAlias'], resources: functions.map((fn) => fn.functionArn) }),
    );
    // This one on the alias itself. Built from the function's ARN: the alias's own would close a
    // loop (the alias depends on this role).
    role.addToPolicy(
      new PolicyStatement({
        actions: ['lambda:GetProvisionedConcurrencyConfig'],
        resources: functions.map((fn) => `${fn.functionArn}:${LIVE_ALIAS}`),
      }),
    );
    // DescribeAlarms is authorized per alarm: these are metric alarms (only a composite one needs `*`).
    role.addToPolicy(
      new PolicyStatement({ actions: ['cloudwatch:DescribeAlarms'], resources: [...alarms].map((alarm) => alarm.alarmArn) }),
    );
    // As CDK grants a group's hook: the function, and its versions and aliases.
    this.preTrafficHook.function.grantInvoke(role);
  }

  /** cdk-nag findings on the deployment role, each a deliberate choice with its reason. */
  private acknowledgeDeploymentRole(role: Role): void {
    const hook = Stack.of(this).getLogicalId(this.preTrafficHook.function.node.defaultChild as CfnFunction);
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${hook}.Arn>:*]`,
      reason:
        "CDK's grant of the pre-traffic hook to the deployment groups: the hook function and its own versions and aliases " +
        '(`<hook ARN>:*`), no other function.',
    });
  }
}
