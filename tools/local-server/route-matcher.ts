/**
 * Routing as API Gateway does it, for the local gateway: a method and a path to a route of the
 * shared route table, with its path parameters.
 */
import { BASE_PATH, routes, type Route } from '../../shared/routes';

export interface RouteMatch {
  readonly route: Route;
  readonly pathParameters: Record<string, string>;
}

/** Each route's path split into segments once; `parameter` names a `{name}` segment. */
const routeTemplates = routes.map((route: Route) => ({
  route,
  template: route.path.split('/').map((part) => ({ part, parameter: /^\{(\w+)\}$/.exec(part)?.[1] })),
}));

/**
 * Finds the route for a method and a path below the base path. A path that exists with another
 * method is no match: like API Gateway, the API answers both with 404.
 */
export const matchRoute = (method: string, path: string): RouteMatch | undefined => {
  const segments = path.split('/');
  for (const { route, template } of routeTemplates) {
    if (route.method !== method) continue;
    if (template.length !== segments.length) continue;
    const pathParameters: Record<string, string> = {};
    const matches = template.every(({ part, parameter }, index) => {
      const segment = segments[index] ?? '';
      if (parameter === undefined) return part === segment;
      if (segment === '') return false;
      pathParameters[parameter] = safeDecode(segment);
      return true;
    });
    if (matches) return { route, pathParameters };
  }
  return undefined;
};

/**
 * Whether a path can be routed as sent. API Gateway documents no resolving of dot segments or
 * backslashes, so a path with a `.` or `..` segment or a backslash, percent-encoded or not (which
 * a URL parser would resolve, or read as a slash), is refused as naming no route, rather than
 * routed to the path it might have meant; a `{petId}` never holds one either.
 */
export const isRoutedAsSent = (path: string): boolean =>
  !/\\|%5c/i.test(path) && !path.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));

/** The path below the base path (`/v1/pets` → `/pets`), or undefined for a path outside it. */
export const pathBelowBase = (pathname: string): string | undefined =>
  pathname.startsWith(`${BASE_PATH}/`) ? pathname.slice(BASE_PATH.length) : undefined;

const safeDecode = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment; // left as sent: the handler's validation rejects it with a 400
  }
};
