/**
 * queryOf: the query as single values, refusing repeats without repeating what the client sent.
 * publicUrl: the URLs the API writes, on its own address whatever Host the client sent.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/errors';
import { publicUrl, queryOf } from '../../shared/http/request';
import { apiEvent } from '../support/events';

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
    expect((refusal({ ['x'.repeat(5_000)]: ['1', '1'] }) as ApiError).message).toBe(
      `Query parameter '${'x'.repeat(64)}…' must not be repeated.`,
    );
  });
});

/** An event as API Gateway sends it for a request that came through `domainName`, over HTTPS unless `forwardedProto` says otherwise. */
const awsEvent = (domainName: string, headers: Record<string, string>, forwardedProto = 'https') => {
  const event = apiEvent({ headers, forwardedProto });
  return { ...event, requestContext: { ...event.requestContext, domainName } };
};

describe('publicUrl', () => {
  it.each([
    ['the execute-api URL', 'abc123.execute-api.eu-west-1.amazonaws.com'],
    ['a custom domain (base path v1)', 'api.example.com'],
  ])('builds on the domain API Gateway names, through %s, never on the Host header', (_through, domainName) => {
    const event = awsEvent(domainName, { Host: 'evil.example' });
    expect(publicUrl(event, '/pets/7')).toBe(`https://${domainName}/v1/pets/7`);
  });

  it('is https unless the gateway says http: a stray X-Forwarded-Proto is not a scheme', () => {
    expect(publicUrl(awsEvent('api.example.com', {}, 'javascript'), '/pets')).toBe('https://api.example.com/v1/pets');
    expect(publicUrl(awsEvent('127.0.0.1:3000', {}, 'http'), '/pets')).toBe('http://127.0.0.1:3000/v1/pets');
  });

  it('without a domain name, is relative to the root rather than take the Host header', () => {
    const event = awsEvent('', { Host: 'evil.example' });
    expect(publicUrl(event, '/pets')).toBe('/v1/pets');
  });
});
