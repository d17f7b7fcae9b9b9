/**
 * One example request to an operation, built from its route: its path with each parameter
 * filled in, its query, and the example body the route gives its model. Tests and benchmarks
 * send these, so that a new operation is requested everywhere without a request written for it.
 */
import type { ProxyEventInit } from './gateway-events';
import { routeDocs, type RouteDocs } from './route-docs';
import type { HttpMethod, MadeBy, Route } from './routes';
import type { TableAccess } from './table-access';
import { tableDefinitions } from './tables';

/** The examples the document gives an operation; none for one the route table does not have (a test's). */
const docsFor = (route: Route): Partial<RouteDocs> => (routeDocs as Readonly<Record<string, RouteDocs>>)[route.operationId] ?? {};

/** The value of every path parameter of an example request, unless one is given: an id of the right form. */
export const EXAMPLE_PATH_PARAMETER = '42';

export interface ExampleRequest {
  readonly method: HttpMethod;
  /** The route's path template (API Gateway's `resource`), below the base path. */
  readonly resource: string;
  /** The path as sent, below the base path, without the query. */
  readonly path: string;
  readonly pathParameters: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  /** The route's example body, as JSON; absent for an operation that takes none. */
  readonly body?: string;
}

export interface ExampleOptions {
  /** The value of each path parameter not in `pathParameters` (default EXAMPLE_PATH_PARAMETER). */
  readonly pathParameter?: string | number;
  /** Path parameters by name. */
  readonly pathParameters?: Readonly<Record<string, string>>;
  /** Body fields in place of the example body's. */
  readonly bodyFields?: Readonly<Record<string, unknown>>;
  readonly query?: Readonly<Record<string, string>>;
}

export const exampleRequest = (
  route: Route,
  { pathParameter = EXAMPLE_PATH_PARAMETER, pathParameters: given = {}, bodyFields = {}, query = {} }: ExampleOptions = {},
): ExampleRequest => {
  const pathParameters = Object.fromEntries(
    [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name = '']) => [name, given[name] ?? String(pathParameter)]),
  );
  const path = route.path.replace(/\{(\w+)\}/g, (_parameter, name: string) => encodeURIComponent(pathParameters[name] ?? ''));
  const exampleBody = (docsFor(route).bodyExample ?? {}) as Record<string, unknown>;
  const body = route.request?.body === undefined ? undefined : JSON.stringify({ ...exampleBody, ...bodyFields });
  return {
    method: route.method,
    resource: route.path,
    path,
    pathParameters,
    query,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body }),
  };
};

/** The path and query of an example request, below the base path, as a client sends it. */
export const exampleTarget = ({ path, query }: ExampleRequest): string => {
  const search = new URLSearchParams(query).toString();
  return search === '' ? path : `${path}?${search}`;
};

/** The API Gateway event of an example request (shared/gateway-events.ts `proxyEvent`'s input). */
export const exampleEventInit = ({ method, resource, path, pathParameters, query, headers, body }: ExampleRequest): ProxyEventInit => ({
  method,
  resource,
  path,
  pathParameters,
  query,
  headers,
  body: body ?? null,
});

/**
 * The query that makes a route use a grant: on an index, the attribute it lists by, with its value
 * in the route's example answer (`GET /pets?status=available` queries the status index); none
 * otherwise.
 */
export const queryUsing = (route: Route, grant: TableAccess): Record<string, string> => {
  if (grant.index === undefined) return {};
  const index = tableDefinitions[grant.table].globalSecondaryIndexes.find(({ indexName }) => indexName === grant.index);
  if (index === undefined) throw new Error(`${route.operationId}: no index ${grant.index} on ${grant.table}`);
  const example: unknown = docsFor(route).success?.example;
  const item = (Array.isArray(example) ? example[0] : example) as Record<string, unknown> | undefined;
  const attribute = ('listedBy' in index ? index.listedBy : undefined) ?? index.partitionKey.name;
  const value = item?.[attribute];
  if (value === undefined) throw new Error(`${route.operationId}: its example answer has no ${attribute}`);
  return { [attribute]: String(value) };
};

/** Makes one resource a request names (routes.ts `MadeBy`), and answers what names it. */
export type ResourceMaker = (madeBy: MadeBy) => Promise<string | number>;

/**
 * An example request that succeeds: each resource the route says it must name (`succeedsWith`)
 * made first by `make`, and named where the route names it, in its path or body.
 */
export const succeedingRequest = async (route: Route, make: ResourceMaker, options: ExampleOptions = {}): Promise<ExampleRequest> => {
  const made = async (wanted: Readonly<Record<string, MadeBy>> = {}) =>
    Object.fromEntries(await Promise.all(Object.entries(wanted).map(async ([name, madeBy]) => [name, await make(madeBy)] as const)));
  const pathParameters = Object.fromEntries(
    Object.entries(await made(route.succeedsWith?.pathParameters)).map(([name, value]) => [name, String(value)]),
  );
  const bodyFields = await made(route.succeedsWith?.body);
  return exampleRequest(route, { ...options, pathParameters: { ...options.pathParameters, ...pathParameters }, bodyFields });
};
