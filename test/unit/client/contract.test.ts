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

describe('the client and openapi.json', () => {
  it("knows every error code of the document's Error, and no other", () => {
    expect(sorted(ERROR_CODES)).toEqual(sorted(document.components.schemas.Error.properties.code.enum));
  });

  it("lists every operation of the document with its method and path; the ones it does not call can't succeed", () => {
    expect(sorted(Object.keys(OPERATIONS))).toEqual(sorted(documentOperations.map(({ operation }) => operation.operationId)));
    for (const { path, method, operation } of documentOperations) {
      const called = OPERATIONS[operation.operationId as keyof typeof OPERATIONS];
      const succeeds = Object.keys(operation.responses).some((status) => status.startsWith('2'));
      expect({ operation: operation.operationId, called: called ?? 'not called' }).toEqual({
        operation: operation.operationId,
        called: succeeds ? { method, path } : 'not called',
      });
    }
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
    expect(documentOperations.filter(({ operation }) => operation.deprecated).map(({ operation }) => operation.operationId)).toEqual([
      'getPet',
    ]);
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
    // Each operation the client calls is at its path and method in the generated paths.
    type Called = { [Id in keyof typeof OPERATIONS]: (typeof OPERATIONS)[Id] };
    type AtItsPath = {
      [Id in keyof Called]: Called[Id] extends { path: infer Path extends keyof paths; method: infer Method extends string }
        ? paths[Path][Lowercase<Method> & keyof paths[Path]]
        : null;
    };
    expectTypeOf<AtItsPath>().toEqualTypeOf<
      Readonly<{
        listPets: operations['listPets'];
        createPet: operations['createPet'];
        getPet: operations['getPet'];
        listStoreOrders: null;
      }>
    >();
  });
});
