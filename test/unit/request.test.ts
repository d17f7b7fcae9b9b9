/**
 * queryOf: the query as single values, refusing repeats without repeating what the client sent.
 * publicUrl: the URLs the API writes, on its own address whatever Host the client sent.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/errors';
import { parseRequest, publicUrl, queryOf } from '../../shared/http/request';
import { routeOf } from '../../shared/routes';
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

describe('parseRequest', () => {
  it("parses each part with its route's models, typed by the operation", () => {
    const listing = parseRequest(routeOf('listPets'), apiEvent({ query: { status: 'sold', limit: '5' } }));
    const limit: number = listing.query.limit;
    expect(limit).toBe(5);
    expect(listing).toEqual({ path: undefined, query: { limit: 5, status: 'sold' }, body: undefined });
    const petId: number = parseRequest(routeOf('getPet'), apiEvent({ pathParameters: { petId: '42' } })).path.petId;
    expect(petId).toBe(42);
    // The body as the jsonBody middleware leaves it: parsed JSON.
    const created = parseRequest(routeOf('createPet'), { ...apiEvent(), body: { name: 'Rex', categoryId: 1 } as unknown as string });
    expect(created.body).toEqual({ name: 'Rex', categoryId: 1, status: 'available' });
  });

  it('refuses the path before the query, naming the part', () => {
    const event = apiEvent({ pathParameters: { petId: '0' }, query: { unknown: '1' } });
    expect(() => parseRequest(routeOf('getPet'), event)).toThrow("Invalid path parameter 'petId'");
    expect(() => parseRequest(routeOf('getPet'), apiEvent({ pathParameters: { petId: '1' }, query: { unknown: '1' } }))).toThrow(
      "Unknown query parameter 'unknown'.",
    );
  });

  it('reads no part its route has no model for', () => {
    // createPet has no query model: its query is not read, as before.
    const event = { ...apiEvent({ query: { anything: 'x' } }), body: { name: 'Rex', categoryId: 1 } as unknown as string };
    expect(parseRequest(routeOf('createPet'), event).query).toBeUndefined();
  });
});
