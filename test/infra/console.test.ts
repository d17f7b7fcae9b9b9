/**
 * What an operator finds in the console for a stage: the saved Logs Insights queries in the
 * stage's folder over the right log groups, the access log's 429s counted by plan (never by key)
 * and graphed per plan, and the StageThrottled alarm, which only the shared stage throttle fires.
 */
import type { CfnResource, Stack } from 'aws-cdk-lib';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { queryText } from '../../infra/constructs/saved-queries';
import { NO_PLAN, THROTTLING_METRICS, throttlingPatterns } from '../../infra/constructs/throttling';
import { savedQueries, type QueriedLogGroup } from '../../infra/log-queries';
import {
  DEFAULT_STAGE,
  planRequestsPerAlarmPeriod,
  STAGE_THROTTLE_ALARM_PERIOD_SECONDS,
  stageSettings,
  stageThrottleAlarmThreshold,
  stages,
} from '../../infra/stages';
import type { AccessLogLine } from '../../shared/access-log';
import { BASE_PATH, routeOf } from '../../shared/routes';
import { createGateway, type GatewayRequest } from '../../tools/local-server/gateway';
import { matchesFilterPattern } from '../support/logs-insights';
import { expirySweepOf, resourcesOf, synthStage } from './synth';

const logicalIdOf = (stack: Stack, logGroup: ILogGroup) => stack.getLogicalId(logGroup.node.defaultChild as CfnResource);

type MetricDataQuery = {
  Id: string;
  Expression?: string;
  ReturnData?: boolean;
  MetricStat?: {
    Metric: { MetricName: string; Namespace: string; Dimensions: Array<{ Name: string; Value: unknown }> };
    Stat: string;
    Period: number;
  };
};

/**
 * CloudWatch's value of the alarm's expression for the metrics' sums in one period (a metric
 * without a datapoint left out): the subset it uses, IF, AND, FILL, + and comparisons, as JavaScript.
 */
const evaluate = (expression: string, sums: Readonly<Record<string, number>>): number => {
  const javascript = expression
    .replace(/FILL\((\w+), 0\)/g, '(sums.$1 ?? 0)')
    .replace(/ AND /g, ' && ')
    .replace(/^IF\((.*), 1, 0\)$/, '(($1) ? 1 : 0)');
  expect(javascript).not.toMatch(/[A-Z]{2,}\(/); // nothing of CloudWatch's left untranslated
  return (new Function('sums', `return ${javascript};`) as (values: typeof sums) => number)(sums);
};

/** Who sends what, how many a second, for one alarm period. */
interface Sender {
  readonly perSecond: number;
  readonly request: GatewayRequest;
}

const getPets = (headers: ReadonlyArray<readonly [string, string]> = [], url = '/v1/pets'): GatewayRequest => ({
  method: 'GET',
  url,
  headers,
  readBody: async () => Buffer.alloc(0),
  sourceIp: '198.51.100.9',
});
/** A key the authorizer allows, on a plan: its id and plan are named in the token (`fixture_<id>_<plan>`). */
const keyOn = (id: string, plan: string) => getPets([['Authorization', `Bearer fixture_${id}_${plan}`]]);

/**
 * The access lines of one alarm period of traffic through the local gateway, on the stage's
 * throttle and plans: each sender's requests spread evenly over the period, on a clock of their own.
 */
const periodOfLines = async (settings: ReturnType<typeof synthStage>['settings'], senders: readonly Sender[]): Promise<AccessLogLine[]> => {
  let clock = 0;
  const lines: AccessLogLine[] = [];
  const gateway = createGateway({
    handlers: {
      listPets: async () => ({ statusCode: 200, headers: {}, body: '[]' }),
      getHealth: async () => ({ statusCode: 200, headers: {}, body: '{"status":"ok"}' }),
    },
    authorizer: async ({ authorizationToken }) => {
      const [, id, plan] = /^Bearer fixture_(\w+)_([\w-]+)$/.exec(authorizationToken) ?? [];
      if (!id || !plan) throw new Error('Unauthorized');
      return {
        principalId: id,
        usageIdentifierKey: `usage-${id}`,
        policyDocument: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: '*' }] },
        context: { plan },
      };
    },
    throttle: { rate: settings.throttle.rateLimit, burst: settings.throttle.burstLimit },
    plans: settings.plans,
    corsAllowedOrigins: [],
    now: () => new Date(clock),
    accessLog: (line) => void lines.push(line),
  });
  const periodMs = STAGE_THROTTLE_ALARM_PERIOD_SECONDS * 1000;
  const sends = senders
    .flatMap(({ perSecond, request }) =>
      Array.from({ length: perSecond * STAGE_THROTTLE_ALARM_PERIOD_SECONDS }, (_, index) => ({
        at: (index * 1000) / perSecond,
        request,
      })),
    )
    .filter(({ at }) => at < periodMs)
    .sort((a, b) => a.at - b.at);
  for (const { at, request } of sends) {
    clock = at;
    await gateway(request);
  }
  return lines;
};

/** A function's LoggingConfig in the template. */
interface LoggingConfig {
  readonly LogGroup?: { readonly Ref?: string };
  readonly SystemLogLevel?: string;
}

describe.each(['staging', 'prod'])('the %s stack in the console', (stage) => {
  const { stack, template, settings } = synthStage(stage);
  const accessLogId = logicalIdOf(stack, stack.api.accessLogs);
  const restApiId = stack.getLogicalId(stack.api.api.node.defaultChild as CfnResource);

  describe('saved queries', () => {
    const expectedGroups: Record<QueriedLogGroup, string[]> = {
      access: [accessLogId],
      operations: [...stack.functions.operations.values()].map((fn) => logicalIdOf(stack, fn.logGroup)),
      authorizer: [logicalIdOf(stack, stack.functions.authorizer.logGroup)],
      audit: [logicalIdOf(stack, stack.keyAudit.writer.logGroup)],
    };
    const definitions = resourcesOf(template, 'AWS::Logs::QueryDefinition').map(({ properties }) => properties);

    it("are each saved once, in the stage's folder, with their text", () => {
      expect(definitions.map((definition) => definition.Name).sort()).toEqual(
        savedQueries.map((query) => `pet-store-${stage}/${query.name}`).sort(),
      );
      for (const query of savedQueries) {
        expect(definitions.find((definition) => definition.Name === `pet-store-${stage}/${query.name}`)?.QueryString).toBe(
          queryText(query),
        );
      }
    });

    it('read exactly the log groups each names: the access log, the functions, the audit trail', () => {
      for (const query of savedQueries) {
        const definition = definitions.find((candidate) => candidate.Name === `pet-store-${stage}/${query.name}`);
        const read = (definition?.LogGroupNames as Array<{ Ref: string }>).map(({ Ref }) => Ref);
        expect(read.sort(), query.name).toEqual(query.logGroups.flatMap((group) => expectedGroups[group]).sort());
      }
      const byName = (name: string) => definitions.find((definition) => definition.Name === `pet-store-${stage}/${name}`);
      expect(byName('one-request')?.LogGroupNames).toContainEqual({ Ref: accessLogId });
      expect(byName('key-changes')?.LogGroupNames).toEqual([{ Ref: logicalIdOf(stack, stack.keyAudit.writer.logGroup) }]);
    });

    it("read Lambda's platform lines (START, REPORT) only where the function writes them: not where they are turned down to WARN", () => {
      const functions = resourcesOf(template, 'AWS::Lambda::Function').map(({ properties }) => properties.LoggingConfig as LoggingConfig);
      const writerOf = (group: string) => functions.find((config) => config?.LogGroup?.Ref === group);
      const read = savedQueries.flatMap((query) =>
        query.logGroups.flatMap((name) => expectedGroups[name]).map((group) => ({ query, group, writer: writerOf(group) })),
      );
      // Every function on a request's path turns them down (a cost per request) and is read here.
      expect(read.filter(({ writer }) => writer?.SystemLogLevel === 'WARN').length).toBeGreaterThan(0);
      for (const { query, group, writer } of read) {
        if (writer?.SystemLogLevel === 'WARN') expect(queryText(query), `${query.name}: ${group}`).not.toContain('platform.');
      }
    });
  });

  describe("the access log's metric filters", () => {
    const filters = resourcesOf(template, 'AWS::Logs::MetricFilter')
      .map(({ properties }) => properties)
      .filter((filter) => JSON.stringify(filter.LogGroupName) === JSON.stringify({ Ref: accessLogId }));
    const transformation = (metricName: string) =>
      filters.find((filter) => (filter.MetricTransformations as Array<{ MetricName: string }>)[0]?.MetricName === metricName);

    it('count 429s by the plan and the API each line names, never by key, and the requests served by the API', () => {
      expect(filters.map((filter) => filter.FilterPattern).sort()).toEqual(
        [
          throttlingPatterns.tooManyRequests.logPatternString,
          '{ $.gatewayResponse = "QUOTA_EXCEEDED" }',
          throttlingPatterns.served.logPatternString,
        ].sort(),
      );
      for (const [metricName, pattern] of [
        [THROTTLING_METRICS.tooManyRequests, throttlingPatterns.tooManyRequests.logPatternString],
        [THROTTLING_METRICS.quotaExceeded, '{ $.gatewayResponse = "QUOTA_EXCEEDED" }'],
      ] as const) {
        expect(transformation(metricName)).toMatchObject({
          FilterPattern: pattern,
          MetricTransformations: [
            {
              MetricNamespace: 'PetStore',
              MetricName: metricName,
              MetricValue: '1',
              Dimensions: [
                { Key: 'apiId', Value: '$.apiId' },
                { Key: 'plan', Value: '$.plan' },
              ],
            },
          ],
        });
      }
      expect(transformation(THROTTLING_METRICS.served)?.MetricTransformations).toEqual([
        { MetricNamespace: 'PetStore', MetricName: 'ServedRequests', MetricValue: '1', Dimensions: [{ Key: 'apiId', Value: '$.apiId' }] },
      ]);
      expect(JSON.stringify(filters)).not.toMatch(/keyId|principalId|sourceIp|requestId/);
    });

    it("are graphed per plan on the stage's dashboard, this API's only", () => {
      const body = resourcesOf(template, 'AWS::CloudWatch::Dashboard')[0]?.properties.DashboardBody as { 'Fn::Join': [string, unknown[]] };
      const text = body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join('');
      expect(text).toContain('429 too_many_requests by plan (access log)');
      expect(text).toContain('429 quota_exceeded by plan (access log)');
      for (const plan of [...Object.keys(settings.plans), NO_PLAN]) {
        for (const metricName of [THROTTLING_METRICS.tooManyRequests, THROTTLING_METRICS.quotaExceeded]) {
          const series = `["PetStore","${metricName}","apiId","${JSON.stringify({ Ref: restApiId })}","plan","${plan}"`;
          expect(text.includes(series), series).toBe(true);
        }
      }
    });
  });

  describe('the StageThrottled alarm', () => {
    const [alarm] = resourcesOf(template, 'AWS::CloudWatch::Alarm')
      .map(({ properties }) => properties)
      .filter((properties) => String(properties.AlarmDescription).startsWith('The stage throttle'));
    const queries = (alarm?.Metrics ?? []) as MetricDataQuery[];
    const expression = queries.find((query) => query.ReturnData !== false)?.Expression ?? '';
    const threshold = stageThrottleAlarmThreshold(settings.throttle);

    it("is metric math over this API's access-log metrics, per minute, missing data not breaching, to the alarm topic", () => {
      expect(alarm).toMatchObject({
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 3,
        DatapointsToAlarm: 2,
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: expect.stringMatching(/^MonitoringAlarmTopic/) }],
      });
      expect(expression).toBe(
        `IF((${queries
          .filter((query) => query.Id.startsWith('throttled'))
          .map((query) => `FILL(${query.Id}, 0)`)
          .join(' + ')}) > 0 AND FILL(served, 0) >= ${threshold}, 1, 0)`,
      );
      const metrics = queries.flatMap((query) => (query.MetricStat ? [query.MetricStat] : []));
      expect(metrics.map(({ Metric }) => Metric.MetricName).sort()).toEqual(
        [
          ...[...Object.keys(settings.plans), NO_PLAN].map((): string => THROTTLING_METRICS.tooManyRequests),
          THROTTLING_METRICS.served,
        ].sort(),
      );
      for (const { Metric, Stat, Period } of metrics) {
        expect({ Stat, Period }).toEqual({ Stat: 'Sum', Period: STAGE_THROTTLE_ALARM_PERIOD_SECONDS });
        expect(Metric.Dimensions).toContainEqual({ Name: 'apiId', Value: { Ref: restApiId } });
      }
      // Quota refusals are a client's own: never in the alarm.
      expect(JSON.stringify(alarm)).not.toContain(THROTTLING_METRICS.quotaExceeded);
    });

    it("fires for the stage throttle refusing, never for one client at its plan's limit, however hard it pushes", () => {
      const plansById = Object.fromEntries(
        queries.flatMap((query) =>
          query.MetricStat ? [[query.Id, query.MetricStat.Metric.Dimensions.find(({ Name }) => Name === 'plan')?.Value]] : [],
        ),
      );
      const throttledId = (plan: string) => Object.keys(plansById).find((id) => plansById[id] === plan) ?? '';
      // The stage throttle: every client refused some, the stage served its rate.
      const stageRate = settings.throttle.rateLimit * STAGE_THROTTLE_ALARM_PERIOD_SECONDS;
      expect(evaluate(expression, { [throttledId('default')]: 30, [throttledId(NO_PLAN)]: 5, served: stageRate })).toBe(1);
      // One client on each plan at its limit, alone: a flood of its own 429s, and what its plan let through.
      for (const [name, plan] of Object.entries(settings.plans)) {
        expect(evaluate(expression, { [throttledId(name)]: 100_000, served: planRequestsPerAlarmPeriod(plan) }), name).toBe(0);
      }
      // Busy, but nobody throttled; and a minute without requests.
      expect(evaluate(expression, { served: stageRate })).toBe(0);
      expect(evaluate(expression, {})).toBe(0);
    });

    /** The alarm's value for the lines: each of its metrics summed as the stack's metric filters count them. */
    const alarmValue = (lines: readonly AccessLogLine[]): number => {
      const accessFilters = resourcesOf(template, 'AWS::Logs::MetricFilter')
        .map(({ properties }) => properties)
        .filter((filter) => JSON.stringify(filter.LogGroupName) === JSON.stringify({ Ref: accessLogId }));
      const sums: Record<string, number> = {};
      for (const query of queries) {
        if (!query.MetricStat) continue;
        const { MetricName, Dimensions } = query.MetricStat.Metric;
        const plan = Dimensions.find(({ Name }) => Name === 'plan')?.Value;
        const filter = accessFilters.find(
          (candidate) => (candidate.MetricTransformations as Array<{ MetricName: string }>)[0]?.MetricName === MetricName,
        );
        const counted = lines.filter(
          (line) => matchesFilterPattern(String(filter?.FilterPattern), line) && (plan === undefined || line.plan === plan),
        );
        if (counted.length > 0) sums[query.Id] = counted.length;
      }
      return evaluate(expression, sums);
    };
    const largestPlan = Object.entries(settings.plans).sort(([, a], [, b]) => b.rateLimit - a.rateLimit)[0]!;

    it(
      "stays quiet for one client over its plan's rate while requests without a key make up the stage's threshold",
      { timeout: 120_000 },
      async () => {
        const [plan, { rateLimit }] = largestPlan;
        // Requests no authorizer lets through cost the sender nothing: no key, an unknown key, no route.
        const flood = threshold / STAGE_THROTTLE_ALARM_PERIOD_SECONDS;
        const lines = await periodOfLines(settings, [
          { perSecond: Math.ceil(rateLimit * 1.1), request: keyOn('overitsplan', plan) },
          { perSecond: flood / 2, request: getPets() },
          { perSecond: flood / 4, request: getPets([['Authorization', 'Bearer not-a-fixture-key']]) },
          { perSecond: flood / 4, request: getPets([], '/v1/no-such-route') },
        ]);
        const refusedByPlan = lines.filter((line) => line.gatewayResponse === 'THROTTLED' && line.plan === plan);
        expect(refusedByPlan.length).toBeGreaterThan(0);
        expect(lines.filter((line) => line.keyId === '-').length).toBeGreaterThanOrEqual(threshold);
        expect(alarmValue(lines)).toBe(0);
      },
    );

    it(
      "stays quiet while clients within their plans are served the threshold and a flood of health checks passes the health route's own throttle",
      { timeout: 120_000 },
      async () => {
        const [plan, { rateLimit }] = largestPlan;
        const perKey = Math.floor(rateLimit * 0.9);
        // Served at least the threshold, below the stage throttle: only the health route is refused.
        const keys = Math.ceil((settings.throttle.rateLimit * 0.9) / perKey);
        const health = routeOf('getHealth');
        const lines = await periodOfLines(settings, [
          ...Array.from({ length: keys }, (_, index) => ({ perSecond: perKey, request: keyOn(`busy${index}`, plan) })),
          { perSecond: health.keyless.throttle.rateLimit * 10, request: getPets([], `${BASE_PATH}${health.path}`) },
        ]);
        const healthRefused = lines.filter((line) => line.resourcePath === health.path && line.gatewayResponse === 'THROTTLED');
        expect(healthRefused.length).toBeGreaterThan(0);
        expect(lines.filter((line) => line.gatewayResponse === 'THROTTLED' && line.resourcePath !== health.path)).toEqual([]);
        expect(lines.filter((line) => line.plan !== '-').length).toBeGreaterThanOrEqual(threshold);
        expect(alarmValue(lines)).toBe(0);
      },
    );

    it('fires when clients within their plans together pass the stage throttle, which refuses them', { timeout: 120_000 }, async () => {
      const [plan, { rateLimit }] = largestPlan;
      const perKey = Math.floor(rateLimit * 0.9);
      const keys = Math.ceil((settings.throttle.rateLimit * 1.3) / perKey);
      const lines = await periodOfLines(
        settings,
        Array.from({ length: keys }, (_, index) => ({ perSecond: perKey, request: keyOn(`withinplan${index}`, plan) })),
      );
      expect(lines.filter((line) => line.gatewayResponse === 'THROTTLED').length).toBeGreaterThan(0);
      expect(alarmValue(lines)).toBe(1);
    });
  });
});

describe("the stages' plans and the StageThrottled threshold", () => {
  it("leave every plan's minute below the threshold on every stage, so one client cannot reach it", () => {
    for (const stage of [DEFAULT_STAGE, ...Object.keys(stages)]) {
      const settings = stageSettings(stage);
      for (const [name, plan] of Object.entries(settings.plans)) {
        expect(planRequestsPerAlarmPeriod(plan), `${stage}: ${name}`).toBeLessThan(stageThrottleAlarmThreshold(settings.throttle));
      }
    }
  });

  it('refuse at synth a plan one client could fire the alarm with, naming it', () => {
    expect(() => stageSettings('wide', { wide: { plans: { partner: { rateLimit: 90, burstLimit: 100 } } } })).toThrow(
      "Stage 'wide': plan 'partner' lets one key be served 5500 requests a minute, not below 4800 (80% of the stage throttle's 100/s), " +
        'so one client at its limit would fire StageThrottled: lower the plan or raise the throttle.',
    );
  });
});
