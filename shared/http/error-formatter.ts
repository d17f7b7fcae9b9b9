/**
 * errorFormatter: turns any error into an answer in the Error shape. Client mistakes keep their
 * catalogue code; a database that cannot answer is a 503 with Retry-After; anything else is a
 * 500 whose details go to the log, never to the client.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError, type ErrorCode } from '../errors';
import { DatabaseUnavailable } from '../dynamodb';
import { errorResponse } from './response';

interface HttpErrorLike {
  readonly statusCode: number;
  readonly message: string;
  readonly cause?: { package?: string };
}

const isHttpError = (error: unknown): error is HttpErrorLike =>
  error instanceof Error && typeof (error as Partial<HttpErrorLike>).statusCode === 'number';

const isMiddyTimeout = (error: unknown): boolean =>
  error instanceof Error && error.name === 'TimeoutError' && (error.cause as { package?: string })?.package === '@middy/core';

/** The catalogue code for an error, and the client-facing message when it has its own. */
export const classifyError = (error: unknown): { code: ErrorCode; message?: string } => {
  if (error instanceof ApiError) return { code: error.code, message: error.message };
  if (error instanceof DatabaseUnavailable || isMiddyTimeout(error)) return { code: 'service_unavailable' };
  if (isHttpError(error) && error.statusCode === 413) return { code: 'payload_too_large' };
  return { code: 'internal_error' };
};

export const errorFormatter = (): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  onError: async (request) => {
    const { code, message } = classifyError(request.error);
    request.response = errorResponse(code, message);
  },
});
