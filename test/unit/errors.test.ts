/** The error catalogue: every code's HTTP status, the Error shape, and the headers some errors carry. */
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { ApiError, ERROR_MESSAGE_MAX_LENGTH, errorBody, errorCatalogue, errorHeaders, type ErrorCode } from '../../shared/errors';
import { ApiErrorBody } from '../../shared/models';

/** The product's decided status of every error code, written out by hand. */
const decidedStatus: Record<ErrorCode, number> = {
  invalid_json: 400,
  unsupported_media_type: 400,
  validation_failed: 400,
  invalid_cursor: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  gone: 410,
  payload_too_large: 413,
  idempotency_key_reused: 422,
  too_many_requests: 429,
  quota_exceeded: 429,
  request_refused: 400,
  internal_error: 500,
  not_implemented: 501,
  service_unavailable: 503,
};
const codes = Object.keys(decidedStatus) as ErrorCode[];

describe('error catalogue', () => {
  it('has exactly the decided codes', () => {
    expect(Object.keys(errorCatalogue).sort()).toEqual([...codes].sort());
  });

  it.each(codes)('%s answers its decided status', (code) => {
    expect(errorCatalogue[code].status).toBe(decidedStatus[code]);
    expect(new ApiError(code).status).toBe(decidedStatus[code]);
    expect(errorBody(code).status).toBe(decidedStatus[code]);
  });

  it.each(codes)('%s has a human message without internals', (code) => {
    const { message } = errorBody(code);
    expect(message.length).toBeGreaterThan(10);
    expect(message).not.toMatch(/arn:|stack|Exception|undefined|\bat \w+ \(/);
  });
});

describe('errorBody', () => {
  it('has the Error shape: code, message and status, and nothing else', () => {
    const body = errorBody('not_found');
    expect(body).toEqual({ code: 'not_found', message: 'No such resource.', status: 404 });
    expect(z.strictObject(ApiErrorBody.shape).safeParse(body).success).toBe(true);
  });

  it('never answers a message longer than openapi.json allows, and cuts it between characters', () => {
    const long = `Invalid field '${'🐕'.repeat(ERROR_MESSAGE_MAX_LENGTH)}'.`;
    const { message } = errorBody('validation_failed', long);
    expect([...message]).toHaveLength(ERROR_MESSAGE_MAX_LENGTH);
    expect(message.startsWith("Invalid field '🐕🐕")).toBe(true);
    expect(message.endsWith('🐕…')).toBe(true);
    expect(z.safeParse(ApiErrorBody, errorBody('validation_failed', long)).success).toBe(true);
  });

  it('uses the given message when there is one', () => {
    expect(errorBody('validation_failed', "Missing required field 'name'.")).toEqual({
      code: 'validation_failed',
      message: "Missing required field 'name'.",
      status: 400,
    });
  });
});

describe('ApiError', () => {
  it('carries its code, status and the catalogue message by default', () => {
    const error = new ApiError('gone');
    expect(error).toBeInstanceOf(Error);
    expect({ name: error.name, code: error.code, status: error.status, message: error.message }).toEqual({
      name: 'ApiError',
      code: 'gone',
      status: 410,
      message: errorCatalogue.gone.message,
    });
  });

  it('keeps a specific message', () => {
    expect(new ApiError('not_found', 'No pet has the id 7.').message).toBe('No pet has the id 7.');
  });
});

describe('errorHeaders', () => {
  it('gives a 401 the Bearer challenge', () => {
    expect(errorHeaders('unauthorized')).toEqual({ 'WWW-Authenticate': 'Bearer realm="pet-store"' });
  });

  it('gives a 403 the Bearer challenge with error="insufficient_scope" (RFC 6750)', () => {
    expect(errorHeaders('forbidden')).toEqual({ 'WWW-Authenticate': 'Bearer realm="pet-store", error="insufficient_scope"' });
  });

  it.each(['service_unavailable', 'too_many_requests', 'quota_exceeded'] as const)('tells a client of %s when to retry', (code) => {
    const headers = errorHeaders(code);
    expect(Object.keys(headers)).toEqual(['Retry-After']);
    expect(headers['Retry-After']).toMatch(/^[1-9][0-9]*$/);
  });

  it.each(
    codes.filter((code) => !['unauthorized', 'forbidden', 'service_unavailable', 'too_many_requests', 'quota_exceeded'].includes(code)),
  )('%s carries no extra header', (code) => {
    expect(errorHeaders(code)).toEqual({});
  });

  it('hands out a copy: changing it does not change the catalogue', () => {
    errorHeaders('unauthorized')['WWW-Authenticate'] = 'Basic';
    expect(errorHeaders('unauthorized')['WWW-Authenticate']).toBe('Bearer realm="pet-store"');
  });
});
