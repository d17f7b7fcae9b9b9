/** classifyError and errorFormatter: which catalogue code a client gets for each kind of failure. */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DatabaseUnavailable } from '../../shared/dynamodb';
import { ApiError } from '../../shared/errors';
import { classifyError, errorCodeOf, errorFormatter } from '../../shared/http/error-formatter';

type Request = middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult>;

const context = { awsRequestId: 'lambda-1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

const request = (event: Partial<APIGatewayProxyEvent>): Request =>
  ({ event: event as APIGatewayProxyEvent, context, response: null, error: null, internal: {} }) as Request;

describe('classifyError with middy errors', () => {
  it("maps middy's early timeout to service_unavailable", async () => {
    const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult>({ timeoutEarlyInMillis: 5 }).handler(
      () => new Promise<APIGatewayProxyResult>(() => {}),
    );
    const shortContext = { ...context, getRemainingTimeInMillis: () => 10 } as Context;
    const error = await handler({} as APIGatewayProxyEvent, shortContext).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toMatchObject({ name: 'TimeoutError' });
    expect(classifyError(error)).toEqual({ code: 'service_unavailable' });
  });
});

/** An error as middy's HTTP middlewares throw it: createError(status, message, { cause: { package } }). */
const middyHttpError = (statusCode: number, message: string, thrower: string) =>
  Object.assign(new Error(message, { cause: { package: thrower } }), {
    name: 'HttpError',
    statusCode,
    status: statusCode,
    expose: statusCode < 500,
  });

describe("classifyError with the service's own errors", () => {
  it("keeps an ApiError's code and message", () => {
    expect(classifyError(new ApiError('not_found', 'No pet has the id 3.'))).toEqual({
      code: 'not_found',
      message: 'No pet has the id 3.',
    });
  });

  it('makes DatabaseUnavailable a service_unavailable', () => {
    expect(classifyError(new DatabaseUnavailable('ECONNREFUSED'))).toEqual({ code: 'service_unavailable' });
  });

  it("makes a 413 from one of middy's HTTP middlewares a payload_too_large", () => {
    expect(classifyError(middyHttpError(413, 'Payload Too Large', '@middy/http-json-body-parser'))).toEqual({
      code: 'payload_too_large',
    });
  });

  it('makes a ZodError thrown raw (not through parseInput) an internal_error', () => {
    const zodError = z.object({ a: z.string() }).safeParse({}).error;
    expect(zodError).toBeInstanceOf(z.ZodError);
    expect(classifyError(zodError)).toEqual({ code: 'internal_error' });
  });

  it.each([
    ['a plain Error', new Error('boom')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ["a TimeoutError that is not middy's", Object.assign(new Error('slow'), { name: 'TimeoutError' })],
    [
      'a TimeoutError another package marked',
      Object.assign(new Error('slow', { cause: { package: 'some-client' } }), { name: 'TimeoutError' }),
    ],
    ['a middy HTTP error with another status', middyHttpError(502, 'Bad Gateway', '@middy/http-json-body-parser')],
    // Only middy's HTTP middlewares speak of the client's request: an HTTP client's 413, say, does not.
    ['an error with status 413 that middy did not throw', Object.assign(new Error('Payload Too Large'), { statusCode: 413 })],
    ["a 413 marked by a package that is not middy's", middyHttpError(413, 'Payload Too Large', 'http-errors')],
    ['a string', 'boom'],
    ['undefined', undefined],
  ])('makes %s an internal_error, with no message for the client', (_, error) => {
    expect(classifyError(error)).toEqual({ code: 'internal_error' });
  });
});

describe('errorFormatter', () => {
  const format = async (error: Error): Promise<APIGatewayProxyResult | null | undefined> => {
    const onError = errorFormatter().onError;
    if (!onError) throw new Error('errorFormatter has no onError');
    const req = request({});
    req.error = error;
    await onError(req);
    return req.response;
  };

  it('answers an unexpected error with a 500 that does not show its message', async () => {
    const response = await format(new Error('ResourceNotFoundException: table pets-prod not found'));
    expect(response?.statusCode).toBe(500);
    expect(JSON.parse(response?.body ?? '')).toEqual({
      code: 'internal_error',
      message: 'An unexpected error occurred. It has been logged.',
      status: 500,
    });
    expect(response?.body).not.toContain('pets-prod');
  });

  it('records the code it answered with, for the access log and the metrics to read', async () => {
    const onError = errorFormatter().onError;
    if (!onError) throw new Error('errorFormatter has no onError');
    const failed = request({});
    failed.error = new DatabaseUnavailable('ThrottlingException');
    expect(errorCodeOf(failed)).toBeUndefined();
    await onError(failed);
    expect(errorCodeOf(failed)).toBe('service_unavailable');
    expect(errorCodeOf(request({}))).toBeUndefined();
  });

  it('answers a database outage with 503 and Retry-After', async () => {
    const response = await format(new DatabaseUnavailable('ThrottlingException'));
    expect(response?.statusCode).toBe(503);
    expect(response?.headers).toMatchObject({ 'Retry-After': '1', 'Content-Type': 'application/json' });
    expect(JSON.parse(response?.body ?? '')).toMatchObject({ code: 'service_unavailable', status: 503 });
  });
});
