/**
 * The route table's operations, as the tests count, list and call them: derived, never written
 * out, so that a new operation is expected everywhere at once.
 */
import { routes, type HandledOperationId, type HttpMethod, type OperationId, type Route } from '../../shared/routes';

type HandledRoute = Extract<(typeof routes)[number], { handler: string }>;

/** Every operation of the API, in the route table's order. */
export const operationIds: readonly OperationId[] = routes.map((route) => route.operationId);

/** The operations a Lambda function serves (those with a handler), in the route table's order. */
export const handledOperationIds: readonly HandledOperationId[] = routes
  .filter((route): route is HandledRoute => 'handler' in route)
  .map((route) => route.operationId);

/** A record of one value per operation with a handler, each made from its operationId. */
export const byHandledOperation = <T>(valueOf: (operationId: HandledOperationId) => T): Record<HandledOperationId, T> =>
  Object.fromEntries(handledOperationIds.map((id) => [id, valueOf(id)])) as Record<HandledOperationId, T>;

/** A path parameter's value when the caller names none: every path parameter of the API is an id, and 42 is one of the right form. */
export const EXAMPLE_PATH_PARAMETER = '42';

/** A request to one operation, as the route describes it: what an HTTP call or an API Gateway event is made of. */
export interface OperationRequest {
  readonly method: HttpMethod;
  /** The route's path template, e.g. `/pets/{petId}` (an event's `resource`). */
  readonly resource: string;
  /** The path below the base path, its parameters filled in. */
  readonly path: string;
  readonly pathParameters: Readonly<Record<string, string>>;
  /** A JSON Content-Type when the operation takes a body; nothing else. */
  readonly headers: Readonly<Record<string, string>>;
  /** The route's example body, as JSON text; null for an operation without a body. */
  readonly body: string | null;
}

/**
 * A valid request to an operation: its method and path, each path parameter from `pathParameters`
 * (42 when not given), and for an operation that takes a body the route's example body.
 */
export const requestOf = (operationId: OperationId, pathParameters: Readonly<Record<string, string>> = {}): OperationRequest => {
  const route: Route = routes.find((candidate) => candidate.operationId === operationId)!;
  const parameters = Object.fromEntries(
    [...route.path.matchAll(/\{([^}/]+)\}/g)].map(([, name]) => [name!, pathParameters[name!] ?? EXAMPLE_PATH_PARAMETER]),
  );
  const takesBody = route.request?.body !== undefined;
  if (takesBody && route.request?.bodyExample === undefined)
    throw new Error(`The route of ${operationId} takes a body but has no bodyExample.`);
  return {
    method: route.method,
    resource: route.path,
    path: route.path.replace(/\{([^}/]+)\}/g, (_match, name: string) => encodeURIComponent(parameters[name]!)),
    pathParameters: parameters,
    headers: takesBody ? { 'Content-Type': 'application/json' } : {},
    body: takesBody ? JSON.stringify(route.request?.bodyExample) : null,
  };
};

/** One request to each operation, below the base path, with a concrete path parameter. */
export const requestTo: Readonly<Record<OperationId, readonly [HttpMethod, string]>> = Object.fromEntries(
  operationIds.map((id) => {
    const { method, path } = requestOf(id);
    return [id, [method, path] as const];
  }),
) as Record<OperationId, readonly [HttpMethod, string]>;

/** One request to each operation of the API (requestTo's), in the route table's order. */
export const requestsToEveryOperation: ReadonlyArray<readonly [HttpMethod, string]> = operationIds.map((id) => requestTo[id]);
