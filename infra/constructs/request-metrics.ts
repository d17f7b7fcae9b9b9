/**
 * The operations' counts, from their functions' access lines (shared/http/access-log.ts): each
 * answer (`Requests`), each error answer by the code the client got (`Errors`), and for an
 * operation that may replay a keyed create, the pets it created and the answers it replayed. Metric
 * filters on each function's log group rather than a line of Embedded Metric Format per request:
 * the same metrics (namespace, names, dimensions) the dashboard reads, and no log bytes of their
 * own, on the path of every request.
 */
import { Unit } from 'aws-cdk-lib/aws-cloudwatch';
import { FilterPattern, MetricFilter, type JsonPattern } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ACCESS_LINE_MESSAGE } from '../../shared/http/access-log';
import { METRICS_NAMESPACE, SERVICE_DIMENSION, type CountName } from '../../shared/metrics';
import { routeOf, type HandledOperationId, type Route } from '../../shared/routes';
import type { ApiFunction } from './api-function';
import { pascalCase } from './names';

export interface AccessLineMetric {
  readonly metricName: CountName;
  /** The access lines it counts, one each. */
  readonly pattern: JsonPattern;
  /** Its dimensions, each read from the line's field. */
  readonly dimensions: Readonly<Record<string, string>>;
}

/** The metrics an operation's access lines give. */
export const accessLineMetrics = (route: Route): AccessLineMetric[] => {
  const line = [
    FilterPattern.stringValue('$.message', '=', ACCESS_LINE_MESSAGE),
    FilterPattern.stringValue('$.operation', '=', route.operationId),
    FilterPattern.exists(`$.${SERVICE_DIMENSION}`),
  ];
  const byOperation = { [SERVICE_DIMENSION]: `$.${SERVICE_DIMENSION}`, operation: '$.operation' };
  const success = route.success;
  // An operation whose success may say it was replayed (createPet, a keyed create) counts both outcomes.
  const replays = success?.optionalHeaders?.includes('IdempotentReplayed') === true;
  return [
    { metricName: 'Requests', pattern: FilterPattern.all(...line), dimensions: byOperation },
    {
      metricName: 'Errors',
      pattern: FilterPattern.all(...line, FilterPattern.exists('$.errorCode')),
      dimensions: { ...byOperation, errorCode: '$.errorCode' },
    },
    ...(replays && success
      ? [
          {
            metricName: 'PetsCreated' as const,
            pattern: FilterPattern.all(
              ...line,
              FilterPattern.numberValue('$.status', '=', success.status),
              FilterPattern.notExists('$.replayed'),
            ),
            dimensions: byOperation,
          },
          {
            metricName: 'IdempotentReplays' as const,
            pattern: FilterPattern.all(...line, FilterPattern.booleanValue('$.replayed', true)),
            dimensions: byOperation,
          },
        ]
      : []),
  ];
};

export interface RequestMetricsProps {
  /** The API's functions by operationId. */
  readonly functions: ReadonlyMap<HandledOperationId, ApiFunction>;
}

export class RequestMetrics extends Construct {
  constructor(scope: Construct, id: string, props: RequestMetricsProps) {
    super(scope, id);
    for (const [operationId, fn] of props.functions) {
      for (const { metricName, pattern, dimensions } of accessLineMetrics(routeOf(operationId))) {
        new MetricFilter(this, `${pascalCase(operationId)}${metricName}`, {
          logGroup: fn.logGroup,
          metricNamespace: METRICS_NAMESPACE,
          metricName,
          filterPattern: pattern,
          metricValue: '1',
          unit: Unit.COUNT,
          dimensions: { ...dimensions },
        });
      }
    }
  }
}
