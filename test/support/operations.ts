/**
 * The route table's operations, as the tests count and list them: derived, never written out, so
 * that a new operation is expected everywhere at once.
 */
import { exampleRequest, exampleTarget } from '../../shared/request-examples';
import { isKeyed, routes, type HandledOperationId, type HttpMethod, type OperationId, type Route } from '../../shared/routes';

type HandledRoute = Extract<(typeof routes)[number], { handler: string }>;

/** Every operation of the API, in the route table's order. */
export const operationIds: readonly OperationId[] = routes.map((route) => route.operationId);

/** The operations behind the authorizer, a key's scope and its plan: every one but the keyless. */
export const keyedOperationIds: readonly OperationId[] = routes.filter((route: Route) => isKeyed(route)).map((route) => route.operationId);

/** The operations any caller reaches without a key (the health route). */
export const keylessOperationIds: readonly OperationId[] = routes
  .filter((route: Route) => !isKeyed(route))
  .map((route) => route.operationId);

/** The operations a Lambda function serves (those with a handler), in the route table's order. */
export const handledOperationIds: readonly HandledOperationId[] = routes
  .filter((route): route is HandledRoute => 'handler' in route)
  .map((route) => route.operationId);

/** A record of one value per operation with a handler, each made from its operationId. */
export const byHandledOperation = <T>(valueOf: (operationId: HandledOperationId) => T): Record<HandledOperationId, T> =>
  Object.fromEntries(handledOperationIds.map((id) => [id, valueOf(id)])) as Record<HandledOperationId, T>;

/** One request to each operation, below the base path, with a concrete path parameter (shared/request-examples.ts). */
export const requestTo: Readonly<Record<OperationId, readonly [HttpMethod, string]>> = Object.fromEntries(
  routes.map((route: Route) => [route.operationId, [route.method, exampleTarget(exampleRequest(route))] as const]),
) as Record<OperationId, readonly [HttpMethod, string]>;

/** One request to each operation of the API (requestTo's), in the route table's order. */
export const requestsToEveryOperation: ReadonlyArray<readonly [HttpMethod, string]> = operationIds.map((id) => requestTo[id]);

/** One request to each operation behind a key, in the route table's order. */
export const requestsToEveryKeyedOperation: ReadonlyArray<readonly [HttpMethod, string]> = keyedOperationIds.map((id) => requestTo[id]);
