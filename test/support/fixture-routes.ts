/**
 * Routes of the shape of operations the API does not have, in the fixtures' namespace
 * (test/support/fixture-names.ts): tests hand them to what derives from the route table (the
 * OpenAPI generator, the fault matrix's rows) to check a kind of operation before a real one exists.
 */
import type { RouteDocs } from '../../shared/route-docs';
import type { Route } from '../../shared/routes';
import { SCOPES } from '../../shared/scopes';
import { fixtureOperationId, fixturePath } from './fixture-names';

/** Consumes the pet its path names and answers 204, no content: the shape of a delete. */
export const noContentRoute = {
  operationId: fixtureOperationId('consumeItem'),
  method: 'POST',
  path: fixturePath('items', '{petId}'),
  scope: SCOPES[0],
  handler: 'functions/fixture-consume-item.ts',
  request: { path: 'GetPetPath' },
  success: { status: 204 },
  errors: ['not_found'],
  tableAccess: [{ table: 'pets', actions: ['dynamodb:DeleteItem'] }],
  succeedsWith: { pathParameters: { petId: { operationId: 'createPet', field: 'id' } } },
} as const satisfies Route;

/** Its docs, as shared/route-docs.ts holds the route table's. */
export const noContentRouteDocs = {
  [noContentRoute.operationId]: { summary: 'Consume an item (a fixture)', success: { description: 'Consumed: no content.' } },
} as const satisfies Record<string, RouteDocs>;
