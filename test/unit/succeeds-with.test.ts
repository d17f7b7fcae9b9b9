/**
 * Each route says what a request to it must name to succeed (shared/routes.ts `succeedsWith`), so
 * that the fault matrix, the throttled-handler test and the benchmark make it rather than assume
 * what a path parameter names: every path parameter of an operation with a function is declared,
 * and each declaration names an operation that succeeds with a body holding the field.
 */
import { describe, expect, it } from 'vitest';
import { docsOf } from '../../shared/route-docs';
import { routes, type Route } from '../../shared/routes';
import { succeedingRequest } from '../../shared/request-examples';
import { noContentRoute } from '../support/fixture-routes';

const handled: Route[] = [...(routes as readonly Route[]), noContentRoute].filter((route) => route.handler !== undefined);
const pathParametersOf = (route: Route) => [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name);

describe('succeedsWith', () => {
  it.each(handled.map((route) => [route.operationId, route] as const))('%s declares each path parameter it names', (_id, route) => {
    expect(Object.keys(route.succeedsWith?.pathParameters ?? {}).sort()).toEqual(pathParametersOf(route).sort());
  });

  it.each(handled.flatMap((route) => Object.values({ ...route.succeedsWith?.pathParameters, ...route.succeedsWith?.body })))(
    'names $operationId, an operation whose success answers a body with $field',
    ({ operationId, field }) => {
      const maker = routes.find((route) => route.operationId === operationId);
      expect(maker && 'success' in maker ? maker.success.model : undefined).toBeDefined();
      // Its example answer is the document's (shared/route-docs.ts), apart from the route table.
      expect(maker && docsOf(maker.operationId).success?.example).toHaveProperty(field);
    },
  );

  it('puts what the maker made where the route names it, and nothing for a route that names nothing', async () => {
    const made: string[] = [];
    const request = await succeedingRequest(noContentRoute, async ({ operationId }) => {
      made.push(operationId);
      return 7;
    });
    expect({ made, path: request.path }).toEqual({ made: ['createPet'], path: noContentRoute.path.replace('{petId}', '7') });
    for (const route of handled.filter((candidate) => candidate.succeedsWith === undefined)) await succeedingRequest(route, async () => 1);
    expect(made).toHaveLength(1);
  });
});
