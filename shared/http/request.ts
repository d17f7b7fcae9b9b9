/** Reading API Gateway proxy events: an operation's parsed input, query parameters, headers and the public URL. */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import type * as z from 'zod/mini';
import { ApiError } from '../errors';
import { modelOf } from '../model-registry';
import type * as models from '../models';
import { BASE_PATH, type ModelName, type RequestModels, type Route } from '../routes';
import { parseInput, shownName } from '../validation';

/** One part of a route's request as parsed by its model; undefined for a part the route has no model for. */
type ParsedPart<R, Part extends 'path' | 'query' | 'body'> = R extends { readonly request: { readonly [P in Part]: infer Name } }
  ? Name extends ModelName
    ? z.output<(typeof models)[Name]>
    : undefined
  : undefined;

export interface ParsedRequest<R> {
  readonly path: ParsedPart<R, 'path'>;
  readonly query: ParsedPart<R, 'query'>;
  readonly body: ParsedPart<R, 'body'>;
}

/**
 * An operation's input, each part parsed by its route's model, in the order path, query, body (the
 * first refusal is the one answered). A part the route has no model for is not read. The body is
 * the JSON value the jsonBody middleware has parsed.
 */
export const parseRequest = <R extends Route>(
  route: R,
  event: Pick<APIGatewayProxyEvent, 'pathParameters' | 'multiValueQueryStringParameters' | 'body'>,
): ParsedRequest<R> => {
  const parts: RequestModels = route.request ?? {};
  const path: unknown = parts.path ? parseInput(modelOf(parts.path), event.pathParameters ?? {}, 'path') : undefined;
  const query: unknown = parts.query ? parseInput(modelOf(parts.query), queryOf(event), 'query') : undefined;
  const body: unknown = parts.body ? parseInput(modelOf(parts.body), event.body as unknown, 'body') : undefined;
  return { path, query, body } as ParsedRequest<R>;
};

/**
 * The query as single values. API Gateway keeps only the last of repeated parameters in
 * `queryStringParameters`, so repeats are found in the multi-value map and refused.
 */
export const queryOf = (event: Pick<APIGatewayProxyEvent, 'multiValueQueryStringParameters'>): Record<string, string> => {
  // No prototype: `__proto__` is a parameter name like any other, and so refused as unknown.
  const query: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [name, values] of Object.entries(event.multiValueQueryStringParameters ?? {})) {
    if (!values) continue;
    if (values.length > 1) {
      throw new ApiError('validation_failed', `Query parameter '${shownName(name)}' must not be repeated.`);
    }
    query[name] = values[0] ?? '';
  }
  return query;
};

/** A header's value, whatever case the client used. */
export const headerOf = (event: Pick<APIGatewayProxyEvent, 'headers'>, name: string): string | undefined => {
  const wanted = name.toLowerCase();
  // The header normalizer has usually lower-cased the names already: one lookup, no scan.
  const direct = event.headers?.[wanted];
  if (direct !== undefined) return direct;
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted) return value;
  }
  return undefined;
};

/**
 * The absolute URL a client uses for `path` (below the base path), for `Location` and `Link`.
 * The host is the one API Gateway puts in `requestContext.domainName` (the execute-api host, or
 * the custom domain the request came through; both serve the API under the base path), never
 * the request's Host header, which the client chooses. The scheme is https, all API Gateway
 * serves (it sets X-Forwarded-Proto: https), unless X-Forwarded-Proto says exactly http: the
 * local gateway, which serves http, always overwrites that header. Without a domain name the URL
 * is relative to the server's root, still never the client's host.
 */
export const publicUrl = (event: Pick<APIGatewayProxyEvent, 'headers' | 'requestContext'>, path: string): string => {
  const domainName = event.requestContext.domainName;
  if (domainName === undefined || domainName === '') return `${BASE_PATH}${path}`;
  const scheme = headerOf(event, 'x-forwarded-proto') === 'http' ? 'http' : 'https';
  return `${scheme}://${domainName}${BASE_PATH}${path}`;
};
