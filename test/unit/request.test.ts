/** queryOf: the query as single values, refusing repeats without repeating what the client sent. */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/errors';
import { queryOf } from '../../shared/http/request';

const refusal = (multiValueQueryStringParameters: Record<string, string[]>) => {
  try {
    queryOf({ multiValueQueryStringParameters });
  } catch (error) {
    return error;
  }
  throw new Error('queryOf accepted the query');
};

describe('queryOf', () => {
  it('answers single values, an empty value as the empty string', () => {
    expect({ ...queryOf({ multiValueQueryStringParameters: { limit: ['5'], status: [''] } }) }).toEqual({ limit: '5', status: '' });
  });

  it('refuses a repeated parameter, naming it', () => {
    const error = refusal({ limit: ['1', '2'] });
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toBe("Query parameter 'limit' must not be repeated.");
  });

  it('never repeats an API key sent as a repeated name, nor a page of text', () => {
    const key = 'petstore_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    expect((refusal({ [key]: ['1', '1'] }) as ApiError).message).toBe("Query parameter 'petstore_…' must not be repeated.");
    expect((refusal({ ['x'.repeat(5_000)]: ['1', '1'] }) as ApiError).message).toBe(`Query parameter '${'x'.repeat(64)}…' must not be repeated.`);
  });
});
