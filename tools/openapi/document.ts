/**
 * The OpenAPI 3.1 document, generated: schemas from the shared zod models, paths from the route
 * table, error answers from the error catalogue and the gateway-response table. `npm run openapi`
 * writes it to generated/openapi.json; the local server serves it; a test fails when the file is stale.
 */
import * as z from 'zod/mini';
import { SCOPES } from '../../shared/scopes';
import {
  errorCatalogue,
  errorHeaders,
  QUOTA_RETRY_AFTER_SECONDS,
  RETRY_AFTER_SECONDS,
  WWW_AUTHENTICATE,
  WWW_AUTHENTICATE_INSUFFICIENT_SCOPE,
  type ErrorCode,
} from '../../shared/errors';
import { ApiErrorBody, CURSOR_MAX_LENGTH, LIST_LIMIT, MAX_SAFE_ID, NewPet, Pet, PetStatus } from '../../shared/models';
import { MAX_BODY_BYTES } from '../../shared/http/json-body';
import { link, REQUEST_ID_HEADER } from '../../shared/http/response';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH, IDEMPOTENT_REPLAYED_HEADER } from '../../shared/http/idempotency-key';
import { IDEMPOTENCY_WINDOW_SECONDS } from '../../shared/idempotency';
import { GATEWAY_REQUEST_ID_HEADER } from '../../shared/gateway-responses';
import { modelOf } from '../../shared/model-registry';
import { BASE_PATH, commonErrorsOf, isKeyed, routes, type ModelName, type Route, type SuccessHeader } from '../../shared/routes';
import { errorDocs } from '../../shared/error-docs';
import { resourceOf, routeDocs, tagDocs, type RouteDocs, type TagDocs } from '../../shared/route-docs';
import { stackName } from '../../shared/stack';
import { QUOTA_PERIOD_SECONDS, RATE_LIMIT_POLICY_HEADER } from '../../shared/plan-policy';
import { PLAN_NAME_PATTERN } from '../../shared/plans';

type Json = Record<string, unknown>;

const schemaOf = (model: z.ZodMiniType, io: 'input' | 'output'): Json => {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(model, { io, target: 'draft-2020-12', unrepresentable: 'any' });
  return schema;
};

const ref = (kind: 'schemas' | 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

const header = (description: string, schema: Json) => ({ description, schema });

/**
 * The longest origin a URL the API writes can start with: https, a DNS name (at most 253
 * characters, RFC 1035) and a port. The bounds of `Location` and `Link` follow from it.
 */
const LONGEST_ORIGIN = `https://${'a'.repeat(253)}:65535`;
const longestUrl = (pathBelowBase: string) => `${LONGEST_ORIGIN}${BASE_PATH}${pathBelowBase}`;
const longestNextLink = link(
  longestUrl(
    `/pets?${new URLSearchParams({
      limit: String(LIST_LIMIT.max),
      status: PetStatus.options.reduce((longest, status) => (status.length > longest.length ? status : longest)),
      cursor: 'a'.repeat(CURSOR_MAX_LENGTH),
    })}`,
  ),
  'next',
);
const longestSuccessorLink = Math.max(
  ...routes.flatMap((route: Route) =>
    route.deprecated ? [link(longestUrl(route.deprecated.successorPath), 'successor-version').length] : [],
  ),
);
/** A link to an absolute URL with one relation type (RFC 8288). */
const linkPattern = (rel: string) => `^<https?://[^<>\\s]+>; rel="${rel}"$`;
/** A plan's `RateLimit-Policy`: its rate, then its quota if it has one (shared/plan-policy.ts writes it). */
const planName = PLAN_NAME_PATTERN.source.replace(/^\^|\$$/g, '');
const rateLimitPolicyPattern =
  `^"${planName}";q=\\d{1,16};w=\\d{1,16}` + `(, "${planName}-quota";q=\\d{1,16};w=(${Object.values(QUOTA_PERIOD_SECONDS).join('|')}))?$`;
/** The longest: a plan name of 32 characters, and every number of 16 digits (the most a JSON number holds exactly). */
const longestRateLimitPolicy = ((name: string, digits: string) =>
  `"${name}";q=${digits};w=${digits}, "${name}-quota";q=${digits};w=${Math.max(...Object.values(QUOTA_PERIOD_SECONDS))}`)(
  'a'.repeat(32),
  '9'.repeat(16),
);
/** The longest `Location` a create answers: its own path, then the new id (the route table's creates, whichever). */
const longestLocation = Math.max(
  ...routes.flatMap((route: Route) =>
    route.success?.requiredHeaders?.includes('Location') ? [longestUrl(`${route.path}/${MAX_SAFE_ID}`).length] : [],
  ),
);
/** The request ids API Gateway (and the local server) give: UUIDs. */
const requestId = { type: 'string', format: 'uuid', maxLength: 36 };

const headers = {
  RequestId: header(`The request id (API Gateway's ${GATEWAY_REQUEST_ID_HEADER}); it appears in the request's log lines.`, requestId),
  FunctionRequestId: header(`The same request id, on every answer that reached a function, and on the 501.`, requestId),
  CacheControl: header('Always `no-store`.', { type: 'string', const: 'no-store' }),
  ContentTypeOptions: header('Always `nosniff`.', { type: 'string', const: 'nosniff' }),
  Location: header("What was created: the create's path and its id (`…/v1/pets/{id}`).", {
    type: 'string',
    format: 'uri',
    maxLength: longestLocation,
  }),
  LinkNext: header('`<…/v1/pets?limit=…&cursor=…>; rel="next"` (RFC 8288) while more pets remain; absent on the last page.', {
    type: 'string',
    pattern: linkPattern('next'),
    maxLength: longestNextLink.length,
  }),
  LinkSuccessor: header('`<…/v1/pets>; rel="successor-version"`: what replaces this operation.', {
    type: 'string',
    pattern: linkPattern('successor-version'),
    maxLength: longestSuccessorLink,
  }),
  // An RFC 8941 sf-date: `@` and an integer of at most 15 digits.
  Deprecation: header('RFC 9745: when the operation was deprecated, as `@<unix seconds>`.', {
    type: 'string',
    pattern: '^@\\d{1,15}$',
    maxLength: 16,
  }),
  // An HTTP date (RFC 9110 IMF-fixdate), always 29 characters.
  Sunset: header('RFC 8594: when the operation stops working (then 410).', {
    type: 'string',
    pattern: '^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \\d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \\d{4} \\d{2}:\\d{2}:\\d{2} GMT$',
    maxLength: 29,
  }),
  RetryAfter: header(
    `Seconds to wait before retrying: ${RETRY_AFTER_SECONDS} when throttled or when the service is unavailable; ` +
      `${QUOTA_RETRY_AFTER_SECONDS} when the quota is used up (a fixed hint: the quota starts again with its period).`,
    {
      type: 'string',
      enum: [String(RETRY_AFTER_SECONDS), String(QUOTA_RETRY_AFTER_SECONDS)],
      maxLength: Math.max(String(RETRY_AFTER_SECONDS).length, String(QUOTA_RETRY_AFTER_SECONDS).length),
    },
  ),
  WwwAuthenticate: header('The scheme the API expects.', { type: 'string', const: WWW_AUTHENTICATE }),
  WwwAuthenticateInsufficientScope: header('RFC 6750: the key is valid, but its scopes do not cover the operation.', {
    type: 'string',
    const: WWW_AUTHENTICATE_INSUFFICIENT_SCOPE,
  }),
  RateLimitPolicy: header(
    'The API key\'s usage plan (IETF httpapi ratelimit-headers draft): `"NAME";q=<requests>;w=<seconds>` for its rate, ' +
      'and `"NAME-quota";q=<requests>;w=<seconds>` for its quota if it has one (a day is 86400, a week 604800, a month 2592000). ' +
      'Over the rate: 429 `too_many_requests`; over the quota: 429 `quota_exceeded`. No remaining count is given.',
    { type: 'string', pattern: rateLimitPolicyPattern, maxLength: longestRateLimitPolicy.length },
  ),
  IdempotentReplayed: header(
    `\`true\` when this is the stored answer of an earlier request with the same \`${IDEMPOTENCY_KEY_HEADER}\` ` +
      '(nothing new was created); absent otherwise.',
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
    WwwAuthenticateInsufficientScope: 'WWW-Authenticate',
    IdempotentReplayed: IDEMPOTENT_REPLAYED_HEADER,
    RateLimitPolicy: RATE_LIMIT_POLICY_HEADER,
  };
  return Object.fromEntries([
    ...required.map((name) => [wire[name], { ...ref('headers', name), required: true }]),
    ...optional.map((name) => [wire[name], ref('headers', name)]),
  ]);
};

const ALWAYS: HeaderName[] = ['RequestId', 'CacheControl', 'ContentTypeOptions'];

/** When an operation answers a code: a 403 names the operation's scope. */
const whenFor = (route: Route, code: ErrorCode): string =>
  code === 'forbidden' ? `${errorDocs[code]} (it needs the \`${route.scope}\` scope)` : errorDocs[code];

/** The error answer for one status of one operation: the Error shape, its codes, an example of each. */
const errorResponse = (route: Route, status: number, codes: readonly ErrorCode[]) => {
  const deprecation: HeaderName[] = route.deprecated ? ['Deprecation', 'Sunset', 'LinkSuccessor'] : [];
  const extra = new Set<HeaderName>();
  for (const code of codes) {
    const catalogueHeaders = errorHeaders(code);
    const challenge = catalogueHeaders['WWW-Authenticate'];
    if (challenge !== undefined) extra.add(challenge === WWW_AUTHENTICATE ? 'WwwAuthenticate' : 'WwwAuthenticateInsufficientScope');
    if ('Retry-After' in catalogueHeaders) extra.add('RetryAfter');
  }
  return {
    description: codes.map((code) => `\`${code}\`: ${whenFor(route, code)}.`).join(' '),
    // Answers from the function carry the request id and deprecation headers; the gateway's own
    // refusals (401, 429, …) cannot. A 410 always comes from the function.
    headers: headerRefs(
      [...ALWAYS, ...extra, ...(status === 410 ? deprecation : [])],
      ['FunctionRequestId', ...(status === 410 ? [] : deprecation)],
    ),
    content: {
      'application/json': {
        schema: {
          allOf: [ref('schemas', 'Error'), { properties: { code: { enum: [...codes] }, status: { const: status } } }],
        },
        examples: Object.fromEntries(codes.map((code) => [code, { value: { code, message: errorCatalogue[code].message, status } }])),
      },
    },
  };
};

/** The models the document names as components, by model: a body of one of them is a reference to it. */
const namedSchemas = new Map<z.ZodMiniType, string>([
  [Pet, 'Pet'],
  [NewPet, 'NewPet'],
]);

/** A body's schema from its model: a named model by reference, an array of one with its items by reference. */
const bodySchema = (model: z.ZodMiniType, io: 'input' | 'output'): Json => {
  const name = namedSchemas.get(model);
  if (name !== undefined) return ref('schemas', name);
  if (model instanceof z.ZodMiniArray) {
    const items = namedSchemas.get(model.def.element as z.ZodMiniType);
    if (items !== undefined) {
      const { type, items: _inline, ...rest } = schemaOf(model, io);
      return { type, items: ref('schemas', items), ...rest };
    }
  }
  return schemaOf(model, io);
};

/** The success answer, from the route: its status, headers and body model; no content for a 204. */
const successResponse = (route: Route, docs: RouteDocs): Json => {
  const success = route.success;
  if (!success) return {};
  if (!docs.success) throw new Error(`${route.operationId}: its docs (shared/route-docs.ts) do not describe its success answer`);
  const deprecation: HeaderName[] = route.deprecated ? ['Deprecation', 'Sunset', 'LinkSuccessor'] : [];
  const own = (names: readonly SuccessHeader[] = []): HeaderName[] => [...names];
  return {
    [success.status]: {
      description: docs.success.description,
      headers: headerRefs(
        [...ALWAYS, 'FunctionRequestId', ...own(success.requiredHeaders), ...deprecation],
        // A keyless operation has no plan to state.
        [...own(success.optionalHeaders), ...(isKeyed(route) ? (['RateLimitPolicy'] as const) : [])],
      ),
      ...(success.model === undefined
        ? {}
        : {
            content: {
              'application/json': {
                schema: bodySchema(modelOf(success.model), 'output'),
                ...(docs.success.example === undefined ? {} : { example: docs.success.example }),
              },
            },
          }),
    },
  };
};

/** Every parameter an operation can take, by the name its model or route gives it. */
const parameterComponents: Record<string, Json> = {
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
      `${IDEMPOTENCY_KEY_MAX_LENGTH} characters. For ${IDEMPOTENCY_WINDOW_SECONDS / 3600} hours, the same key from the same API key`,
      'with the same body answers the first 201 again (with `Idempotent-Replayed: true`) and creates nothing; with another body, 422',
      '`idempotency_key_reused`. Concurrent duplicates all answer 201 with one result: what is created and its key are stored',
      'together, so no request is ever told to wait. Malformed or repeated: 400.',
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
};

/** The names of an object model's members: a path or query model's parameters. */
const memberNames = (name: ModelName | undefined): string[] => {
  if (name === undefined) return [];
  const model: z.ZodMiniType = modelOf(name);
  if (!(model instanceof z.ZodMiniObject)) throw new Error('a path or query model must be an object');
  return Object.keys(model.shape as Record<string, unknown>);
};

/**
 * A path parameter no component above describes, from its route's path model: required, its schema
 * and description the member's own (a new resource's id needs no line here). Query parameters and
 * headers stay described above: their words say more than a model does.
 */
const pathParameterComponent = (pathModel: ModelName, name: string): Json => {
  const member = (modelOf(pathModel) as z.ZodMiniObject).shape[name] as z.ZodMiniType;
  const { description, ...schema } = schemaOf(member, 'output');
  return { name, in: 'path', required: true, ...(typeof description === 'string' ? { description } : {}), schema };
};

/** Every parameter component the described operations use: those above, and their path parameters' own. */
const parameterComponentsOf = (described: readonly Route[]): Record<string, Json> => {
  const components: Record<string, Json> = { ...parameterComponents };
  for (const route of described) {
    const path = route.request?.path;
    if (path !== undefined) for (const name of memberNames(path)) components[name] ??= pathParameterComponent(path, name);
  }
  return components;
};

/** The parameters of an operation, from its route's models: path, query, then headers, each a component by its name. */
const parametersOf = (route: Route): Json[] => {
  const names = [...memberNames(route.request?.path), ...memberNames(route.request?.query), ...(route.request?.headers ?? [])];
  const known = parameterComponentsOf([route]);
  for (const name of names) {
    if (!(name in known)) throw new Error(`${route.operationId}: no parameter component describes '${name}'`);
  }
  return names.map((name) => ref('parameters', name));
};

const needsScope = (route: Route): string => (isKeyed(route) ? `Needs an API key with the \`${route.scope}\` scope.` : 'Needs no API key.');

/** The operation's tag: its resource's (the first segment of its path); a test's resource is tagged by its name. */
const tagOf = (route: Route): string =>
  (tagDocs as Readonly<Record<string, TagDocs>>)[resourceOf(route.path)]?.name ?? resourceOf(route.path);

/** The tags the described operations use, each once, described where shared/route-docs.ts describes it. */
const tagsOf = (described: readonly Route[]) =>
  [...new Set(described.map(tagOf))].map((name) => ({
    name,
    ...Object.values(tagDocs as Readonly<Record<string, TagDocs>>).find((tag) => tag.name === name),
  }));

const operation = (route: Route, docs: RouteDocs) => {
  const codes: readonly ErrorCode[] = [...commonErrorsOf(route), ...route.errors];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(errorCatalogue[code].status, [...(byStatus.get(errorCatalogue[code].status) ?? []), code]);
  const errors = Object.fromEntries(
    [...byStatus].sort(([a], [b]) => a - b).map(([status, statusCodes]) => [String(status), errorResponse(route, status, statusCodes)]),
  );
  const deprecated = route.deprecated;
  return {
    operationId: route.operationId,
    summary: docs.summary,
    tags: [tagOf(route)],
    description: [docs.description, needsScope(route)].filter(Boolean).join(' '),
    // OpenAPI 3.1 lets a bearer requirement list the roles it needs: here the key's scope. None for a keyless one.
    security: isKeyed(route) ? [{ bearerKey: [route.scope] }] : [],
    ...(deprecated
      ? {
          deprecated: true,
          description:
            `${needsScope(route)} Deprecated since ${deprecated.deprecatedAt.toISOString().slice(0, 10)}; use \`GET ${deprecated.successorPath}\`. ` +
            `From ${deprecated.sunsetAt.toUTCString()} (the sunset) it answers 410 \`gone\`.`,
          'x-sunset': deprecated.sunsetAt.toISOString(),
        }
      : {}),
    ...(parametersOf(route).length > 0 ? { parameters: parametersOf(route) } : {}),
    // Only an operation with a body model has a request body, described by that model.
    ...(route.request?.body
      ? {
          requestBody: {
            required: true,
            description: `At most ${MAX_BODY_BYTES} bytes. Unknown fields, a client-chosen \`id\` included, are refused.`,
            content: {
              'application/json': {
                schema: bodySchema(modelOf(route.request.body), 'input'),
                ...(docs.bodyExample === undefined ? {} : { example: docs.bodyExample }),
              },
            },
          },
        }
      : {}),
    responses: { ...successResponse(route, docs), ...errors },
  };
};

const catalogueCodes = Object.keys(errorCatalogue);
const catalogueStatuses = Object.values(errorCatalogue).map(({ status }) => status);

/** The Error shape from its model, its codes and statuses from the catalogue. */
const errorSchema = () => {
  const model = schemaOf(ApiErrorBody, 'output');
  const { message } = model.properties as Record<'message', Json>;
  return {
    ...model,
    properties: {
      code: {
        type: 'string',
        enum: catalogueCodes,
        maxLength: Math.max(...catalogueCodes.map((code) => code.length)),
        description: 'What went wrong, for programs.',
      },
      message: { ...message, description: 'What went wrong, for people: names the field or parameter.' },
      status: {
        type: 'integer',
        minimum: Math.min(...catalogueStatuses),
        maximum: Math.max(...catalogueStatuses),
        description: 'The HTTP status, repeated.',
      },
    },
  };
};

const paths = (described: readonly Route[], docs: Readonly<Record<string, RouteDocs>>) => {
  const result: Record<string, Record<string, unknown>> = {};
  for (const route of described) {
    const text = docs[route.operationId];
    if (!text) throw new Error(`${route.operationId}: no docs for it (shared/route-docs.ts)`);
    (result[route.path] ??= {})[route.method.toLowerCase()] = operation(route, text);
  }
  return result;
};

export interface DocumentOptions {
  /** Servers to list first, e.g. the local server serving the document. */
  readonly extraServers?: ReadonlyArray<{ url: string; description: string }>;
  /** The operations to describe: the route table's, unless a test gives others. */
  readonly routes?: readonly Route[];
  /** The docs of operations the route table does not have (a test's), beside shared/route-docs.ts. */
  readonly docs?: Readonly<Record<string, RouteDocs>>;
}

/** Every integer says its width, from its bounds, so that a generator picks a type that holds it. */
const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const withIntegerFormats = <T>(node: T, at = '#'): T => {
  if (Array.isArray(node)) return node.map((item, index) => withIntegerFormats(item, `${at}/${index}`)) as T;
  if (node === null || typeof node !== 'object') return node;
  const result: Json = {};
  for (const [key, value] of Object.entries(node)) {
    // Examples are values, not schemas.
    result[key] = key === 'example' || key === 'examples' ? value : withIntegerFormats(value, `${at}/${key}`);
  }
  if (result.type !== 'integer' || 'format' in result) return result as T;
  const { minimum, maximum } = result;
  if (typeof minimum !== 'number' || typeof maximum !== 'number') throw new Error(`the integer at ${at} needs a minimum and a maximum`);
  const format = minimum >= INT32.min && maximum <= INT32.max ? 'int32' : 'int64';
  const { type, ...rest } = result;
  return { type, format, ...rest } as T;
};

const document = ({ extraServers = [], routes: described = routes, docs = {} }: DocumentOptions) => ({
  openapi: '3.1.0',
  info: {
    title: 'Pet store API',
    version: '1.0.0',
    description: [
      'List, add and get animals. Every operation needs a bearer API key (`Authorization: Bearer <key>`).',
      `A key carries scopes (${SCOPES.map((scope) => `\`${scope}\``).join(', ')}); each operation needs one of them, as its security ` +
        'requirement lists it. A valid key without that scope is answered `403` with code `forbidden`.',
      'Every answer that is not 2xx has the Error shape, with `status` equal to the HTTP status.',
      'A path or method the API does not have is answered `404` with code `not_found`.',
    ].join('\n\n'),
  },
  servers: [
    // x-internal: who a server is for (OWASP API9): the local ones are the developer's own.
    ...extraServers.map((server) => ({ ...server, 'x-internal': true })),
    {
      url: `https://{apiHost}${BASE_PATH}`,
      description: `Production: the ApiUrl output of the ${stackName('prod')} stack`,
      variables: { apiHost: { default: 'api.pet-store.example.com', description: 'The API host of the prod stage' } },
      'x-internal': false,
    },
    {
      url: `https://{apiHost}${BASE_PATH}`,
      description: `Staging: the ApiUrl output of the ${stackName('staging')} stack`,
      variables: { apiHost: { default: 'staging.api.pet-store.example.com', description: 'The API host of the staging stage' } },
      'x-internal': false,
    },
    { url: `http://127.0.0.1:3000${BASE_PATH}`, description: 'Local: npm start', 'x-internal': true },
  ],
  security: [{ bearerKey: [] }],
  tags: tagsOf(described),
  paths: paths(described, { ...routeDocs, ...docs }),
  components: {
    securitySchemes: {
      bearerKey: {
        type: 'http',
        scheme: 'bearer',
        description:
          'An API key such as `petstore_…`, created with `npm run keys -- create [--scopes …]`. Never in the query string. ' +
          `Its scopes: ${SCOPES.map((scope) => `\`${scope}\``).join(', ')} (by default all of them).`,
      },
    },
    schemas: {
      Pet: schemaOf(Pet, 'output'),
      NewPet: schemaOf(NewPet, 'input'),
      PetStatus: schemaOf(PetStatus, 'output'),
      Error: errorSchema(),
    },
    parameters: parameterComponentsOf(described),
    headers,
  },
});

export const buildOpenApiDocument = (options: DocumentOptions = {}) => withIntegerFormats(document(options));
