/**
 * The route table's operations, as the tests count and list them: derived, never written out, so
 * that a new operation is expected everywhere at once.
 */
import { exampleRequest, exampleTarget } from '../../shared/request-examples';
import { routes, type HandledOperationId, type HttpMethod, type OperationId, type Route } from '../../shared/routes';

type HandledRoute = Extract<(typeof routes)[number], { handler: string }>;

/** Every operation of the API, in the route table's order. */
export const operationIds: readonly OperationId[] = routes.map((route) => route.operationId);

/** The operations a Lambda function serves (those with a handler), in the route table's order. */
export const handledOperationIds: readonly HandledOperationId[] = routes
  .filter((route): route is HandledRoute => 'handler' in route)
  .map((route) => route.operationId);

/** One request to each operation, below the base path, with a concrete path parameter (shared/request-examples.ts). */
export const requestTo: Readonly<Record<OperationId, readonly [HttpMethod, string]>> = Object.fromEntries(
  routes.map((route: Route) => [route.operationId, [route.method, exampleTarget(exampleRequest(route))] as const]),
) as Record<OperationId, readonly [HttpMethod, string]>;

/** One request to each operation of the API (requestTo's), in the route table's order. */
export const requestsToEveryOperation: ReadonlyArray<readonly [HttpMethod, string]> = operationIds.map((id) => requestTo[id]);
