/** classifyError and errorFormatter: which catalogue code a client gets for each kind of failure. */
import middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { normalizeMediaType } from '../../shared/http/json-body';
import { z } from 'zod';
import { DatabaseUnavailable } from '../../shared/dynamodb';
import { ApiError } from '../../shared/errors';
import { classifyError, errorFormatter } from '../../shared/http/error-formatter';

type Request = middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult>;

const context = { awsRequestId: 'lambda-1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

const request = (event: Partial<APIGatewayProxyEvent>): Request =>
  ({ event: event as APIGatewayProxyEvent, context, response: null, error: null, internal: {} }) as Request;

/** The error middy's own JSON body parser throws for this event. */
const bodyParserError = async (event: Partial<APIGatewayProxyEvent>): Promise<unknown> => {
  const before = httpJsonBodyParser().before;
  if (!before) throw new Error('http-json-body-parser has no before');
  try {
    await before(request(event) as Parameters<typeof before>[0]);
  } catch (error) {
    return error;
  }
  throw new Error('expected the body parser to throw');
};

describe('classifyError with middy errors', () => {
  it('maps the body parser\'s 415 for a missing Content-Type to unsupported_media_type', async () => {
    const error = await bodyParserError({ headers: {}, body: '{"name":"Rex"}' });
    expect(error).toMatchObject({ statusCode: 415 });
    expect(classifyError(error)).toEqual({ code: 'unsupported_media_type' });
  });

  it('maps the body parser\'s 415 for a non-JSON Content-Type to unsupported_media_type', async () => {
    const error = await bodyParserError({ headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(classifyError(error)).toEqual({ code: 'unsupported_media_type' });
  });

  it('maps the body parser\'s 415 for malformed JSON to invalid_json', async () => {
    const error = await bodyParserError({ headers: { 'content-type': 'application/json' }, body: '{"name":' });
    expect(error).toMatchObject({ statusCode: 415 });
    expect(classifyError(error)).toEqual({ code: 'invalid_json' });
  });

  it('maps the body parser\'s 415 for a missing body to invalid_json', async () => {
    const error = await bodyParserError({ headers: { 'content-type': 'application/json' }, body: undefined });
    expect(classifyError(error)).toEqual({ code: 'invalid_json' });
  });

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

  it('answers bad JSON with 400 invalid_json', async () => {
    const response = await format(
      (await bodyParserError({ headers: { 'content-type': 'application/json' }, body: '[' })) as Error,
    );
    expect(response?.statusCode).toBe(400);
    expect(JSON.parse(response?.body ?? '')).toMatchObject({ code: 'invalid_json', status: 400 });
  });
});

describe('media types', () => {
  it.each([
    ['application/json ; charset=utf-8', 'application/json; charset=utf-8'],
    ['application/json;', 'application/json'],
    ['Application/JSON;Charset=UTF-8', 'application/json; charset=utf-8'],
    ['application/problem+json', 'application/problem+json'],
    ['text/plain', 'text/plain'],
  ])('normalises %j to %j before the JSON parser checks it', (sent, seen) => {
    expect(normalizeMediaType(sent)).toBe(seen);
  });
});
