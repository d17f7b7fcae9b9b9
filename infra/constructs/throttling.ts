/**
 * Throttling: the access log's 429s counted by plan (never by key), the requests the stage served,
 * and from them the StageThrottled condition: the stage throttle, which every client shares,
 * refusing requests. Metric filters on the access log, since API Gateway publishes no 429 metric.
 */
import { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { FilterPattern, type IFilterPattern, type ILogGroup, type JsonPattern, MetricFilter } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { NO_VALUE, type AccessLogField } from '../../shared/access-log';
import { refusedBeforeThrottles } from '../../shared/gateway-responses';
import { METRICS_NAMESPACE } from '../../shared/metrics';
import { routes, type Route } from '../../shared/routes';
import { tooManyRequestsTypes } from '../log-queries';
import { STAGE_THROTTLE_ALARM_PERIOD_SECONDS, stageThrottleAlarmThreshold, type StageSettings } from '../stages';

/** The metrics the access log's filters publish. */
export const THROTTLING_METRICS = {
  tooManyRequests: 'TooManyRequests',
  quotaExceeded: 'QuotaExceeded',
  served: 'ServedRequests',
} as const;

/** A metric's dimension and the access log field it is read from: the API (stages share the namespace) and the key's plan. */
const API_DIMENSION = 'apiId';
const PLAN_DIMENSION = 'plan';
const field = (name: AccessLogField) => `$.${name}`;

const oneOf = (types: readonly string[]): IFilterPattern =>
  FilterPattern.any(...types.map((type) => FilterPattern.stringValue(field('gatewayResponse'), '=', type)));
const noneOf = (types: readonly string[]): JsonPattern[] =>
  types.map((type) => FilterPattern.stringValue(field('gatewayResponse'), '!=', type));

const throttledTypes = tooManyRequestsTypes('too_many_requests');

/**
 * The keyless routes' paths (`resourcePath` is the route's template): their 429s are their own
 * method throttle's, which replaces the stage's on them, never the stage throttle refusing.
 */
const keylessPaths = routes.flatMap((route: Route) => (route.keyless ? [route.path] : []));
const quotaTypes = tooManyRequestsTypes('quota_exceeded');

/** The access lines each metric counts, in CloudWatch Logs' JSON filter syntax. */
export const throttlingPatterns = {
  /** 429 too_many_requests: a plan's rate or the stage throttle; not a keyless route's own throttle (a health-check flood). */
  tooManyRequests: FilterPattern.all(
    oneOf(throttledTypes) as JsonPattern,
    ...keylessPaths.map((path) => FilterPattern.stringValue(field('resourcePath'), '!=', path)),
  ),
  /** 429 quota_exceeded: a plan's quota. */
  quotaExceeded: oneOf(quotaTypes),
  /**
   * The requests the stage throttle let through: a key's, its plan's (`plan` named), and refused by
   * nothing before or at the throttles. A request without a key or a route, or that the authorizer
   * refused, never reaches the stage throttle (a key's plan, then the stage's limits:
   * https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html),
   * so a keyless flood, cheap as it is, counts for nothing here. CORS preflights (no key) are not
   * counted either, though the stage throttle counts them.
   */
  served: FilterPattern.all(
    FilterPattern.stringValue(field('plan'), '!=', NO_VALUE),
    ...noneOf([...refusedBeforeThrottles(), ...throttledTypes, ...quotaTypes]),
  ),
} as const;

export interface ThrottlingProps {
  readonly accessLogs: ILogGroup;
  /** The REST API's id, which each access line names (`apiId`). */
  readonly restApiId: string;
  /** The stage's plans by name: the `plan` dimension's values. */
  readonly plans: StageSettings['plans'];
  readonly throttle: StageSettings['throttle'];
}

/** A plan dimension's value for a request no key was named on (the gateway refused it before the authorizer named one). */
export const NO_PLAN = NO_VALUE;

export class Throttling extends Construct {
  /** The values the `plan` dimension takes: each plan, and `-` for a request with no key's plan. */
  readonly planValues: readonly string[];
  private readonly restApiId: string;
  private readonly throttle: StageSettings['throttle'];

  constructor(scope: Construct, id: string, props: ThrottlingProps) {
    super(scope, id);
    this.restApiId = props.restApiId;
    this.throttle = props.throttle;
    this.planValues = [...Object.keys(props.plans), NO_PLAN];
    const byPlan = { [API_DIMENSION]: field('apiId'), [PLAN_DIMENSION]: field('plan') };
    const filters = [
      ['TooManyRequestsFilter', throttlingPatterns.tooManyRequests, THROTTLING_METRICS.tooManyRequests, byPlan],
      ['QuotaExceededFilter', throttlingPatterns.quotaExceeded, THROTTLING_METRICS.quotaExceeded, byPlan],
      ['ServedRequestsFilter', throttlingPatterns.served, THROTTLING_METRICS.served, { [API_DIMENSION]: field('apiId') }],
    ] as const;
    for (const [filterId, filterPattern, metricName, dimensions] of filters) {
      new MetricFilter(this, filterId, {
        logGroup: props.accessLogs,
        filterPattern,
        metricNamespace: METRICS_NAMESPACE,
        metricName,
        metricValue: '1',
        dimensions,
      });
    }
  }

  /** One plan's 429s of a kind (`-`: no plan). */
  metric(metricName: (typeof THROTTLING_METRICS)['tooManyRequests' | 'quotaExceeded'], plan: string, period: Duration): Metric {
    return new Metric({
      namespace: METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { [API_DIMENSION]: this.restApiId, [PLAN_DIMENSION]: plan },
      statistic: 'Sum',
      period,
      label: plan === NO_PLAN ? '(no plan)' : plan,
    });
  }

  /**
   * 1 in a minute when the stage throttle refused requests, else 0: some requests were answered
   * too_many_requests, and the stage served keys at least STAGE_THROTTLE_ALARM_SHARE of its rate.
   * The access log cannot tell the stage's THROTTLED from a plan's; the served requests can, since
   * no plan lets one key be served that many (infra/stages.ts checks it) and requests without a
   * key are not served ones: one client at its own limit cannot fire it, however many requests
   * without a key it adds, and quota refusals never count.
   */
  stageThrottled(): MathExpression {
    const period = Duration.seconds(STAGE_THROTTLE_ALARM_PERIOD_SECONDS);
    const throttled = Object.fromEntries(
      this.planValues.map((plan, position) => [`throttled${position}`, this.metric(THROTTLING_METRICS.tooManyRequests, plan, period)]),
    );
    const served = new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: THROTTLING_METRICS.served,
      dimensionsMap: { [API_DIMENSION]: this.restApiId },
      statistic: 'Sum',
      period,
    });
    const throttledSum = Object.keys(throttled)
      .map((id) => `FILL(${id}, 0)`)
      .join(' + ');
    return new MathExpression({
      expression: `IF((${throttledSum}) > 0 AND FILL(served, 0) >= ${stageThrottleAlarmThreshold(this.throttle)}, 1, 0)`,
      usingMetrics: { ...throttled, served },
      period,
      label: 'stage throttle refusing (1) or not (0)',
    });
  }
}
