/**
 * requestMetrics: counts every answer (`Requests`) and every error answer (`Errors`, by the code
 * the error formatter answered with), once the answer is known. What an operation did beyond
 * answering (createPet's `PetsCreated`, `IdempotentReplays`) its handler counts where it happens.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { operationMetrics } from '../metrics';
import { errorCodeOf } from './error-formatter';

/** The metrics middleware, or none when metrics are switched off: then they cost nothing. */
export const requestMetrics = (operation: string): Array<middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult>> => {
  const metrics = operationMetrics(operation);
  if (!metrics) return [];
  const write: middy.MiddlewareFn<APIGatewayProxyEvent, APIGatewayProxyResult> = async (request) => {
    metrics.count('Requests');
    const errorCode = errorCodeOf(request);
    if (errorCode) metrics.countError(errorCode);
  };
  return [{ after: write, onError: write }];
};
