/**
 * errorFormatter: turns any error into an answer in the Error shape. Client mistakes keep their
 * catalogue code; a database that cannot answer is a 503 with Retry-After; anything else is a
 * 500 whose details go to the log, never to the client. Each error is classified once, here:
 * the access log and the metrics read the same code back with `errorCodeOf`.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError, type ErrorCode } from '../errors';
import { DatabaseUnavailable } from '../dynamodb';
import { errorResponse } from './response';

/** The middy package that threw an error: middy marks its own errors with `cause.package`. */
const middyPackageOf = (error: unknown): string | undefined => {
  if (!(error instanceof Error)) return undefined;
  const thrower = (error.cause as { package?: unknown } | undefined)?.package;
  return typeof thrower === 'string' && thrower.startsWith('@middy/') ? thrower : undefined;
};

/** middy's early timeout (`timeoutEarlyInMillis`): the function ran out of time. */
const isMiddyTimeout = (error: unknown): boolean => middyPackageOf(error) === '@middy/core' && (error as Error).name === 'TimeoutError';

/**
 * The status of a refusal by one of middy's HTTP middlewares (`@middy/http-…`), which throw an
 * HttpError. A `statusCode` on any other error (from an HTTP client, say) says nothing about the
 * client's request.
 */
const middyHttpStatusOf = (error: unknown): number | undefined => {
  if (!middyPackageOf(error)?.startsWith('@middy/http-')) return undefined;
  const { statusCode } = error as { statusCode?: unknown };
  return typeof statusCode === 'number' ? statusCode : undefined;
};

/** The catalogue code for an error, and the client-facing message when it has its own. */
export const classifyError = (error: unknown): { code: ErrorCode; message?: string } => {
  if (error instanceof ApiError) return { code: error.code, message: error.message };
  if (error instanceof DatabaseUnavailable || isMiddyTimeout(error)) return { code: 'service_unavailable' };
  if (middyHttpStatusOf(error) === 413) return { code: 'payload_too_large' };
  return { code: 'internal_error' };
};

// The code each failed request was answered with. A WeakMap keyed by the request, because it is
// typed (middy's `request.internal` is an untyped bag meant for prefetched values), never sent
// (a response header would reach the client), and forgotten with the request.
const errorCodes = new WeakMap<object, ErrorCode>();

/** The code the error formatter answered this request's error with; none when it did not fail. */
export const errorCodeOf = (request: object): ErrorCode | undefined => errorCodes.get(request);

export const errorFormatter = (): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  onError: async (request) => {
    const { code, message } = classifyError(request.error);
    errorCodes.set(request, code);
    request.response = errorResponse(code, message);
  },
});
