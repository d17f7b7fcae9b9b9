/**
 * The client against openapi.json: its error codes and operations are the document's (a code or
 * an operation added or removed fails here, or fails to compile), its types are the generated
 * ones, and what its retries and paging rest on is still promised by the document.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { components, operations, paths } from '../../../generated/openapi-types';
import { projectRoot } from '../../../shared/project-root';
import { routes } from '../../../shared/routes';
import { OPENAPI_PATH } from '../../../tools/openapi/paths';
import { ERROR_CODES, OPERATIONS, PetStore, PetStoreError, type Page, type Pet } from '../../../client/src/index';

interface DocumentOperation {
  operationId: string;
  deprecated?: boolean;
  parameters?: Array<{ $ref: string }>;
  responses: Record<string, { headers?: Record<string, { $ref?: string }> }>;
}
const document = JSON.parse(readFileSync(resolve(projectRoot, OPENAPI_PATH), 'utf8')) as {
  paths: Record<string, Record<string, DocumentOperation>>;
  components: {
    schemas: { Error: { properties: { code: { enum: string[] } } } };
    parameters: Record<string, { name: string; in: string }>;
  };
};
const documentOperations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
);
const sorted = (values: Iterable<string>) => [...values].sort();

/** The client's groups of operations (its fields that hold methods), and each method as `group.method`. */
type ClientGroup = {
  [Field in keyof PetStore]: PetStore[Field] extends Record<string, (...args: never[]) => unknown> ? Field : never;
}[keyof PetStore];
type ClientMethod = { [Group in ClientGroup]: `${Group}.${keyof PetStore[Group] & string}` }[ClientGroup];

describe('the client and openapi.json', () => {
  it("knows every error code of the document's Error, and no other", () => {
    expect(sorted(ERROR_CODES)).toEqual(sorted(document.components.schemas.Error.properties.code.enum));
  });

  it('calls every operation of the document that can succeed, each at its method and path', async () => {
    const sent: string[] = [];
    // Each operation answers its documented success: its status, and a body unless it has none.
    const answer = (request: Request) => {
      const path = new URL(request.url).pathname;
      sent.push(`${request.method} ${path}`);
      const documented = Object.values(OPERATIONS).find(
        (operation) => operation.method === request.method && new RegExp(`^/v1${operation.path.replace(/\{\w+\}/g, '[^/]+')}$`).test(path),
      );
      const status = documented !== undefined && 'success' in documented ? documented.success : 404;
      if (documented !== undefined && 'noContent' in documented) return new Response(null, { status });
      const pet = { id: 7, name: 'Rex', categoryId: 1, status: 'available' };
      return new Response(JSON.stringify(request.method === 'GET' && !/\/\d+$/.test(request.url) ? [pet] : pet), {
        status,
        headers: { 'Content-Type': 'application/json' },
      });
    };
    const store = new PetStore({
      baseUrl: 'https://pets.example.test/v1',
      apiKey: 'petstore_unit-test-key-0123456789abcdef',
      fetch: async (input, init) => answer(new Request(input, init)),
    });
    // One call of each method of the client, by its group: the compiler asks for a new method's, or a new group's, here.
    const calls: Record<ClientMethod | 'health', () => Promise<unknown>> = {
      health: () => store.health(),
      'pets.list': () => store.pets.list(),
      'pets.all': async () => {
        for await (const pet of store.pets.all()) return pet;
      },
      'pets.create': () => store.pets.create({ name: 'Rex', categoryId: 1 }),
      'pets.get': () => store.pets.get(7),
    };
    for (const call of Object.values(calls)) await call();

    const calledOperations = documentOperations.filter(({ method, path }) => {
      const pattern = new RegExp(`^${method} /v1${path.replace(/\{\w+\}/g, '[^/]+')}$`);
      return sent.some((request) => pattern.test(request));
    });
    const succeeding = documentOperations.filter(({ operation }) =>
      Object.keys(operation.responses).some((status) => status.startsWith('2')),
    );
    expect(calledOperations.map(({ operation }) => operation.operationId).sort()).toEqual(
      succeeding.map(({ operation }) => operation.operationId).sort(),
    );
    expect(Object.keys(OPERATIONS).sort()).toEqual(documentOperations.map(({ operation }) => operation.operationId).sort());
  });

  it('is promised what it relies on: Retry-After on exactly the 429s and 503s it retries, Link on listings, an Idempotency-Key on creates', () => {
    for (const { operation } of documentOperations) {
      const withRetryAfter = Object.entries(operation.responses).filter(([, response]) => response.headers?.['Retry-After']);
      expect(withRetryAfter.map(([status]) => status)).toEqual(['429', '503']);
    }
    const op = (id: string) => documentOperations.find(({ operation }) => operation.operationId === id)?.operation;
    expect(op('listPets')?.responses['200']?.headers?.Link?.$ref).toBe('#/components/headers/LinkNext');
    const createParameters = (op('createPet')?.parameters ?? []).map(
      ({ $ref }) => document.components.parameters[$ref.split('/').pop() ?? ''],
    );
    expect(createParameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header' }));
    // The client reports deprecation from the headers; the document names the deprecated ones.
    expect(documentOperations.filter(({ operation }) => operation.deprecated).map(({ operation }) => operation.operationId)).toEqual(
      routes.filter((route) => 'deprecated' in route).map((route) => route.operationId),
    );
  });

  it("takes its types from the generated types: codes, pets, bodies, queries, each operation's path and method", () => {
    type Schemas = components['schemas'];
    expectTypeOf<PetStoreError['code']>().toEqualTypeOf<Schemas['Error']['code']>();
    expectTypeOf<(typeof ERROR_CODES)[number]>().toEqualTypeOf<Schemas['Error']['code']>();
    expectTypeOf<Parameters<PetStore['pets']['create']>[0]>().toEqualTypeOf<Schemas['NewPet']>();
    expectTypeOf<Awaited<ReturnType<PetStore['pets']['create']>>>().toEqualTypeOf<Schemas['Pet']>();
    expectTypeOf<Awaited<ReturnType<PetStore['pets']['get']>>>().toEqualTypeOf<Schemas['Pet']>();
    expectTypeOf<Parameters<PetStore['pets']['get']>[0]>().toEqualTypeOf<operations['getPet']['parameters']['path']['petId']>();
    expectTypeOf<Page['pets']>().toEqualTypeOf<operations['listPets']['responses'][200]['content']['application/json']>();
    expectTypeOf<Pet>().toEqualTypeOf<Schemas['Pet']>();
    type ListQuery = NonNullable<operations['listPets']['parameters']['query']>;
    expectTypeOf<NonNullable<Parameters<PetStore['pets']['list']>[0]>['status']>().toEqualTypeOf<ListQuery['status']>();
    expectTypeOf<NonNullable<Parameters<PetStore['pets']['list']>[0]>['limit']>().toEqualTypeOf<ListQuery['limit']>();
    // Each operation's path and method lead to that operation in the generated paths.
    type AtItsPath = {
      [Id in keyof typeof OPERATIONS]: (typeof OPERATIONS)[Id] extends {
        path: infer Path extends keyof paths;
        method: infer Method extends string;
      }
        ? paths[Path][Lowercase<Method> & keyof paths[Path]]
        : never;
    };
    expectTypeOf<AtItsPath>().toEqualTypeOf<{ [Id in keyof typeof OPERATIONS]: operations[Id] }>();
  });
});
