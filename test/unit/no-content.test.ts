/**
 * A success with no content (204), described by the route table alone: the OpenAPI document gives
 * it no body, the client's operations know it, the common headers give it no Content-Type, and the
 * fault matrix gives each of its requests a pet of its own. Checked with a fixture route, since
 * the API has no such operation.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { SuccessBody } from '../../client/src/types';
import { noContent, withCommonHeaders } from '../../shared/http/response';
import { answersNoContent, routes, type Route } from '../../shared/routes';
import { buildOpenApiDocument } from '../../tools/openapi/document';
import { clientOperations } from '../../tools/openapi/files';
import type { ResourceMaker } from '../../shared/request-examples';
import { faultRows } from '../support/fault-rows';
import { noContentRoute, noContentRouteDocs } from '../support/fixture-routes';

type Json = Record<string, unknown>;
const documentWith = () =>
  buildOpenApiDocument({ routes: [...routes, noContentRoute], docs: noContentRouteDocs }) as unknown as {
    paths: Record<string, Record<string, Json>>;
  };
const responsesOf = (document: ReturnType<typeof documentWith>) =>
  document.paths[noContentRoute.path]?.[noContentRoute.method.toLowerCase()]?.responses as Record<string, Json>;

describe('a success with no content', () => {
  it('is said by the route table', () => {
    expect(answersNoContent(noContentRoute)).toBe(true);
  });

  it('is a 204 without content in the OpenAPI document, with the headers every success has', () => {
    const document = documentWith();
    const responses = responsesOf(document);
    expect(Object.keys(responses).filter((status) => status.startsWith('2'))).toEqual(['204']);
    expect(responses['204']).not.toHaveProperty('content');
    const everySuccess = (id: string) =>
      Object.keys(
        Object.values(document.paths)
          .flatMap((methods) => Object.values(methods))
          .find((op) => op.operationId === id)?.responses ?? {},
      );
    expect(everySuccess(noContentRoute.operationId)).toContain('204');
    const plainHeaders = Object.keys((responses['204'] as { headers: Json }).headers);
    expect(plainHeaders).toEqual(expect.arrayContaining(['Cache-Control', 'X-Content-Type-Options']));
    // The real operations are described as without it.
    expect(Object.fromEntries(Object.entries(document.paths).filter(([path]) => path !== noContentRoute.path))).toEqual(
      (buildOpenApiDocument() as unknown as { paths: Json }).paths,
    );
  });

  it("is known to the client's operations, with its status", () => {
    const generated = clientOperations(JSON.parse(JSON.stringify(documentWith())));
    const operations = JSON.parse(/OPERATIONS = (\{[\s\S]*?\n\}) as const/.exec(generated)?.[1] ?? '{}') as Record<string, Json>;
    expect(operations[noContentRoute.operationId]).toEqual({
      method: noContentRoute.method,
      path: noContentRoute.path,
      success: 204,
      noContent: true,
    });
    for (const route of routes as readonly Route[])
      expect(operations[route.operationId], route.operationId).toEqual({
        method: route.method,
        path: route.path,
        ...(route.success ? { success: route.success.status } : {}),
        ...(answersNoContent(route) ? { noContent: true } : {}),
      });
  });

  it('resolves to nothing in the client, by the generated type of a 204', () => {
    type Generated = { responses: { 204: { headers: Record<string, unknown>; content?: never } } };
    expectTypeOf<SuccessBody<Generated>>().toEqualTypeOf<void>();
    type WithBody = { responses: { 200: { headers: Record<string, unknown>; content: { 'application/json': { id: number } } } } };
    expectTypeOf<SuccessBody<WithBody>>().toEqualTypeOf<{ id: number }>();
  });

  it('carries the common headers and the request id, but no Content-Type', () => {
    const answer = withCommonHeaders(noContent(), 'request-1');
    expect(answer).toEqual({
      statusCode: 204,
      headers: { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'X-Request-Id': 'request-1' },
      body: '',
    });
    expect(withCommonHeaders({ statusCode: 200, body: '[]' }, 'request-2').headers).toMatchObject({ 'Content-Type': 'application/json' });
  });
});

describe('the fault matrix', () => {
  it('gives each request of an operation that names a resource a pet of its own, made before the fault', async () => {
    const rows = faultRows([noContentRoute]);
    expect(rows.map(({ name, operation, table, success }) => ({ name, operation, table, success }))).toEqual([
      { name: noContentRoute.operationId, operation: 'DeleteItem', table: 'pets', success: 204 },
    ]);
    let made = 0;
    const newPet: ResourceMaker = async (madeBy) => {
      expect(madeBy).toEqual(noContentRoute.succeedsWith.pathParameters.petId);
      return (made += 1);
    };
    const [row] = rows;
    const first = await row!.request(newPet);
    const second = await row!.request(newPet);
    expect([first.path, second.path]).toEqual([noContentRoute.path.replace('{petId}', '1'), noContentRoute.path.replace('{petId}', '2')]);
  });

  it('faults every grant of an operation with a function but one used only with a request header its route reads', () => {
    const grantsOf = (route: Route) => (route.handler && route.success ? (route.tableAccess ?? []) : []);
    for (const route of routes as readonly Route[])
      for (const grant of grantsOf(route)) if (grant.onlyWith) expect(route.request?.headers, route.operationId).toContain(grant.onlyWith);
    const faulted = (routes as readonly Route[]).flatMap((route) =>
      grantsOf(route)
        .filter((grant) => grant.onlyWith === undefined)
        .flatMap((grant) => grant.actions.map((action) => `${route.operationId} ${action.replace(/^dynamodb:/, '')} ${grant.table}`)),
    );
    expect(faultRows(routes).map((row) => `${row.operationId} ${row.operation} ${row.table}`)).toEqual(faulted);
  });

  it('sends an operation that names no resource as it is, with nothing made for it', async () => {
    const collection = routes.filter((route: Route) => 'handler' in route && route.succeedsWith === undefined);
    expect(collection.length).toBeGreaterThan(0);
    const made: number[] = [];
    for (const row of faultRows(collection)) await row.request(async () => made.push(1));
    expect(made).toEqual([]);
  });
});
