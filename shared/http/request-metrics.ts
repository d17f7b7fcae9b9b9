/**
 * requestMetrics: CloudWatch metrics in the Embedded Metric Format (Powertools Metrics), written
 * when the answer is known: `Requests` and, for createPet, `PetsCreated` (new pets only, not
 * replays) and `IdempotentReplays`, by service and operation; `Errors` by service, operation and
 * error code. Dimensions stay low-cardinality: never a key id, a request id or a pet id.
 */
import type middy from '@middy/core';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { classifyError } from './error-formatter';
import { PROJECT_NAME, PROJECT_NAME_PASCAL } from '../project';
import { IDEMPOTENT_REPLAYED_HEADER } from './idempotency-key';

export const METRICS_NAMESPACE = PROJECT_NAME_PASCAL;
/** The `service` dimension: the stack sets POWERTOOLS_SERVICE_NAME to the same name. */
export const METRICS_SERVICE = PROJECT_NAME;


/** Powertools' Metrics, telling whether it is switched off by its own rules (env variables). */
class RequestMetrics extends Metrics {
  get switchedOff(): boolean {
    return this.isDisabled();
  }
}

/** The metrics middleware, or none when metrics are switched off: then they cost nothing. */
export const requestMetrics = (operation: string): Array<middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult>> => {
  // One instance, built once: a Metrics costs about 25 µs to build. Requests running at once (the
  // local server) cannot mix, because `write` adds and publishes without awaiting in between.
  const metrics = new RequestMetrics({
    namespace: METRICS_NAMESPACE,
    serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? METRICS_SERVICE,
  });
  const write: middy.MiddlewareFn<APIGatewayProxyEvent, APIGatewayProxyResult> = async (request) => {
    const status = request.response?.statusCode ?? 500;
    const replayed = request.response?.headers?.[IDEMPOTENT_REPLAYED_HEADER] === 'true';
    metrics.addDimension('operation', operation);
    metrics.addMetric('Requests', MetricUnit.Count, 1);
    if (operation === 'createPet' && status === 201) metrics.addMetric(replayed ? 'IdempotentReplays' : 'PetsCreated', MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
    if (request.error) {
      const errors = metrics.singleMetric();
      errors.addDimensions({ operation, errorCode: classifyError(request.error).code });
      errors.addMetric('Errors', MetricUnit.Count, 1);
    }
  };
  // Switched off (POWERTOOLS_METRICS_DISABLED, as the local server runs): no per-request work at all.
  return metrics.switchedOff ? [] : [{ after: write, onError: write }];
};
