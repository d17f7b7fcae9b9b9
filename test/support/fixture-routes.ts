/**
 * Routes of the shape of operations the API does not have, in the fixtures' namespace
 * (test/support/fixture-names.ts): tests hand them to what derives from the route table (the
 * OpenAPI generator, the fault matrix's rows) to check a kind of operation before a real one exists.
 */
import type { Route } from '../../shared/routes';
import { SCOPES } from '../../shared/scopes';
import { fixtureOperationId, fixturePath } from './fixture-names';

/** Consumes the pet its path names and answers 204, no content: the shape of a delete. */
export const noContentRoute = {
  operationId: fixtureOperationId('consumeItem'),
  method: 'POST',
  path: fixturePath('items', '{petId}'),
  summary: 'Consume an item (a fixture)',
  scope: SCOPES[0],
  handler: 'functions/fixture-consume-item.ts',
  request: { path: 'GetPetPath' },
  success: { status: 204, description: 'Consumed: no content.' },
  errors: ['not_found'],
  tableAccess: [{ table: 'pets', actions: ['dynamodb:DeleteItem'] }],
  succeedsWith: { pathParameters: { petId: { operationId: 'createPet', field: 'id' } } },
} as const satisfies Route;
