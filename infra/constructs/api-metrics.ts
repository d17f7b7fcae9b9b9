/**
 * API Gateway's metrics of the stage, by the REST API's name, as the operational alarms
 * (Monitoring) and the release alarms (Release) both read them. Per-method metrics exist because
 * the stage turns on detailed metrics (`metricsEnabled`, infra/constructs/pet-store-api.ts).
 */
import type { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { routes, STAGE_NAME, type Route } from '../../shared/routes';

/** A metric of the whole stage. */
export const stageMetric = (apiName: string, metricName: string, statistic: string, period: Duration): Metric =>
  new Metric({ namespace: 'AWS/ApiGateway', metricName, dimensionsMap: { ApiName: apiName, Stage: STAGE_NAME }, statistic, period });

/** A metric of one method of the stage: its HTTP method and its resource path as the route table has it (`/pets/{petId}`). */
export const methodMetric = (
  apiName: string,
  route: Pick<Route, 'method' | 'path'>,
  metricName: string,
  statistic: string,
  period: Duration,
) =>
  new Metric({
    namespace: 'AWS/ApiGateway',
    metricName,
    dimensionsMap: { ApiName: apiName, Method: route.method, Resource: route.path, Stage: STAGE_NAME },
    statistic,
    period,
  });

/** The routes API Gateway itself answers 501 (shared/routes.ts): their 5xx are by design, not a fault. */
const notImplementedRoutes: readonly Route[] = routes.filter((route: Route) => route.notImplemented === true);

/**
 * The share of the stage's requests answered 5xx, leaving out the not-implemented routes' 501s:
 * (5xx − 5xx of those routes) / requests. A client polling one of them would otherwise hold the
 * rate above any threshold, page the operator and roll back every release. A route nobody calls
 * publishes no datapoint, hence FILL; a minute without requests gives no value (not breaching).
 */
export const serverErrorRate = (apiName: string, period: Duration): MathExpression => {
  const notImplemented = Object.fromEntries(
    notImplementedRoutes.map((route, position) => [`notImplemented${position}`, methodMetric(apiName, route, '5XXError', 'Sum', period)]),
  );
  const excluded = Object.keys(notImplemented)
    .map((id) => ` - FILL(${id}, 0)`)
    .join('');
  return new MathExpression({
    expression: `(errors${excluded}) / requests`,
    usingMetrics: {
      errors: stageMetric(apiName, '5XXError', 'Sum', period),
      requests: stageMetric(apiName, 'Count', 'Sum', period),
      ...notImplemented,
    },
    period,
    label: '5xx rate (not-implemented routes left out)',
  });
};
