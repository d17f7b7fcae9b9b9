/**
 * The route table: every operation of the API, defined once. The local server routes by it
 * (tools/local-server/route-matcher.ts), the CDK stack builds its resources and methods from it,
 * and the OpenAPI document lists it.
 */
import type { Scope } from './scopes';

/** Every route lives under this prefix: the deployed stage is named after it. */
export const BASE_PATH = '/v1';
export const STAGE_NAME = 'v1';

export type HttpMethod = 'GET' | 'POST';

export interface Deprecation {
  /** When the operation was deprecated (RFC 9745 `Deprecation`). */
  readonly deprecatedAt: Date;
  /** When it stops working (RFC 8594 `Sunset`); from then on it answers 410. */
  readonly sunsetAt: Date;
  /** The path that replaces it, relative to the base path. */
  readonly successorPath: string;
}

export interface Route {
  readonly operationId: string;
  readonly method: HttpMethod;
  /** Path template below the base path, with `{name}` parameters. */
  readonly path: string;
  readonly summary: string;
  /** The API key scope the operation needs: the authorizer's policy allows it only with this scope. */
  readonly scope: Scope;
  /** The Lambda handler module, relative to the project root; absent for routes with no Lambda. */
  readonly handler?: string;
  /** Listed by the interface but never specified: answered with 501, after authentication. */
  readonly notImplemented?: true;
  /** Whether the request has a JSON body. */
  readonly jsonBody?: true;
  readonly deprecated?: Deprecation;
}

export const routes = [
  {
    operationId: 'listPets',
    method: 'GET',
    path: '/pets',
    summary: 'List all animals',
    scope: 'pets:read',
    handler: 'functions/list-pets.ts',
  },
  {
    operationId: 'createPet',
    method: 'POST',
    path: '/pets',
    summary: 'Add an animal',
    scope: 'pets:write',
    handler: 'functions/create-pet.ts',
    jsonBody: true,
  },
  {
    operationId: 'getPet',
    method: 'GET',
    path: '/pets/{petId}',
    summary: 'Get an animal (deprecated: use GET /pets with a status filter)',
    scope: 'pets:read',
    handler: 'functions/get-pet.ts',
    deprecated: {
      deprecatedAt: new Date('2026-01-01T00:00:00Z'),
      sunsetAt: new Date('2030-12-05T00:00:00Z'),
      successorPath: '/pets',
    },
  },
  {
    operationId: 'listStoreOrders',
    method: 'GET',
    path: '/store/orders',
    summary: 'List store orders (not implemented)',
    scope: 'orders:read',
    notImplemented: true,
  },
] as const satisfies readonly Route[];

export type OperationId = (typeof routes)[number]['operationId'];
/** The operations a Lambda function serves (those with a handler). */
export type HandledOperationId = Extract<(typeof routes)[number], { handler: string }>['operationId'];

export const routeOf = (operationId: OperationId): Route => {
  const route = routes.find((candidate) => candidate.operationId === operationId);
  if (!route) throw new Error(`No route for operation ${operationId}`);
  return route;
};
