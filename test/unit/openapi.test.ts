/** openapi.json: generated, committed, fresh, valid OpenAPI 3.1, and saying what the API does. */
import { Validator } from '@seriousme/openapi-schema-validator';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../shared/project-root';
import { errorDocs } from '../../shared/error-docs';
import { ERROR_MESSAGE_MAX_LENGTH, errorCatalogue, type ErrorCode } from '../../shared/errors';
import { ListPetsQuery, PET_NAME_MAX_LENGTH } from '../../shared/models';
import { resourceOf } from '../../shared/route-docs';
import { commonErrorsOf, isKeyed, routeOf, routes, type Route } from '../../shared/routes';
import { buildOpenApiDocument } from '../../tools/openapi/document';
import { generatedFiles } from '../../tools/openapi/files';
import { OPENAPI_PATH } from '../../tools/openapi/paths';
import { keyedOperationIds } from '../support/operations';

const committed = JSON.parse(readFileSync(resolve(projectRoot, OPENAPI_PATH), 'utf8'));
type Operation = {
  operationId: string;
  tags: string[];
  deprecated?: boolean;
  'x-sunset'?: string;
  description?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ $ref: string }>;
  responses: Record<
    string,
    {
      description?: string;
      headers?: Record<string, { required?: boolean }>;
      content?: { 'application/json': { schema: unknown; examples?: object } };
    }
  >;
};
const operationOf = (id: string): Operation => {
  for (const methods of Object.values(committed.paths as Record<string, Record<string, Operation>>)) {
    for (const operation of Object.values(methods)) if (operation.operationId === id) return operation;
  }
  throw new Error(`no operation ${id}`);
};
const routeOfGetPet = () => routeOf('getPet') as { deprecated: { sunsetAt: Date } };
const errorCodes = (operation: Operation, status: number): string[] =>
  (
    operation.responses[String(status)]?.content?.['application/json'].schema as {
      allOf: Array<{ properties?: { code?: { enum: string[] } } }>;
    }
  ).allOf[1]?.properties?.code?.enum ?? [];

describe('openapi.json', () => {
  it('is what npm run openapi generates now (the committed files are not stale)', async () => {
    for (const { path, contents } of await generatedFiles()) {
      expect(readFileSync(resolve(projectRoot, path), 'utf8'), `${path} is stale: run npm run openapi`).toBe(contents);
    }
  });

  it('validates as OpenAPI 3.1, and the validator does refuse a broken document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(committed));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    const broken = structuredClone(committed);
    broken.components.parameters.limit.in = 'body'; // not a parameter location
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('lists production and staging servers ending in /v1, and the bearer scheme for every operation', () => {
    expect(committed.servers.map((server: { description: string }) => server.description.split(':')[0])).toEqual(
      expect.arrayContaining(['Production', 'Staging']),
    );
    for (const server of committed.servers) expect(server.url).toMatch(/\/v1$/);
    expect(committed.components.securitySchemes.bearerKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(committed.security).toEqual([{ bearerKey: [] }]);
  });

  it.each((routes as readonly Route[]).filter(isKeyed).map((route) => [route.operationId, route.scope]))(
    'says that %s needs the %s scope: in its bearer requirement, its description and its 403',
    (id, scope) => {
      const operation = operationOf(id);
      expect(operation.security).toEqual([{ bearerKey: [scope] }]);
      expect(operation.description).toContain(`Needs an API key with the \`${scope}\` scope.`);
      expect(operation.responses['403']?.headers?.['WWW-Authenticate']).toEqual({
        $ref: '#/components/headers/WwwAuthenticateInsufficientScope',
        required: true,
      });
      expect((operation.responses['403'] as { description?: string }).description).toContain(`needs the \`${scope}\` scope`);
    },
  );

  it('has every route of the route table, by operationId, each tagged by its resource (the first segment of its path), every tag declared and described', () => {
    const declared = new Map((committed.tags as Array<{ name: string; description?: string }>).map((tag) => [tag.name, tag.description]));
    const tagOfResource = new Map<string, string>();
    for (const route of routes as readonly Route[]) {
      const operation = committed.paths[route.path][route.method.toLowerCase()] as Operation;
      expect(operation.operationId).toBe(route.operationId);
      expect(operation.tags, route.operationId).toHaveLength(1);
      const [tag = ''] = operation.tags;
      expect(declared.get(tag), `${tag} is declared, with a description`).toBeTruthy();
      const resource = resourceOf(route.path);
      expect(tagOfResource.get(resource) ?? tag, `${route.operationId}: one tag per resource`).toBe(tag);
      tagOfResource.set(resource, tag);
    }
    // One resource per tag, and no tag declared that no operation uses.
    expect([...declared.keys()].sort()).toEqual([...new Set(tagOfResource.values())].sort());
    expect(tagOfResource.size).toBe(declared.size);
  });

  it("lists listPets' query parameters, the model's own keys, with their constraints", () => {
    const names = operationOf('listPets').parameters?.map((parameter) => parameter.$ref.split('/').at(-1));
    expect(names).toEqual(Object.keys(ListPetsQuery.shape));
    expect(committed.components.parameters.limit.schema).toEqual({
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: 100,
      default: 20,
    });
    expect(committed.components.parameters.cursor.schema).toEqual({ type: 'string', minLength: 1, maxLength: 512 });
    expect(committed.components.parameters.petId).toMatchObject({
      in: 'path',
      required: true,
      schema: { minimum: 1, maximum: 9007199254740991 },
    });
  });

  it('documents every status each operation can give, with its decided codes and an example of each', () => {
    for (const route of routes as readonly Route[]) {
      const operation = operationOf(route.operationId);
      // The route's success and each of its codes, by the catalogue's status: its own and the common ones.
      const byStatus = new Map<number, ErrorCode[]>();
      for (const code of [...commonErrorsOf(route), ...route.errors])
        byStatus.set(errorCatalogue[code].status, [...(byStatus.get(errorCatalogue[code].status) ?? []), code]);
      const statuses = [...(route.success ? [route.success.status] : []), ...byStatus.keys()].sort((a, b) => a - b);
      expect(
        Object.keys(operation.responses)
          .map(Number)
          .sort((a, b) => a - b),
        route.operationId,
      ).toEqual(statuses);
      for (const [status, expected] of byStatus) {
        expect(errorCodes(operation, status).sort(), `${route.operationId} ${status}`).toEqual([...expected].sort());
        const examples = operation.responses[String(status)]?.content?.['application/json'].examples as Record<string, { value: object }>;
        for (const code of expected)
          expect(examples[code]?.value, `${route.operationId} ${code}`).toEqual({ code, message: errorCatalogue[code].message, status });
      }
    }
    // Decided for createPet: a key reused with another body is 422.
    expect(errorCodes(operationOf('createPet'), 422)).toEqual(['idempotency_key_reused']);
    expect(committed.components.schemas.Error.properties.code.enum).toEqual(Object.keys(errorCatalogue));
  });

  it('documents the response headers', () => {
    const header = (id: string, status: number, name: string) => operationOf(id).responses[String(status)]?.headers?.[name];
    expect(header('createPet', 201, 'Location')).toMatchObject({ required: true });
    expect(header('createPet', 201, 'Idempotent-Replayed')).toBeDefined();
    expect(header('createPet', 201, 'Idempotent-Replayed')).not.toHaveProperty('required');
    expect(operationOf('createPet').parameters).toEqual([{ $ref: '#/components/parameters/idempotencyKey' }]);
    expect(header('listPets', 200, 'Link')).toBeDefined();
    expect(header('listPets', 200, 'X-Request-Id')).toMatchObject({ required: true });
    expect(header('getPet', 200, 'Deprecation')).toMatchObject({ required: true });
    expect(header('getPet', 200, 'Sunset')).toMatchObject({ required: true });
    expect(header('listPets', 401, 'WWW-Authenticate')).toMatchObject({ required: true });
    expect(header('listPets', 429, 'Retry-After')).toMatchObject({ required: true });
    expect(header('listPets', 503, 'Retry-After')).toMatchObject({ required: true });
    expect(header('listPets', 401, 'x-amzn-RequestId')).toMatchObject({ required: true });
    // The key's plan on every successful answer, never on an error.
    for (const route of (routes as readonly Route[]).filter(isKeyed)) {
      if (route.success === undefined) continue;
      const { operationId: id, success } = route;
      expect(header(id, success.status, 'RateLimit-Policy'), `${id} ${success.status}`).toEqual({
        $ref: '#/components/headers/RateLimitPolicy',
      });
    }
    expect(header('listPets', 429, 'RateLimit-Policy')).toBeUndefined();
  });

  it('says what each 403 and 429 of the usage plans means, in every operation behind a key', () => {
    for (const id of keyedOperationIds) {
      const { responses } = operationOf(id);
      expect(responses['403']?.description, id).toMatch(/no usage plan of this stage/);
      expect(errorCodes(operationOf(id), 429).sort(), id).toEqual(['quota_exceeded', 'too_many_requests']);
      expect(responses['429']?.description, id).toMatch(
        /`too_many_requests`: over the API key's plan rate.*`quota_exceeded`: .*fixed hint/,
      );
    }
  });

  it('marks getPet deprecated, with its sunset, and GET /store/orders as 501', () => {
    expect(operationOf('getPet')).toMatchObject({ deprecated: true, 'x-sunset': '2030-12-05T00:00:00.000Z' });
    expect(errorCodes(operationOf('listStoreOrders'), 501)).toEqual(['not_implemented']);
  });

  it('gives every integer its width: ids are int64 (a 32-bit int cannot hold them), small numbers int32', () => {
    const { schemas, parameters } = committed.components;
    for (const id of [
      schemas.Pet.properties.id,
      schemas.Pet.properties.categoryId,
      schemas.NewPet.properties.categoryId,
      parameters.petId.schema,
    ]) {
      expect(id).toMatchObject({ type: 'integer', format: 'int64', maximum: Number.MAX_SAFE_INTEGER });
    }
    const statuses = Object.values(errorCatalogue).map(({ status }) => status);
    expect(schemas.Error.properties.status).toMatchObject({
      type: 'integer',
      format: 'int32',
      minimum: Math.min(...statuses),
      maximum: Math.max(...statuses),
    });
    const integers = JSON.stringify(committed).match(/"type":"integer"(?!,"format":"int(32|64)")/g) ?? [];
    expect(integers, 'an integer without format').toEqual([]);
  });

  it('bounds every string the API answers with', () => {
    const { schemas, headers } = committed.components;
    expect(schemas.Error.properties.message.maxLength).toBe(ERROR_MESSAGE_MAX_LENGTH);
    expect(schemas.Error.properties.code.maxLength).toBe(Math.max(...Object.keys(errorCatalogue).map((code) => code.length)));
    expect(schemas.Pet.properties.name.maxLength).toBe(PET_NAME_MAX_LENGTH);
    for (const [name, header] of Object.entries(headers as Record<string, { schema: { maxLength?: number; const?: string } }>)) {
      expect(header.schema.maxLength ?? header.schema.const, `header ${name}`).toBeDefined();
    }
    // A URL from the longest host name (253 characters, RFC 1035) and the largest id still fits, below any create's path.
    const creates = (routes as readonly Route[]).filter((route) => route.success?.requiredHeaders?.includes('Location'));
    expect(creates.length).toBeGreaterThan(0);
    for (const { path } of creates)
      expect(headers.Location.schema.maxLength).toBeGreaterThanOrEqual(
        `https://${'a'.repeat(253)}:65535/v1${path}/${Number.MAX_SAFE_INTEGER}`.length,
      );
    expect(headers.Sunset.schema.maxLength).toBe(routeOfGetPet().deprecated.sunsetAt.toUTCString().length);
    expect(new RegExp(headers.Sunset.schema.pattern).test(routeOfGetPet().deprecated.sunsetAt.toUTCString())).toBe(true);
  });

  it('takes its schemas from the zod models', () => {
    const document = buildOpenApiDocument();
    expect(document.components.schemas.NewPet).toMatchObject({ additionalProperties: false, required: ['name', 'categoryId'] });
    expect(document.components.schemas.Pet).toMatchObject({ required: ['id', 'name', 'categoryId', 'status'] });
    expect(document.components.schemas.NewPet).toMatchObject({ properties: { name: { maxLength: 256 } } });
  });

  it('describes an error code in the same words in every operation that answers it, and those words name no operation', () => {
    const operationIds = routes.map((route) => route.operationId);
    const wordsOf = new Map<string, Set<string>>();
    for (const route of routes as readonly Route[]) {
      const operation = operationOf(route.operationId);
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        for (const [, code = '', words = ''] of (response.description ?? '').matchAll(/`(\w+)`: (.*?)\.(?= `\w+`:|$)/g)) {
          // The words may name the operation's own scope (a 403 says which it needs): that is the operation's, not the code's.
          const shared = isKeyed(route) ? words.replaceAll(route.scope, '<scope>') : words;
          expect(shared, `${code} in ${route.operationId}`).toContain(errorDocs[code as ErrorCode]);
          for (const id of operationIds) expect(shared, `${code} in ${route.operationId}`).not.toContain(id);
          wordsOf.set(code, (wordsOf.get(code) ?? new Set()).add(shared));
        }
      }
    }
    expect(wordsOf.size).toBeGreaterThan(0);
    for (const [code, words] of wordsOf) expect(words.size, code).toBe(1);
  });

  it("takes each operation's parameters and body from its route: no body without a body model", () => {
    for (const route of routes) {
      const operation = operationOf(route.operationId) as Operation & { requestBody?: unknown };
      const request = 'request' in route ? (route.request as { body?: unknown; query?: unknown }) : {};
      expect(operation.requestBody !== undefined, route.operationId).toBe(request.body !== undefined);
    }
    expect(operationOf('listPets').parameters?.map(({ $ref }) => $ref.split('/').pop())).toEqual(Object.keys(ListPetsQuery.shape));
    expect(operationOf('getPet').parameters).toEqual([{ $ref: '#/components/parameters/petId' }]);
  });
});
