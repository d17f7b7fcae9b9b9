/**
 * Makers of the resources a request names (shared/routes.ts `succeedsWith`): each makes one by a
 * successful request to the operation the route names (its example request, with any resource
 * that request names made first), and answers the field of the answer that names it. One runs the
 * handlers in process, one calls an API; neither knows what a resource is.
 */
import { exampleEventInit, exampleTarget, succeedingRequest, type ResourceMaker } from '../../shared/request-examples';
import { proxyEvent } from '../../shared/gateway-events';
import { routes, type MadeBy, type Route } from '../../shared/routes';
import { loadHandlerFactories, type HandlerDependencies } from '../../tools/local-server/handler-modules';
import { context } from './events';

const routeNamed = ({ operationId }: MadeBy): Route => {
  const route = (routes as readonly Route[]).find((candidate) => candidate.operationId === operationId);
  if (!route) throw new Error(`succeedsWith names ${operationId}, which no route has`);
  return route;
};

/** The field that names the made resource, from a successful answer, or a clear failure. */
const fieldOf = (madeBy: MadeBy, route: Route, status: number, body: string): string | number => {
  if (status !== route.success?.status) throw new Error(`making a resource: ${madeBy.operationId} answered ${status}: ${body}`);
  const value = (JSON.parse(body) as Record<string, unknown>)[madeBy.field];
  if (typeof value !== 'string' && typeof value !== 'number') throw new Error(`${madeBy.operationId}'s answer has no ${madeBy.field}`);
  return value;
};

/** Makes each resource with the operations' own handlers, built with `dependencies` (use ones past any fault). */
export const handlerResourceMaker = (dependencies: HandlerDependencies): ResourceMaker => {
  const factories = loadHandlerFactories();
  const make: ResourceMaker = async (madeBy) => {
    const route = routeNamed(madeBy);
    const factory = (await factories)[madeBy.operationId as keyof Awaited<typeof factories>];
    const request = await succeedingRequest(route, make);
    const { statusCode, body } = (await factory(dependencies)(proxyEvent(exampleEventInit(request)), context)) as {
      statusCode: number;
      body: string;
    };
    return fieldOf(madeBy, route, statusCode, body);
  };
  return make;
};

/** An API's call, as test/support/local-api.ts gives it (with the API's key). */
type Call = (target: string, init: RequestInit) => Promise<Response>;

/** Makes each resource through an API, by its operations' example requests. */
export const apiResourceMaker = (call: Call): ResourceMaker => {
  const make: ResourceMaker = async (madeBy) => {
    const route = routeNamed(madeBy);
    const request = await succeedingRequest(route, make);
    const response = await call(exampleTarget(request), { method: request.method, headers: request.headers, body: request.body ?? null });
    return fieldOf(madeBy, route, response.status, await response.text());
  };
  return make;
};
