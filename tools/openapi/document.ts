/**
 * The OpenAPI 3.1 document, generated: schemas from the shared zod models, paths from the route
 * table, error answers from the error catalogue and the gateway-response table. `npm run openapi`
 * writes it to openapi.json; the local server serves it; a test fails when the file is stale.
 */
import * as z from 'zod/mini';
import { errorCatalogue, errorHeaders, RETRY_AFTER_SECONDS, WWW_AUTHENTICATE, type ErrorCode } from '../../shared/errors';
import { ApiErrorBody, CURSOR_MAX_LENGTH, LIST_LIMIT, MAX_SAFE_ID, NewPet, Pet, PetStatus } from '../../shared/models';
import { MAX_BODY_BYTES } from '../../shared/http/json-body';
import { REQUEST_ID_HEADER } from '../../shared/http/response';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENT_REPLAYED_HEADER } from '../../shared/http/idempotency-key';
import { IDEMPOTENCY_WINDOW_SECONDS } from '../../shared/idempotency';
import { GATEWAY_REQUEST_ID_HEADER } from '../../shared/gateway-responses';
import { BASE_PATH, routes, type OperationId, type Route } from '../../shared/routes';

type Json = Record<string, unknown>;

const schemaOf = (model: z.ZodMiniType, io: 'input' | 'output'): Json => {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(model, { io, target: 'draft-2020-12', unrepresentable: 'any' });
  return schema;
};

const ref = (kind: 'schemas' | 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Error codes each operation can answer, by status. The gateway's and the authorizer's are in every operation. */
const GATEWAY_ERRORS: readonly ErrorCode[] = ['validation_failed', 'unauthorized', 'payload_too_large', 'too_many_requests', 'internal_error', 'service_unavailable'];
const operationErrors: Record<OperationId, readonly ErrorCode[]> = {
  listPets: [...GATEWAY_ERRORS, 'invalid_cursor'],
  createPet: [...GATEWAY_ERRORS, 'invalid_json', 'unsupported_media_type', 'idempotency_in_progress', 'idempotency_key_reused'],
  getPet: [...GATEWAY_ERRORS, 'not_found', 'gone'],
  listStoreOrders: [...GATEWAY_ERRORS, 'not_implemented'],
};

/** What each code means in the answer's description. */
const errorWhen: Record<ErrorCode, string> = {
  invalid_json: 'the body is empty or not valid JSON',
  unsupported_media_type: "the body is not sent as JSON ('Content-Type: application/json')",
  validation_failed: 'a field or parameter is missing, of the wrong type, out of range, unknown or repeated',
  invalid_cursor: 'the cursor is malformed, edited, or from a listing with another status',
  unauthorized: 'no Authorization header, not the Bearer scheme, or an unknown or revoked key',
  not_found: 'no pet with that id',
  gone: 'the operation is past its sunset',
  idempotency_in_progress: 'a request with this `Idempotency-Key` is still running: retry after Retry-After seconds',
  idempotency_key_reused: 'this `Idempotency-Key` was already used with a different body',
  payload_too_large: `the body is over ${MAX_BODY_BYTES} bytes`,
  too_many_requests: 'throttled: retry after Retry-After seconds',
  internal_error: 'an unexpected error; details are logged, not sent',
  not_implemented: 'the operation is listed by the interface but not specified',
  service_unavailable: 'the database is unavailable: retry after Retry-After seconds',
};

const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });

const headers = {
  RequestId: header(`The request id (API Gateway's ${GATEWAY_REQUEST_ID_HEADER}); it appears in the request's log lines.`),
  FunctionRequestId: header(`The same request id, on every answer that reached a function, and on the 501.`),
  CacheControl: header('Always `no-store`.', { type: 'string', const: 'no-store' }),
  ContentTypeOptions: header('Always `nosniff`.', { type: 'string', const: 'nosniff' }),
  Location: header('The new pet: `…/v1/pets/{id}`.', { type: 'string', format: 'uri' }),
  LinkNext: header('`<…/v1/pets?limit=…&cursor=…>; rel="next"` (RFC 8288) while more pets remain; absent on the last page.'),
  LinkSuccessor: header('`<…/v1/pets>; rel="successor-version"`: what replaces this operation.'),
  Deprecation: header('RFC 9745: when the operation was deprecated, as `@<unix seconds>`.', { type: 'string', pattern: '^@\\d+$' }),
  Sunset: header('RFC 8594: when the operation stops working (then 410).', { type: 'string' }),
  RetryAfter: header('Seconds to wait before retrying.', { type: 'string', const: String(RETRY_AFTER_SECONDS) }),
  WwwAuthenticate: header('The scheme the API expects.', { type: 'string', const: WWW_AUTHENTICATE }),
  IdempotentReplayed: header(
    `\`true\` when this is the stored answer of an earlier request with the same \`${IDEMPOTENCY_KEY_HEADER}\` (nothing new was created); absent otherwise.`,
    { type: 'string', const: 'true' },
  ),
};
type HeaderName = keyof typeof headers;

const headerRefs = (required: readonly HeaderName[], optional: readonly HeaderName[] = []) => {
  const wire: Record<HeaderName, string> = {
    RequestId: GATEWAY_REQUEST_ID_HEADER,
    FunctionRequestId: REQUEST_ID_HEADER,
    CacheControl: 'Cache-Control',
    ContentTypeOptions: 'X-Content-Type-Options',
    Location: 'Location',
    LinkNext: 'Link',
    LinkSuccessor: 'Link',
    Deprecation: 'Deprecation',
    Sunset: 'Sunset',
    RetryAfter: 'Retry-After',
    WwwAuthenticate: 'WWW-Authenticate',
    IdempotentReplayed: IDEMPOTENT_REPLAYED_HEADER,
  };
  return Object.fromEntries([
    ...required.map((name) => [wire[name], { ...ref('headers', name), required: true }]),
    ...optional.map((name) => [wire[name], ref('headers', name)]),
  ]);
};

const ALWAYS: HeaderName[] = ['RequestId', 'CacheControl', 'ContentTypeOptions'];

/** The error answer for one status of one operation: the Error shape, its codes, an example of each. */
const errorResponse = (route: Route, status: number, codes: readonly ErrorCode[]) => {
  const deprecation: HeaderName[] = route.deprecated ? ['Deprecation', 'Sunset', 'LinkSuccessor'] : [];
  const extra = new Set<HeaderName>();
  for (const code of codes) {
    const catalogueHeaders = errorHeaders(code);
    if ('WWW-Authenticate' in catalogueHeaders) extra.add('WwwAuthenticate');
    if ('Retry-After' in catalogueHeaders) extra.add('RetryAfter');
  }
  return {
    description: codes.map((code) => `\`${code}\`: ${errorWhen[code]}.`).join(' '),
    // Answers from the function carry the request id and deprecation headers; the gateway's own
    // refusals (401, 429, …) cannot. A 410 always comes from the function.
    headers: headerRefs(
      [...ALWAYS, ...extra, ...(status === 410 ? deprecation : [])],
      ['FunctionRequestId', ...(status === 410 ? [] : deprecation)],
    ),
    content: {
      'application/json': {
        schema: {
          allOf: [
            ref('schemas', 'Error'),
            { properties: { code: { enum: [...codes] }, status: { const: status } } },
          ],
        },
        examples: Object.fromEntries(
          codes.map((code) => [code, { value: { code, message: errorCatalogue[code].message, status } }]),
        ),
      },
    },
  };
};

const successResponses: Record<OperationId, Json> = {
  listPets: {
    200: {
      description: 'One page of pets, in storage order (by creation with a status filter). A bare JSON array.',
      headers: headerRefs([...ALWAYS, 'FunctionRequestId'], ['LinkNext']),
      content: {
        'application/json': {
          schema: { type: 'array', items: ref('schemas', 'Pet'), maxItems: LIST_LIMIT.max },
          example: [{ id: 244383887647238, name: 'Rex', categoryId: 1, status: 'available' }],
        },
      },
    },
  },
  createPet: {
    201: {
      description: 'The pet as stored, with its new id; for a repeated `Idempotency-Key`, the first answer again.',
      headers: headerRefs([...ALWAYS, 'FunctionRequestId', 'Location'], ['IdempotentReplayed']),
      content: { 'application/json': { schema: ref('schemas', 'Pet'), example: { id: 244383887647238, name: 'Rex', categoryId: 1, status: 'available' } } },
    },
  },
  getPet: {
    200: {
      description: 'The pet.',
      headers: headerRefs([...ALWAYS, 'FunctionRequestId', 'Deprecation', 'Sunset', 'LinkSuccessor']),
      content: { 'application/json': { schema: ref('schemas', 'Pet') } },
    },
  },
  listStoreOrders: {},
};

const parameters: Record<OperationId, Json[]> = {
  listPets: [ref('parameters', 'limit'), ref('parameters', 'status'), ref('parameters', 'cursor')],
  createPet: [ref('parameters', 'idempotencyKey')],
  getPet: [ref('parameters', 'petId')],
  listStoreOrders: [],
};

const operation = (route: Route) => {
  const codes = operationErrors[route.operationId as OperationId];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(errorCatalogue[code].status, [...(byStatus.get(errorCatalogue[code].status) ?? []), code]);
  const errors = Object.fromEntries(
    [...byStatus].sort(([a], [b]) => a - b).map(([status, statusCodes]) => [String(status), errorResponse(route, status, statusCodes)]),
  );
  const deprecated = route.deprecated;
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.notImplemented ? 'store' : 'animals'],
    ...(deprecated
      ? {
          deprecated: true,
          description: `Deprecated since ${deprecated.deprecatedAt.toISOString().slice(0, 10)}; use \`GET ${deprecated.successorPath}\`. From ${deprecated.sunsetAt.toUTCString()} (the sunset) it answers 410 \`gone\`.`,
          'x-sunset': deprecated.sunsetAt.toISOString(),
        }
      : {}),
    ...(parameters[route.operationId as OperationId].length > 0 ? { parameters: parameters[route.operationId as OperationId] } : {}),
    ...(route.jsonBody
      ? {
          requestBody: {
            required: true,
            description: `At most ${MAX_BODY_BYTES} bytes. Unknown fields, a client-chosen \`id\` included, are refused.`,
            content: { 'application/json': { schema: ref('schemas', 'NewPet'), example: { name: 'Rex', categoryId: 1 } } },
          },
        }
      : {}),
    responses: { ...successResponses[route.operationId as OperationId], ...errors },
  };
};

const paths = () => {
  const result: Record<string, Record<string, unknown>> = {};
  for (const route of routes) (result[route.path] ??= {})[route.method.toLowerCase()] = operation(route);
  return result;
};

export interface DocumentOptions {
  /** Servers to list first, e.g. the local server serving the document. */
  readonly extraServers?: ReadonlyArray<{ url: string; description: string }>;
}

export const buildOpenApiDocument = ({ extraServers = [] }: DocumentOptions = {}) => ({
  openapi: '3.1.0',
  info: {
    title: 'Pet store API',
    version: '1.0.0',
    description: [
      'List, add and get animals. Every operation needs a bearer API key (`Authorization: Bearer <key>`).',
      'Every answer that is not 2xx has the Error shape, with `status` equal to the HTTP status.',
      'A path or method the API does not have is answered `404` with code `not_found`.',
    ].join('\n\n'),
  },
  servers: [
    ...extraServers,
    {
      url: `https://{apiHost}${BASE_PATH}`,
      description: 'Production: the ApiUrl output of the PetStore-prod stack',
      variables: { apiHost: { default: 'api.pet-store.example.com', description: 'The API host of the prod stage' } },
    },
    {
      url: `https://{apiHost}${BASE_PATH}`,
      description: 'Staging: the ApiUrl output of the PetStore-staging stack',
      variables: { apiHost: { default: 'staging.api.pet-store.example.com', description: 'The API host of the staging stage' } },
    },
    { url: `http://127.0.0.1:3000${BASE_PATH}`, description: 'Local: npm start' },
  ],
  security: [{ bearerKey: [] }],
  tags: [
    { name: 'animals', description: 'The pets of the store.' },
    { name: 'store', description: 'Listed by the interface, not specified: answers 501.' },
  ],
  paths: paths(),
  components: {
    securitySchemes: {
      bearerKey: {
        type: 'http',
        scheme: 'bearer',
        description: 'An API key such as `petstore_…`, created with `npm run keys -- create`. Never in the query string.',
      },
    },
    schemas: {
      Pet: schemaOf(Pet, 'output'),
      NewPet: schemaOf(NewPet, 'input'),
      PetStatus: schemaOf(PetStatus, 'output'),
      Error: {
        ...schemaOf(ApiErrorBody, 'output'),
        properties: {
          code: { type: 'string', enum: Object.keys(errorCatalogue), description: 'What went wrong, for programs.' },
          message: { type: 'string', description: 'What went wrong, for people: names the field or parameter.' },
          status: { type: 'integer', description: 'The HTTP status, repeated.' },
        },
      },
    },
    parameters: {
      limit: {
        name: 'limit',
        in: 'query',
        description: 'How many pets a page holds.',
        schema: { type: 'integer', minimum: LIST_LIMIT.min, maximum: LIST_LIMIT.max, default: LIST_LIMIT.default },
      },
      status: { name: 'status', in: 'query', description: 'Only pets with this status.', schema: ref('schemas', 'PetStatus') },
      cursor: {
        name: 'cursor',
        in: 'query',
        description: 'Where the next page starts: copy it from the `Link rel="next"` header of the same listing. Opaque.',
        schema: { type: 'string', minLength: 1, maxLength: CURSOR_MAX_LENGTH },
      },
      idempotencyKey: {
        name: IDEMPOTENCY_KEY_HEADER,
        in: 'header',
        description: [
          'Makes the create safe to retry (IETF httpapi-idempotency-key draft). The value is an RFC 8941 string',
          '(`"8e03978e-40d5-43e8-bc93-6894a57f9324"`) or the same key bare (letters, digits, `-._~:/+=`), of 1 to',
          `${IDEMPOTENCY_KEY_MAX_LENGTH} characters. For ${IDEMPOTENCY_WINDOW_SECONDS / 3600} hours, the same key from the same API key with the same body`,
          'answers the first 201 again (with `Idempotent-Replayed: true`) and creates nothing; with another body, 422',
          '`idempotency_key_reused`; while the first request still runs, 409 `idempotency_in_progress`. Malformed or repeated: 400.',
        ].join(' '),
        // No example, default or examples here or in the schema: Swagger UI copies any of them into
        // Try-it-out, and every Execute would then replay the first pet. The description shows the format.
        schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH + 2 },
      },
      petId: {
        name: 'petId',
        in: 'path',
        required: true,
        description: 'The pet id: a decimal integer, no sign, no leading zeros.',
        schema: { type: 'integer', minimum: 1, maximum: MAX_SAFE_ID },
      },
    },
    headers,
  },
});
