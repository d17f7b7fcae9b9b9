/** The error catalogue: every code's HTTP status, the Error shape, and the headers some errors carry. */
import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { ApiError, ERROR_MESSAGE_MAX_LENGTH, errorBody, errorCatalogue, errorHeaders, type ErrorCode } from '../../shared/errors';
import { ApiErrorBody } from '../../shared/models';

/** The product's decided status of every error code, written out by hand. */
// The catalogue is the one home of each code's status: a changed one changes the contract, which the contract gate holds.
const codes = Object.keys(errorCatalogue) as ErrorCode[];

describe('error catalogue', () => {
  it.each(codes)('%s answers its status, an HTTP error status, wherever it is made', (code) => {
    const { status } = errorCatalogue[code];
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(600);
    expect(new ApiError(code).status).toBe(status);
    expect(errorBody(code).status).toBe(status);
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

  /** A 429 or a 503 says when to retry; a 401 or 403 carries its challenge; nothing else has a header of its own. */
  const retryable = codes.filter((code) => [429, 503].includes(errorCatalogue[code].status));
  const challenged = codes.filter((code) => [401, 403].includes(errorCatalogue[code].status));

  it.each(retryable)('tells a client of %s when to retry', (code) => {
    const headers = errorHeaders(code);
    expect(Object.keys(headers)).toEqual(['Retry-After']);
    expect(headers['Retry-After']).toMatch(/^[1-9][0-9]*$/);
  });

  it.each(codes.filter((code) => !retryable.includes(code) && !challenged.includes(code)))('%s carries no extra header', (code) => {
    expect(errorHeaders(code)).toEqual({});
  });

  it('hands out a copy: changing it does not change the catalogue', () => {
    errorHeaders('unauthorized')['WWW-Authenticate'] = 'Basic';
    expect(errorHeaders('unauthorized')['WWW-Authenticate']).toBe('Bearer realm="pet-store"');
  });
});
