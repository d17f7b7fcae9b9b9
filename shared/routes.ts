/**
 * The route table: every operation of the API, described once and whole. The local server routes
 * by it (tools/local-server/route-matcher.ts); the stack builds its methods, functions, grants and
 * alarms from it; the authorizer's policy, the CORS methods, the handlers' parsing
 * (shared/http/request.ts `parseRequest`) and the OpenAPI document all read it. What the document
 * says of an operation (its summary, description and examples) is in shared/route-docs.ts: every
 * function's bundle holds this table, and none needs that text.
 */
import type * as z from 'zod/mini';
import type { ErrorCode } from './errors';
import type * as models from './models';
import type { Scope } from './scopes';
import type { TableAccess } from './table-access';
import { apiKeysTable, idempotencyTable, petsStatusIndex, petsTable } from './tables';

/** Every route lives under this prefix: the deployed stage is named after it. */
export const BASE_PATH = '/v1';
export const STAGE_NAME = 'v1';

export type HttpMethod = 'GET' | 'POST';

/**
 * A zod model of shared/models.ts, by its name (shared/model-registry.ts `modelOf` gives the model).
 * Routes name their models rather than hold them: the authorizer reads this table for its policy,
 * and its bundle stays without zod.
 */
export type ModelName = {
  [Name in keyof typeof models]: (typeof models)[Name] extends z.ZodMiniType ? Name : never;
}[keyof typeof models];

/** The zod models a request is parsed with, by part; a part without a model is not read. */
export interface RequestModels {
  readonly path?: ModelName;
  readonly query?: ModelName;
  /** The JSON body's model: an operation with one takes a JSON body, one without takes none. */
  readonly body?: ModelName;
  /** The request headers it reads beyond authentication, each parsed by its own reader (shared/http/). */
  readonly headers?: readonly RequestHeader[];
}

/** The request headers an operation may read, by their name in the document's parameters. */
export type RequestHeader = 'idempotencyKey';

/** The response headers an operation's success answer may carry, beyond those every answer has. */
export type SuccessHeader = 'Location' | 'LinkNext' | 'IdempotentReplayed';

interface SuccessCommon {
  readonly requiredHeaders?: readonly SuccessHeader[];
  readonly optionalHeaders?: readonly SuccessHeader[];
}

/** A success that answers a JSON body of its model. */
export interface SuccessWithBody extends SuccessCommon {
  readonly status: 200 | 201;
  /** The body's model. */
  readonly model: ModelName;
}

/** A success that answers no content: 204, no body and no Content-Type (shared/http/response.ts `noContent`). */
export interface NoContent extends SuccessCommon {
  readonly status: 204;
  readonly model?: never;
}

export type SuccessResponse = SuccessWithBody | NoContent;

/** Whether an operation's success answers no content. */
export const answersNoContent = (route: Route): boolean => route.success?.status === 204;

export interface Deprecation {
  /** When the operation was deprecated (RFC 9745 `Deprecation`). */
  readonly deprecatedAt: Date;
  /** When it stops working (RFC 8594 `Sunset`); from then on it answers 410. */
  readonly sunsetAt: Date;
  /** The path that replaces it, relative to the base path. */
  readonly successorPath: string;
}

/** A method's own throttle: requests per second and burst, in place of the stage's (API Gateway's method throttling). */
export interface MethodThrottle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/**
 * What a route called without a key has instead: no authorizer, no usage plan, and so no quota;
 * its own method throttle bounds it. Only for a route a caller that can send no header must reach
 * (a load balancer's or a monitor's health check sends no `Authorization`), and that reveals nothing.
 */
export interface Keyless {
  readonly throttle: MethodThrottle;
}

/**
 * A resource a request names, and how to make one: a successful request to `operationId` (its
 * example request, shared/request-examples.ts) makes it, and `field` of that answer names it.
 */
export interface MadeBy {
  readonly operationId: string;
  readonly field: string;
}

/**
 * What a request must name to succeed, by where it names it: each path parameter, and each body
 * field, that names a resource which must exist. Tests, the smoke checks and the benchmark make
 * those resources this way before the request, rather than assume what a parameter names.
 */
export interface SucceedsWith {
  readonly pathParameters?: Readonly<Record<string, MadeBy>>;
  readonly body?: Readonly<Record<string, MadeBy>>;
}

interface RouteCommon {
  readonly operationId: string;
  readonly method: HttpMethod;
  /** Path template below the base path, with `{name}` parameters. */
  readonly path: string;
  /** The Lambda handler module, relative to the project root; absent for routes with no Lambda. */
  readonly handler?: string;
  /** Listed by the interface but never specified: answered with 501, after authentication. */
  readonly notImplemented?: true;
  readonly request?: RequestModels;
  /** The answer when it succeeds; absent for a not-implemented route. */
  readonly success?: SuccessResponse;
  /**
   * The error codes the operation itself can answer, beyond those of the gateway, the authorizer and
   * the shared middleware (`COMMON_ERRORS`).
   */
  readonly errors: readonly ErrorCode[];
  /** What its function may do on the tables, and nothing more (a test checks the code sends exactly these). */
  readonly tableAccess?: readonly TableAccess[];
  readonly deprecated?: Deprecation;
  /** The resources a request must name to succeed, and how to make each; none: its example request succeeds as it is. */
  readonly succeedsWith?: SucceedsWith;
}

/** A route behind the bearer-key authorizer: every route but a keyless one. */
export interface KeyedRoute extends RouteCommon {
  /** The API key scope the operation needs: the authorizer's policy allows it only with this scope. */
  readonly scope: Scope;
  readonly keyless?: never;
}

/** A route any caller reaches without a key (see Keyless). */
export interface KeylessRoute extends RouteCommon {
  readonly scope?: never;
  readonly keyless: Keyless;
}

export type Route = KeyedRoute | KeylessRoute;

/** Whether a route is behind the authorizer and a usage plan. */
export const isKeyed = (route: Route): route is KeyedRoute => route.keyless === undefined;

/**
 * The error codes every operation can answer: a 400 from its parameters, the authorizer's 401 and
 * 403 (a key that may not call it, or a web ACL), the gateway's 413 and 429s, a 500 and a 503.
 */
export const COMMON_ERRORS = [
  'validation_failed',
  'unauthorized',
  'forbidden',
  'payload_too_large',
  'too_many_requests',
  'quota_exceeded',
  'internal_error',
  'service_unavailable',
] as const satisfies readonly ErrorCode[];

/**
 * The error codes a keyless operation can answer of those: no key means no 401, 403 or quota, and
 * it takes no parameters or body. Its method throttle's 429, a 500 and a 503.
 */
export const KEYLESS_COMMON_ERRORS = ['too_many_requests', 'internal_error', 'service_unavailable'] as const satisfies readonly ErrorCode[];

/** The common error codes of an operation: a keyless one's are fewer. */
export const commonErrorsOf = (route: Route): readonly ErrorCode[] => (isKeyed(route) ? COMMON_ERRORS : KEYLESS_COMMON_ERRORS);

/** The codes a JSON body can be refused with before its model sees it (shared/http/json-body.ts). */
const JSON_BODY_ERRORS = ['invalid_json', 'unsupported_media_type'] as const satisfies readonly ErrorCode[];

export const routes = [
  {
    operationId: 'listPets',
    method: 'GET',
    path: '/pets',
    scope: 'pets:read',
    handler: 'functions/list-pets.ts',
    request: { query: 'ListPetsQuery' },
    success: { status: 200, model: 'Pets', optionalHeaders: ['LinkNext'] },
    errors: ['invalid_cursor'],
    tableAccess: [
      { table: 'pets', actions: ['dynamodb:Scan'] },
      { table: 'pets', index: petsStatusIndex.indexName, actions: ['dynamodb:Query'] },
    ],
  },
  {
    operationId: 'createPet',
    method: 'POST',
    path: '/pets',
    scope: 'pets:write',
    handler: 'functions/create-pet.ts',
    request: { body: 'NewPet', headers: ['idempotencyKey'] },
    success: { status: 201, model: 'Pet', requiredHeaders: ['Location'], optionalHeaders: ['IdempotentReplayed'] },
    errors: [...JSON_BODY_ERRORS, 'idempotency_key_reused'],
    tableAccess: [
      { table: 'pets', actions: ['dynamodb:PutItem'] },
      // A keyed create reserves its pet's id, puts its record, then its pet (shared/idempotency.ts);
      // a failed condition on the record returns the record that holds the key.
      { table: 'idempotency', actions: ['dynamodb:PutItem'], onlyWith: 'idempotencyKey' },
    ],
  },
  {
    operationId: 'getPet',
    method: 'GET',
    path: '/pets/{petId}',
    scope: 'pets:read',
    handler: 'functions/get-pet.ts',
    request: { path: 'GetPetPath', query: 'GetPetQuery' },
    success: { status: 200, model: 'Pet' },
    errors: ['not_found', 'gone'],
    tableAccess: [{ table: 'pets', actions: ['dynamodb:GetItem'] }],
    succeedsWith: { pathParameters: { petId: { operationId: 'createPet', field: 'id' } } },
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
    scope: 'orders:read',
    notImplemented: true,
    errors: ['not_implemented'],
  },
  {
    operationId: 'getHealth',
    method: 'GET',
    path: '/health',
    // For clients' and monitors' health checks, which send no Authorization header. Its throttle is
    // one bucket for every caller, so a flood can get others 429s: Route 53 does not call it, but
    // follows the region's health probe (infra/constructs/health-probe.ts), which reads the same way.
    keyless: { throttle: { rateLimit: 10, burstLimit: 20 } },
    handler: 'functions/health.ts',
    success: { status: 200, model: 'Health' },
    errors: [],
    // One read of a key no item has on each table, naming its key attribute alone: it can read nothing else.
    tableAccess: [
      { table: 'pets', actions: ['dynamodb:GetItem'], attributes: [petsTable.partitionKey.name] },
      { table: 'apiKeys', actions: ['dynamodb:GetItem'], attributes: [apiKeysTable.partitionKey.name] },
      { table: 'idempotency', actions: ['dynamodb:GetItem'], attributes: [idempotencyTable.partitionKey.name] },
    ],
  },
] as const satisfies readonly Route[];

export type OperationId = (typeof routes)[number]['operationId'];
/** The operations a Lambda function serves (those with a handler). */
export type HandledOperationId = Extract<(typeof routes)[number], { handler: string }>['operationId'];

/** The route of one operation, with its own literal type: `routeOf('listPets').request.query` is ListPetsQuery. */
export type RouteOf<Id extends OperationId> = Extract<(typeof routes)[number], { operationId: Id }>;

export const routeOf = <Id extends OperationId>(operationId: Id): RouteOf<Id> => {
  const route = routes.find((candidate): candidate is RouteOf<Id> => candidate.operationId === operationId);
  if (!route) throw new Error(`No route for operation ${operationId}`);
  return route;
};

/** The HTTP methods the API serves, each once, in the table's order: what CORS allows. */
export const routeMethods = (): HttpMethod[] => [...new Set(routes.map((route: Route) => route.method))];
