/**
 * accessLog: one structured line per request, written when the answer is known: request id,
 * operation, status, latency, cold start, the calling key's id, the error code of an error
 * answer and whether a create was replayed. Never a key, a header or a body; for a 5xx, the
 * error's name and a redacted message. The operation's metrics are counted from these lines
 * (infra/constructs/request-metrics.ts), so a field they read is kept here.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { logger, safeErrorFields } from '../logger';
import { errorCodeOf } from './error-formatter';
import { IDEMPOTENT_REPLAYED_HEADER } from './idempotency-key';

/** The message of every access line: what the metric filters match. */
export const ACCESS_LINE_MESSAGE = 'request';

export const accessLog = (operation: string): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => {
  let coldStart = true;
  const startedAt = new WeakMap<object, number>();

  const write: middy.MiddlewareFn<APIGatewayProxyEvent, APIGatewayProxyResult> = async (request) => {
    const status = request.response?.statusCode ?? 500;
    const started = startedAt.get(request) ?? performance.now();
    const errorCode = errorCodeOf(request);
    const line = {
      requestId: request.event.requestContext.requestId,
      lambdaRequestId: request.context.awsRequestId,
      operation,
      status,
      latencyMs: Math.round((performance.now() - started) * 100) / 100,
      coldStart,
      keyId: request.event.requestContext.authorizer?.keyId as string | undefined,
      ...(errorCode ? { errorCode } : {}),
      // A keyed create answered from its record (IdempotentReplays, where others count PetsCreated).
      ...(request.response?.headers?.[IDEMPOTENT_REPLAYED_HEADER] === 'true' ? { replayed: true } : {}),
      ...(status >= 500 && request.error ? safeErrorFields(request.error) : {}),
    };
    coldStart = false;
    if (status >= 500) logger.error(ACCESS_LINE_MESSAGE, line);
    else logger.info(ACCESS_LINE_MESSAGE, line);
  };

  return {
    before: async (request) => {
      startedAt.set(request, performance.now());
    },
    after: write,
    onError: write,
  };
};
