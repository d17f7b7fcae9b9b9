/** classifyError and errorFormatter: which catalogue code a client gets for each kind of failure. */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DatabaseUnavailable } from '../../shared/dynamodb';
import { ApiError } from '../../shared/errors';
import { classifyError, errorFormatter } from '../../shared/http/error-formatter';

type Request = middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult>;

const context = { awsRequestId: 'lambda-1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

const request = (event: Partial<APIGatewayProxyEvent>): Request =>
  ({ event: event as APIGatewayProxyEvent, context, response: null, error: null, internal: {} }) as Request;

describe('classifyError with middy errors', () => {
  it('maps middy\'s early timeout to service_unavailable', async () => {
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

describe('classifyError with the service\'s own errors', () => {
  it('keeps an ApiError\'s code and message', () => {
    expect(classifyError(new ApiError('not_found', 'No pet has the id 3.'))).toEqual({
      code: 'not_found',
      message: 'No pet has the id 3.',
    });
  });

  it('makes DatabaseUnavailable a service_unavailable', () => {
    expect(classifyError(new DatabaseUnavailable('ECONNREFUSED'))).toEqual({ code: 'service_unavailable' });
  });

  it('makes an HTTP error with status 413 a payload_too_large', () => {
    expect(classifyError(Object.assign(new Error('Payload Too Large'), { statusCode: 413 }))).toEqual({
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
    ['a TimeoutError that is not middy\'s', Object.assign(new Error('slow'), { name: 'TimeoutError' })],
    ['an HTTP error with another status', Object.assign(new Error('Bad Gateway'), { statusCode: 502 })],
    ['a string', 'boom'],
    ['undefined', undefined],
  ])('makes %s an internal_error, with no message for the client', (_, error) => {
    expect(classifyError(error)).toEqual({ code: 'internal_error' });
  });
});

describe('errorFormatter', () => {
  const format = async (error: Error): Promise<APIGatewayProxyResult | null> => {
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

  it('answers a database outage with 503 and Retry-After', async () => {
    const response = await format(new DatabaseUnavailable('ThrottlingException'));
    expect(response?.statusCode).toBe(503);
    expect(response?.headers).toMatchObject({ 'Retry-After': '1', 'Content-Type': 'application/json' });
    expect(JSON.parse(response?.body ?? '')).toMatchObject({ code: 'service_unavailable', status: 503 });
  });
});
