/**
 * Releases in the synthesized template: every function published as a version behind `live`, and
 * every caller on the alias; on a gradual stage (prod's canary), a CodeDeploy deployment group per
 * API function with its configuration, alarms and automatic rollback, and the pre-traffic hook,
 * allowed exactly what it does. What only AWS can show (CodeDeploy shifting traffic, alarms firing,
 * the hook's real invocations) is listed in docs/operations.md, Releases.
 */
import { Stack } from 'aws-cdk-lib';
import type { CfnResource } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import type { ApiFunction } from '../../infra/constructs/api-function';
import { RELEASE_LATENCY_P99_THRESHOLD_MS, RELEASE_SERVER_ERROR_RATE_THRESHOLD } from '../../infra/constructs/release';
import { FUNCTION_NAME_VARIABLES, type CheckedFunction } from '../../shared/release-checks';
import { CHECK_DEADLINE_CAP_MS, READ_DEADLINE_CAP_MS, REPORT_MARGIN_MS } from '../../shared/release/hook-deadlines';
import { routes, type Route } from '../../shared/routes';
import { PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS } from '../../shared/stack';
import { expirySweepOf, policyStatementsOf, resourcesOf, synthStage, type SynthesizedStage } from './synth';
import { handledOperationIds } from '../support/operations';

/** An alarm's metric math, each query by id: its expression, or its metric's name, dimensions and statistic. */
const serverErrorRateMetrics = (alarm: Record<string, unknown> | undefined) =>
  Object.fromEntries(
    ((alarm?.Metrics as Array<Record<string, unknown>> | undefined) ?? []).map(({ Id, Expression, MetricStat }) => {
      if (Expression !== undefined) return [Id, Expression];
      const { Metric, Stat, Period } = MetricStat as {
        Metric: { MetricName: string; Dimensions: unknown[] };
        Stat: string;
        Period: number;
      };
      return [Id, { MetricName: Metric.MetricName, Dimensions: Metric.Dimensions, Stat, Period }];
    }),
  );

/** The one not-implemented route, whichever the route table has. */
const notImplemented = (() => {
  const route = (routes as readonly Route[]).find((candidate) => candidate.notImplemented);
  if (!route) throw new Error('The tests need a route that is not implemented.');
  return route;
})();

/** The 5xx rate without the one not-implemented route: each query, as the template must have it. */
const expectedServerErrorRate = (apiName: unknown, period: number) => {
  const stage = [
    { Name: 'ApiName', Value: apiName },
    { Name: 'Stage', Value: 'v1' },
  ];
  return {
    expr_1: '(errors - FILL(notImplemented0, 0)) / requests',
    errors: { MetricName: '5XXError', Dimensions: stage, Stat: 'Sum', Period: period },
    requests: { MetricName: 'Count', Dimensions: stage, Stat: 'Sum', Period: period },
    notImplemented0: {
      MetricName: '5XXError',
      Dimensions: [
        { Name: 'ApiName', Value: apiName },
        { Name: 'Method', Value: notImplemented.method },
        { Name: 'Resource', Value: notImplemented.path },
        { Name: 'Stage', Value: 'v1' },
      ],
      Stat: 'Sum',
      Period: period,
    },
  };
};

/** The authorizer's release alarm: any failure line of the stage's service in a minute. */
const authorizerFailuresAlarm = (stage: string) => ({
  Namespace: 'PetStore',
  MetricName: 'AuthorizerFailures',
  Dimensions: [{ Name: 'service', Value: `pet-store-${stage}` }],
  Statistic: 'Sum',
  Period: 60,
  ComparisonOperator: 'GreaterThanThreshold',
  Threshold: 0,
  EvaluationPeriods: 1,
  DatapointsToAlarm: 1,
  TreatMissingData: 'notBreaching',
});

// Three synths shared by every test: a development stage (all at once), prod (canary), and a
// stage that chooses the linear release, deployed with its release alarms ignored.
const dev = synthStage('dev');
const staging = synthStage('staging');
const prod = synthStage('prod');
const linearIgnoringAlarms = synthStage('linear', { release: 'Linear10PercentEvery1Minute' }, { ignoreReleaseAlarms: true });

type TemplateResource = { Type: string; Properties: Record<string, unknown>; UpdatePolicy?: Record<string, unknown>; DependsOn?: string[] };
const resourcesById = (synthesized: SynthesizedStage) =>
  (synthesized.template.toJSON() as { Resources: Record<string, TemplateResource> }).Resources;

/** A construct's logical id as the template has it (a version's is overridden with its hash). */
const logicalId = (synthesized: SynthesizedStage, construct: { node: { defaultChild?: unknown } }): string =>
  Stack.of(synthesized.stack).resolve((construct.node.defaultChild as CfnResource).logicalId) as string;

/** Every function of the stage by name: the operations', the authorizer, the key audit's two, and the idempotency sweep. */
const functionsOf = ({ stack }: SynthesizedStage): Map<string, ApiFunction> =>
  new Map([
    ...stack.functions.operations,
    ['authorizer', stack.functions.authorizer],
    ['keyAudit', stack.keyAudit.writer],
    ['keyExpiry', expirySweepOf({ stack })],
    ...(stack.idempotencySweep ? [['idempotencySweep', stack.idempotencySweep.sweep] as const] : []),
  ]);

const aliasArnRef = (synthesized: SynthesizedStage, fn: ApiFunction) => ({ Ref: logicalId(synthesized, fn.alias) });
const functionArnRef = (synthesized: SynthesizedStage, fn: ApiFunction) => ({ 'Fn::GetAtt': [logicalId(synthesized, fn.function), 'Arn'] });
const versionRef = (synthesized: SynthesizedStage, fn: ApiFunction) => ({ Ref: logicalId(synthesized, fn.function.currentVersion) });

describe.each([
  ['a development stage', dev],
  ['prod', prod],
])('on %s, every function is published behind live, and every caller invokes the alias', (_name, synthesized) => {
  const functions = functionsOf(synthesized);
  const template = synthesized.template.toJSON() as { Resources: Record<string, { Type: string }> };
  // Every resource but the IAM policies, which name functions for what they allow (on a gradual
  // stage, CodeDeploy's alias updates and the hook's invocation of versions: tested below).
  const text = JSON.stringify(Object.values(template.Resources).filter(({ Type }) => Type !== 'AWS::IAM::Policy'));

  it('publishes a version of each function, with an alias live on it', () => {
    const aliases = resourcesOf(synthesized.template, 'AWS::Lambda::Alias');
    const versions = resourcesOf(synthesized.template, 'AWS::Lambda::Version');
    for (const fn of functions.values()) {
      const functionRef = { Ref: logicalId(synthesized, fn.function) };
      const version = versions.find(({ properties }) => JSON.stringify(properties.FunctionName) === JSON.stringify(functionRef));
      expect(version).toBeDefined();
      expect(aliases.find(({ properties }) => JSON.stringify(properties.FunctionName) === JSON.stringify(functionRef))?.properties).toEqual(
        {
          FunctionName: functionRef,
          FunctionVersion: { 'Fn::GetAtt': [version?.logicalId, 'Version'] },
          Name: 'live',
        },
      );
    }
  });

  it("points every API integration and the authorizer at the alias, never at the function's own ARN", () => {
    const uris = resourcesOf(synthesized.template, 'AWS::ApiGateway::Method')
      .map(({ properties }) => (properties.Integration as { Type?: string; Uri?: unknown } | undefined) ?? {})
      .filter(({ Type }) => Type === 'AWS_PROXY')
      .map(({ Uri }) => JSON.stringify(Uri));
    const authorizerUris = resourcesOf(synthesized.template, 'AWS::ApiGateway::Authorizer').map(({ properties }) =>
      JSON.stringify(properties.AuthorizerUri),
    );
    expect(uris).toHaveLength(handledOperationIds.length);
    expect(authorizerUris).toHaveLength(1);
    for (const [name, fn] of [...synthesized.stack.functions.operations]) {
      expect(
        uris.filter((uri) => uri.includes(JSON.stringify(aliasArnRef(synthesized, fn)))),
        name,
      ).toHaveLength(1);
    }
    expect(authorizerUris[0]).toContain(JSON.stringify(aliasArnRef(synthesized, synthesized.stack.functions.authorizer)));
    for (const uri of [...uris, ...authorizerUris]) expect(uri).not.toMatch(/Function[0-9A-F]{8}","Arn"/);
  });

  it('allows API Gateway, the stream and the schedule to invoke the aliases only', () => {
    const permissions = resourcesOf(synthesized.template, 'AWS::Lambda::Permission').map(({ properties }) => properties);
    expect(permissions.length).toBeGreaterThan(0);
    const aliasRefs = [...functions.values()].map((fn) => JSON.stringify(aliasArnRef(synthesized, fn)));
    for (const permission of permissions) expect(aliasRefs).toContain(JSON.stringify(permission.FunctionName));

    const [mapping, ...others] = resourcesOf(synthesized.template, 'AWS::Lambda::EventSourceMapping');
    expect(others).toEqual([]);
    // CDK names the alias `<function name>:live`, the name taken from the alias's ARN.
    expect(JSON.stringify(mapping?.properties.FunctionName)).toContain(
      JSON.stringify(aliasArnRef(synthesized, synthesized.stack.keyAudit.writer)),
    );
    expect(JSON.stringify(mapping?.properties.FunctionName)).toContain('":live"');

    const targets = resourcesOf(synthesized.template, 'AWS::Events::Rule').flatMap(
      ({ properties }) => properties.Targets as Array<{ Arn: unknown }>,
    );
    const scheduled = [expirySweepOf(synthesized), synthesized.stack.idempotencySweep?.sweep];
    expect(targets.map(({ Arn }) => Arn)).toEqual(scheduled.flatMap((fn) => (fn ? [aliasArnRef(synthesized, fn)] : [])));
    // Nothing invokes a function but through its alias.
    for (const fn of functions.values()) {
      const arn = JSON.stringify(functionArnRef(synthesized, fn));
      const uses = text.split(arn).length - 1;
      expect(uses, `${fn.node.path}: uses of the function's own ARN`).toBe(0);
    }
  });
});

describe('a development stage releases all at once', () => {
  it('has no CodeDeploy application, deployment group or alias update policy: the stack update moves live', () => {
    expect(dev.settings.release).toBe('AllAtOnce');
    expect(dev.stack.release).toBeUndefined();
    expect(resourcesOf(dev.template, 'AWS::CodeDeploy::Application')).toEqual([]);
    expect(resourcesOf(dev.template, 'AWS::CodeDeploy::DeploymentGroup')).toEqual([]);
    const aliases = dev.template.toJSON() as { Resources: Record<string, { Type: string; UpdatePolicy?: unknown }> };
    expect(Object.values(aliases.Resources).filter((resource) => resource.UpdatePolicy !== undefined)).toEqual([]);
  });
});

describe('prod releases each API function by a CodeDeploy canary', () => {
  const release = prod.stack.release;
  if (!release) throw new Error('prod has no release');
  const api = new Map([...prod.stack.functions.operations, ['authorizer', prod.stack.functions.authorizer]]);
  const groups = resourcesOf(prod.template, 'AWS::CodeDeploy::DeploymentGroup');
  const resources = resourcesById(prod);
  const hookRef = { Ref: logicalId(prod, release.preTrafficHook.function) };
  const alarmRef = (alarm: { node: { defaultChild?: unknown } }) => ({ Name: { Ref: logicalId(prod, alarm) } });
  const apiAlarms = release.apiAlarms.map(alarmRef);
  const [restApi] = resourcesOf(prod.template, 'AWS::ApiGateway::RestApi');
  /** The RestApi's Name as the template has it: every API Gateway metric names the API by it. */
  const apiName = restApi?.properties.Name;

  it('has one application, and one deployment group per API function, with the canary configuration and automatic rollback', () => {
    expect(prod.settings.release).toBe('Canary10Percent5Minutes');
    expect(resourcesOf(prod.template, 'AWS::CodeDeploy::Application').map(({ properties }) => properties.ComputePlatform)).toEqual([
      'Lambda',
    ]);
    expect(groups).toHaveLength(api.size);
    for (const group of groups) {
      expect(group.properties).toMatchObject({
        ApplicationName: { Ref: logicalId(prod, release.application) },
        DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
        DeploymentStyle: { DeploymentType: 'BLUE_GREEN', DeploymentOption: 'WITH_TRAFFIC_CONTROL' },
        AutoRollbackConfiguration: {
          Enabled: true,
          Events: ['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_REQUEST', 'DEPLOYMENT_STOP_ON_ALARM'],
        },
      });
    }
  });

  it("hands each API function's alias update to its group, with the hook before traffic, the authorizer's too", () => {
    for (const [name, fn] of api) {
      const group = release.deploymentGroups.get(name);
      if (!group) throw new Error(`no group for ${name}`);
      expect(resources[logicalId(prod, fn.alias)]?.UpdatePolicy, name).toEqual({
        CodeDeployLambdaAliasUpdate: {
          ApplicationName: { Ref: logicalId(prod, release.application) },
          DeploymentGroupName: { Ref: logicalId(prod, group) },
          BeforeAllowTrafficHook: hookRef,
        },
      });
    }
    // The key audit's functions move with the stack update.
    for (const fn of [prod.stack.keyAudit.writer, expirySweepOf(prod)]) {
      expect(resources[logicalId(prod, fn.alias)]?.UpdatePolicy).toBeUndefined();
    }
  });

  it("updates each alias only once the hook and the group's alarms exist (DependsOn)", () => {
    const hookIds = [release.preTrafficHook.function, release.preTrafficHook.function.role!, release.preTrafficHook.logGroup].map(
      (construct) => logicalId(prod, construct),
    );
    for (const [name, fn] of api) {
      const dependsOn = resources[logicalId(prod, fn.alias)]?.DependsOn ?? [];
      for (const id of hookIds) expect(dependsOn, `${name} on ${id}`).toContain(id);
      const alarms = release.groupAlarms.get(name) ?? [];
      expect(alarms.length).toBeGreaterThan(0);
      for (const alarm of alarms) expect(dependsOn, `${name} on ${alarm.node.id}`).toContain(logicalId(prod, alarm));
    }
  });

  it("watches the new version's errors and its method's 5xx rate (the authorizer: its failures and every method's rate), and the API's p99 latency, on 1-minute periods", () => {
    for (const [name, fn] of api) {
      const group = resources[logicalId(prod, release.deploymentGroups.get(name)!)]?.Properties;
      const alarms = (group?.AlarmConfiguration as { Enabled: boolean; Alarms: unknown[] }) ?? { Alarms: [] };
      expect(alarms.Enabled).toBe(true);
      if (name === 'authorizer') {
        // It refuses keys by throwing, which Lambda counts as errors: its failures from its log
        // lines instead (the API's 5xx rate sees them diluted by its cache), every method's 5xx
        // rate (it is on each one's path), and the API's alarm.
        const [failures, ...rest] = alarms.Alarms as Array<{ Name: { Ref: string } }>;
        const methodRates = [...api.keys()]
          .filter((operation) => operation !== 'authorizer')
          .flatMap((operation) => (release.groupAlarms.get(operation) ?? []).filter((alarm) => /ServerErrorRate/.test(alarm.node.id)))
          .map(alarmRef);
        expect(methodRates.length).toBeGreaterThan(0);
        expect(rest).toEqual([...methodRates, ...apiAlarms]);
        expect(resources[failures!.Name.Ref]?.Properties).toMatchObject(authorizerFailuresAlarm('prod'));
        continue;
      }
      const [errors, methodRate, ...rest] = alarms.Alarms as Array<{ Name: { Ref: string } }>;
      expect(rest).toEqual(apiAlarms);
      const functionName = { Ref: logicalId(prod, fn.function) };
      expect(resources[errors!.Name.Ref]?.Properties).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Statistic: 'Sum',
        Period: 60,
        Dimensions: expect.arrayContaining([
          { Name: 'FunctionName', Value: functionName },
          { Name: 'Resource', Value: { 'Fn::Join': ['', [functionName, ':live']] } },
          { Name: 'ExecutedVersion', Value: { 'Fn::GetAtt': [logicalId(prod, fn.function.currentVersion), 'Version'] } },
        ]),
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: 0,
        // Any error of the new version, in any minute: detection fits inside the 5-minute canary.
        EvaluationPeriods: 1,
        DatapointsToAlarm: 1,
        TreatMissingData: 'notBreaching',
      });
      // Its handler's 500s, which Lambda does not count as errors, on its own method: undiluted by the rest of the API.
      const route = routes.find(({ operationId }) => operationId === name)!;
      expect(resources[methodRate!.Name.Ref]?.Properties).toMatchObject({
        Namespace: 'AWS/ApiGateway',
        MetricName: '5XXError',
        Statistic: 'Average',
        Period: 60,
        Dimensions: [
          { Name: 'ApiName', Value: apiName },
          { Name: 'Method', Value: route.method },
          { Name: 'Resource', Value: route.path },
          { Name: 'Stage', Value: 'v1' },
        ],
        ComparisonOperator: 'GreaterThanThreshold',
        Threshold: RELEASE_SERVER_ERROR_RATE_THRESHOLD,
        EvaluationPeriods: 3,
        DatapointsToAlarm: 2,
        TreatMissingData: 'notBreaching',
      });
    }
    const [latency, ...others] = release.apiAlarms.map((alarm) => resources[logicalId(prod, alarm)]?.Properties);
    // No 5xx rate of the whole API: each method's own, above, which it would only dilute.
    expect(others).toEqual([]);
    // By name: a Ref to the stage would close a loop (alias, group, alarm, stage, API, alias).
    const stageDimensions = [
      { Name: 'ApiName', Value: apiName },
      { Name: 'Stage', Value: 'v1' },
    ];
    expect(latency).toMatchObject({
      MetricName: 'Latency',
      ExtendedStatistic: 'p99',
      Period: 60,
      Dimensions: stageDimensions,
      Threshold: RELEASE_LATENCY_P99_THRESHOLD_MS,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
    });
  });

  it('notifies no one from a release alarm: they stop releases, the operational alarms page', () => {
    const releaseAlarms = new Set([...release.groupAlarms.values()].flat());
    expect(releaseAlarms.size).toBeGreaterThan(release.apiAlarms.length);
    for (const alarm of releaseAlarms) {
      const properties = resources[logicalId(prod, alarm)]?.Properties;
      expect(properties?.AlarmActions, alarm.node.id).toBeUndefined();
      expect(properties?.OKActions, alarm.node.id).toBeUndefined();
      expect(properties?.InsufficientDataActions, alarm.node.id).toBeUndefined();
    }
  });

  it("counts the authorizer's failures of its own stage only", () => {
    const alarmOf = (synthesized: SynthesizedStage) => {
      const [failures] = synthesized.stack.release?.groupAlarms.get('authorizer') ?? [];
      return failures && resourcesById(synthesized)[logicalId(synthesized, failures)]?.Properties;
    };
    expect(alarmOf(prod)).toMatchObject(authorizerFailuresAlarm('prod'));
    expect(alarmOf(linearIgnoringAlarms)).toMatchObject(authorizerFailuresAlarm('linear'));
  });

  it('names the API in the alarms exactly as the RestApi is named', () => {
    expect(typeof apiName).toBe('string');
    const apiNames = resourcesOf(prod.template, 'AWS::CloudWatch::Alarm').flatMap(({ properties }) => {
      const dimensions = [
        ...((properties.Dimensions as Array<{ Name: string; Value: unknown }> | undefined) ?? []),
        ...(
          (properties.Metrics as Array<{ MetricStat?: { Metric: { Dimensions: Array<{ Name: string; Value: unknown }> } } }> | undefined) ??
          []
        ).flatMap(({ MetricStat }) => MetricStat?.Metric.Dimensions ?? []),
      ];
      return dimensions.filter(({ Name }) => Name === 'ApiName').map(({ Value }) => Value);
    });
    // The release's: each operation's method, and the API's 5xx rate (3 metrics) and latency; Monitoring's too.
    expect(apiNames.length).toBeGreaterThanOrEqual(handledOperationIds.length + 3 + 1);
    expect(new Set(apiNames)).toEqual(new Set([apiName]));
  });

  it('gives the hook a timeout longer than the functions it checks, and no version or alias of its own', () => {
    const timeoutOf = (fn: { node: { defaultChild?: unknown } }) => resources[logicalId(prod, fn)]?.Properties.Timeout as number;
    const hookTimeout = timeoutOf(release.preTrafficHook.function);
    expect(hookTimeout).toBe(PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS);
    for (const fn of api.values()) expect(hookTimeout).toBeGreaterThan(timeoutOf(fn.function));
    // Reading the deployment is given up on within READ_DEADLINE_CAP_MS, its checks within
    // CHECK_DEADLINE_CAP_MS, and REPORT_MARGIN_MS is kept to report.
    expect(hookTimeout * 1000).toBeGreaterThanOrEqual(READ_DEADLINE_CAP_MS + CHECK_DEADLINE_CAP_MS + REPORT_MARGIN_MS);

    const hookRef = JSON.stringify({ Ref: logicalId(prod, release.preTrafficHook.function) });
    for (const type of ['AWS::Lambda::Version', 'AWS::Lambda::Alias']) {
      expect(resourcesOf(prod.template, type).filter(({ properties }) => JSON.stringify(properties.FunctionName) === hookRef)).toEqual([]);
    }
    expect(() => release.preTrafficHook.alias).toThrow(/without a live alias/);
  });
});

/** The resources a policy's Allow statements give an action, as JSON (one entry each, so a duplicate shows). */
const allowedResources = (statements: ReadonlyArray<Record<string, unknown>>, action: string): string[] =>
  statements
    .filter(({ Effect, Action }) => Effect === 'Allow' && [Action].flat().includes(action))
    .flatMap(({ Resource }) => [Resource].flat().map((resource) => JSON.stringify(resource)));

describe.each([
  ['staging', staging],
  ['prod', prod],
])('on %s, the pre-traffic hook is granted and configured the same for every release', (_name, synthesized) => {
  const release = synthesized.stack.release;
  if (!release) throw new Error('no release');
  const hook = release.preTrafficHook;
  const resources = resourcesById(synthesized);
  const statements = policyStatementsOf(synthesized.template, logicalId(synthesized, hook.function.role!));
  const checked = (Object.keys(FUNCTION_NAME_VARIABLES) as CheckedFunction[]).map(
    (name) =>
      [name, name === 'authorizer' ? synthesized.stack.functions.authorizer : synthesized.stack.functions.operations.get(name)!] as const,
  );
  const qualified = (fn: ApiFunction, qualifier: string) =>
    JSON.stringify({ 'Fn::Join': ['', [functionArnRef(synthesized, fn), `:${qualifier}`]] });
  const hookProperties = resources[logicalId(synthesized, hook.function)]?.Properties ?? {};

  it('references no function version in its policy or its environment, so that a release changes neither', () => {
    const versions = resourcesOf(synthesized.template, 'AWS::Lambda::Version').map(({ logicalId: id }) => id);
    expect(versions.length).toBeGreaterThanOrEqual(checked.length);
    const policyText = JSON.stringify(statements);
    const environmentText = JSON.stringify(hookProperties.Environment);
    for (const version of versions) {
      expect(policyText, version).not.toContain(version);
      expect(environmentText, version).not.toContain(version);
    }
  });

  it("names each checked function in its environment, by the function's name", () => {
    const variables = (hookProperties.Environment as { Variables: Record<string, unknown> }).Variables;
    for (const [name, fn] of checked) {
      expect(variables[FUNCTION_NAME_VARIABLES[name]], name).toEqual({ Ref: logicalId(synthesized, fn.function) });
    }
  });

  it("invokes any version of each checked function, the authorizer's included, never its live alias nor $LATEST", () => {
    const invoke = statements.filter(({ Action }) => Action === 'lambda:InvokeFunction');
    expect(invoke.map(({ Effect }) => Effect).sort()).toEqual(['Allow', 'Deny']);
    expect(allowedResources(statements, 'lambda:InvokeFunction').sort()).toEqual(checked.map(([, fn]) => qualified(fn, '*')).sort());
    const denied = invoke
      .filter(({ Effect }) => Effect === 'Deny')
      .flatMap(({ Resource }) => [Resource].flat().map((arn) => JSON.stringify(arn)));
    expect(denied.sort()).toEqual(checked.flatMap(([, fn]) => [qualified(fn, 'live'), qualified(fn, '$LATEST')]).sort());
    expect(checked.map(([name]) => name)).toContain('authorizer');
  });

  it("reads the deployments of this stage's groups only, and reports only to them", () => {
    const groupArn = (actions: string) => allowedResources(statements, actions).filter((arn) => arn.includes(':deploymentgroup:'));
    for (const action of ['codedeploy:GetDeployment', 'codedeploy:PutLifecycleEventHookExecutionStatus']) {
      const arns = groupArn(action);
      expect(arns, action).toHaveLength(release.deploymentGroups.size);
      expect(allowedResources(statements, action), action).toEqual(arns);
      for (const group of release.deploymentGroups.values()) {
        const ref = JSON.stringify({ Ref: logicalId(synthesized, group) });
        expect(
          arns.filter((arn) => arn.includes(ref)),
          `${action} on ${group.node.id}`,
        ).toHaveLength(1);
      }
    }
    // The AppSpec of a deployment is its application's revision.
    const [applicationArn, ...others] = allowedResources(statements, 'codedeploy:GetApplicationRevision');
    expect(others).toEqual([]);
    expect(applicationArn).toContain(':application:');
    expect(applicationArn).toContain(JSON.stringify({ Ref: logicalId(synthesized, release.application) }));
    // Its only other actions: its own log group, and traces.
    const actions = statements.flatMap(({ Action }) => [Action].flat() as string[]);
    expect(new Set(actions)).toEqual(
      new Set([
        'lambda:InvokeFunction',
        'codedeploy:GetDeployment',
        'codedeploy:GetApplicationRevision',
        'codedeploy:PutLifecycleEventHookExecutionStatus',
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'xray:PutTelemetryRecords',
        'xray:PutTraceSegments',
      ]),
    );
  });
});

describe.each([
  ['staging', staging],
  ['prod', prod],
])("on %s, CodeDeploy's role may move this stage's aliases only", (_name, synthesized) => {
  const release = synthesized.stack.release;
  if (!release) throw new Error('no release');
  const released = new Map([...synthesized.stack.functions.operations, ['authorizer', synthesized.stack.functions.authorizer]]);
  const groups = resourcesOf(synthesized.template, 'AWS::CodeDeploy::DeploymentGroup');
  const roleRefs = new Set(groups.map(({ properties }) => JSON.stringify(properties.ServiceRoleArn)));
  const [roleRef] = roleRefs;
  const roleId = (JSON.parse(roleRef ?? 'null') as { 'Fn::GetAtt': [string, string] } | null)?.['Fn::GetAtt'][0] ?? '';
  const statements = policyStatementsOf(synthesized.template, roleId);
  const functionArn = (fn: ApiFunction) => JSON.stringify(functionArnRef(synthesized, fn));
  const liveAliasArn = (fn: ApiFunction) => JSON.stringify({ 'Fn::Join': ['', [functionArnRef(synthesized, fn), ':live']] });

  it('is one role for every group, with no managed policy (AWSCodeDeployRoleForLambdaLimited moves any alias: UpdateAlias on *)', () => {
    expect(roleRefs.size).toBe(1);
    expect(groups).toHaveLength(released.size);
    expect(resourcesById(synthesized)[roleId]?.Properties.ManagedPolicyArns).toBeUndefined();
  });

  it('reads and updates the aliases of the released functions, no other function', () => {
    // Lambda authorizes GetAlias and UpdateAlias on the function's unqualified ARN (the alias is a
    // parameter of the call, not of the resource), so that is the narrowest grant that works.
    const functions = [...released.values()].map(functionArn).sort();
    expect(allowedResources(statements, 'lambda:UpdateAlias').sort()).toEqual(functions);
    expect(allowedResources(statements, 'lambda:GetAlias').sort()).toEqual(functions);
    // GetProvisionedConcurrencyConfig is authorized on the alias itself.
    expect(allowedResources(statements, 'lambda:GetProvisionedConcurrencyConfig').sort()).toEqual(
      [...released.values()].map(liveAliasArn).sort(),
    );
  });

  it("reads the release alarms of this stage's groups, each once", () => {
    const alarms = new Set([...release.groupAlarms.values()].flat());
    const alarmArns = [...alarms].map((alarm) => JSON.stringify({ 'Fn::GetAtt': [logicalId(synthesized, alarm), 'Arn'] }));
    expect(allowedResources(statements, 'cloudwatch:DescribeAlarms').sort()).toEqual(alarmArns.sort());
  });

  it('invokes the hook (which needs no CodeDeployHook_ name), and does nothing else: no SNS, no S3, no wildcard', () => {
    const hookArn = { 'Fn::GetAtt': [logicalId(synthesized, release.preTrafficHook.function), 'Arn'] };
    expect(allowedResources(statements, 'lambda:InvokeFunction')).toEqual(
      [hookArn, { 'Fn::Join': ['', [hookArn, ':*']] }].map((arn) => JSON.stringify(arn)),
    );
    const actions = statements.flatMap(({ Action }) => [Action].flat()).sort();
    expect(new Set(actions)).toEqual(
      new Set([
        'cloudwatch:DescribeAlarms',
        'lambda:GetAlias',
        'lambda:GetProvisionedConcurrencyConfig',
        'lambda:InvokeFunction',
        'lambda:UpdateAlias',
      ]),
    );
    expect(statements.every(({ Effect }) => Effect === 'Allow')).toBe(true);
    expect(JSON.stringify(statements)).not.toContain('"*"');
  });

  it('is in place before any alias update starts (each alias DependsOn the role and its policy)', () => {
    const resources = resourcesById(synthesized);
    const policies = resourcesOf(synthesized.template, 'AWS::IAM::Policy').filter(
      ({ properties }) => JSON.stringify(properties.Roles) === JSON.stringify([{ Ref: roleId }]),
    );
    expect(policies).toHaveLength(1);
    for (const [name, fn] of released) {
      const dependsOn = resources[logicalId(synthesized, fn.alias)]?.DependsOn;
      expect(dependsOn, name).toContain(roleId);
      expect(dependsOn, name).toContain(policies[0]!.logicalId);
    }
  });
});

describe.each([
  ['staging', staging],
  ['prod', prod],
])('on %s, each released alias waits for its deployment group', (_name, synthesized) => {
  it("has the group in the alias's DependsOn, so a changed group (alarms ignored or watched) applies to this release", () => {
    const release = synthesized.stack.release;
    if (!release) throw new Error('no release');
    const resources = resourcesById(synthesized);
    const released = new Map([...synthesized.stack.functions.operations, ['authorizer', synthesized.stack.functions.authorizer]]);
    expect([...release.deploymentGroups.keys()].sort()).toEqual([...released.keys()].sort());
    for (const [name, fn] of released) {
      const group = logicalId(synthesized, release.deploymentGroups.get(name)!);
      expect(resources[logicalId(synthesized, fn.alias)]?.DependsOn, name).toContain(group);
    }
  });
});

describe("the API's 5xx rate leaves out the not-implemented routes' 501s", () => {
  it('in the operational alarm: (5xx − 5xx of those routes) / requests', () => {
    const resources = resourcesById(prod);
    const [restApi] = resourcesOf(prod.template, 'AWS::ApiGateway::RestApi');
    const operational = prod.stack.monitoring.alarms.find((alarm) => alarm.node.id === 'ServerErrorRate')!;
    expect(serverErrorRateMetrics(resources[logicalId(prod, operational)]?.Properties)).toEqual(
      expectedServerErrorRate(restApi?.properties.Name, 300),
    );
  });
});

describe('a stage that chooses the linear release, deployed with -c ignoreReleaseAlarms=true', () => {
  const groups = resourcesOf(linearIgnoringAlarms.template, 'AWS::CodeDeploy::DeploymentGroup');

  it('shifts 10% more every minute', () => {
    // One group per released function: each operation's, and the authorizer's.
    const released = [...handledOperationIds, 'authorizer'];
    expect(groups.map(({ properties }) => properties.DeploymentConfigName)).toEqual(
      released.map(() => 'CodeDeployDefault.LambdaLinear10PercentEvery1Minute'),
    );
  });

  it('ignores the release alarms, which stay listed, while prod (deployed without it) watches them', () => {
    for (const [synthesized, enabled] of [
      [linearIgnoringAlarms, false],
      [prod, true],
    ] as const) {
      const configurations = resourcesOf(synthesized.template, 'AWS::CodeDeploy::DeploymentGroup').map(
        ({ properties }) => properties.AlarmConfiguration as { Enabled: boolean; Alarms: unknown[] },
      );
      // One per released function: each operation's, and the authorizer's.
      expect(configurations).toHaveLength(handledOperationIds.length + 1);
      for (const configuration of configurations) {
        expect(configuration.Enabled).toBe(enabled);
        expect(configuration.Alarms.length).toBeGreaterThan(0);
      }
    }
  });
});
