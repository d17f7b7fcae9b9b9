/**
 * The contract gate: the document the code generates now against the released contract of /v1
 * (contract/v1.json), and proof that the gate refuses each kind of breaking change, naming it,
 * while additive changes pass.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../shared/project-root';
import { compareContracts } from '../../tools/contract/compare';
import { CONTRACT_PATH } from '../../tools/contract/paths';
import { buildOpenApiDocument } from '../../tools/openapi/document';

/** The parts of an OpenAPI document these tests change. */
interface Schema {
  type?: string;
  maxLength?: number;
  enum?: string[];
  properties?: Record<string, Schema>;
  required?: string[];
}
interface Operation {
  description?: string;
  deprecated?: boolean;
  parameters?: Array<{ $ref: string }>;
  responses: Record<string, { headers?: Record<string, unknown> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    parameters: Record<string, { name: string; in: string; required?: boolean; schema: Schema }>;
    headers: Record<string, { schema: Schema }>;
  };
}

const released: Document = JSON.parse(readFileSync(resolve(projectRoot, CONTRACT_PATH), 'utf8'));
const generated = (): Document => JSON.parse(JSON.stringify(buildOpenApiDocument()));

/** The generated document, changed, judged against the one it is changed from. */
const judge = (change: (document: Document) => void) => {
  const before = generated();
  const after = structuredClone(before);
  change(after);
  return compareContracts(before, after);
};

const schemas = (document: Document) => document.components.schemas;
const schema = (document: Document, name: string): Schema => {
  const found = schemas(document)[name];
  if (found === undefined) throw new Error(`no schema ${name}`);
  return found;
};
const property = (document: Document, model: string, name: string): Schema => {
  const found = schema(document, model).properties?.[name];
  if (found === undefined) throw new Error(`no property ${model}.${name}`);
  return found;
};
const operation = (document: Document, route: string, method: string): Operation => {
  const found = document.paths[route]?.[method];
  if (found === undefined) throw new Error(`no operation ${method} ${route}`);
  return found;
};
const removeField = (document: Document, model: string, name: string) => {
  const target = schema(document, model);
  delete target.properties?.[name];
  target.required = target.required?.filter((field) => field !== name);
};

describe('the contract of /v1', () => {
  it('the document generated now breaks nothing in contract/v1.json', () => {
    const { breaking, review } = compareContracts(released, generated());
    expect(
      [...breaking, ...review],
      `These changes would break /v1 or need a person's review (npm run contract lists them; an additive change is accepted with npm run contract:accept):\n${[...breaking, ...review].join('\n')}`,
    ).toEqual([]);
  });

  it('refuses a copy with a field removed from Pet, naming the field once in each operation that answers a Pet', () => {
    const broken = generated();
    removeField(broken, 'Pet', 'categoryId');
    const { breaking, review } = compareContracts(released, broken);
    expect(breaking).toEqual([
      expect.stringMatching(/^GET \/pets: response 200 body `\[\]\.categoryId` \(required\): removed/),
      expect.stringMatching(/^POST \/pets: response 201 body `categoryId` \(required\): removed/),
      expect.stringMatching(/^GET \/pets\/\{petId\}: response 200 body `categoryId` \(required\): removed/),
    ]);
    expect(review).toEqual([]);
  });
});

describe('the gate refuses a breaking change and names it', () => {
  it.each([
    [
      'a removed operation',
      (document: Document) => delete document.paths['/pets/{petId}']?.get,
      /^GET \/pets\/\{petId\}: removed — \[Removed\] operation GET \/pets\/\{petId\}$/,
    ],
    [
      'a removed enum value',
      (document: Document) => (schema(document, 'PetStatus').enum = ['available', 'pending']),
      /^GET \/pets: query parameter `status` enum value "sold": removed/,
    ],
    [
      'a new required request field',
      (document: Document) => {
        const newPet = schema(document, 'NewPet');
        newPet.properties = { ...newPet.properties, tag: { type: 'string' } };
        newPet.required = [...(newPet.required ?? []), 'tag'];
      },
      /^POST \/pets: request body `tag` \(required\): added/,
    ],
    [
      'a narrowed type: a shorter maximum length',
      (document: Document) => (property(document, 'NewPet', 'name').maxLength = 128),
      /^POST \/pets: request body `name` maxLength: changed from 256 to 128/,
    ],
    [
      'a narrowed type: another type',
      (document: Document) =>
        (schema(document, 'NewPet').properties = { ...schema(document, 'NewPet').properties, categoryId: { type: 'string' } }),
      /^POST \/pets: request body `categoryId` type: changed from "integer" to "string"/,
    ],
    [
      'a changed status',
      (document: Document) => {
        const responses = operation(document, '/pets', 'post').responses;
        responses['202'] = responses['201'] ?? {};
        delete responses['201'];
      },
      /^POST \/pets: response 201: removed/,
    ],
    [
      'a newly required query parameter',
      (document: Document) => {
        const limit = document.components.parameters.limit;
        if (limit) limit.required = true;
      },
      /^GET \/pets: query parameter `limit` required: added/,
    ],
    [
      'a header no longer sent',
      (document: Document) => delete operation(document, '/pets', 'post').responses['201']?.headers?.Location,
      /^POST \/pets: response 201 header `Location`: removed/,
    ],
  ])('%s', (_kind, change, line) => {
    const { breaking } = judge(change);
    expect(breaking).toContainEqual(expect.stringMatching(line));
  });
});

describe('the gate lets an additive change pass', () => {
  it.each([
    [
      'an optional field in every answer with a Pet',
      (document: Document) => (schema(document, 'Pet').properties = { ...schema(document, 'Pet').properties, tag: { type: 'string' } }),
      /^GET \/pets\/\{petId\}: response 200 body `tag`: added/,
    ],
    [
      'an optional request field',
      (document: Document) =>
        (schema(document, 'NewPet').properties = { ...schema(document, 'NewPet').properties, tag: { type: 'string' } }),
      /^POST \/pets: request body `tag`: added/,
    ],
    [
      'an optional query parameter',
      (document: Document) => {
        document.components.parameters.tag = { name: 'tag', in: 'query', schema: { type: 'string' } };
        operation(document, '/pets', 'get').parameters?.unshift({ $ref: '#/components/parameters/tag' });
      },
      /^GET \/pets: query parameter `tag`: added/,
    ],
    [
      'a new operation',
      (document: Document) =>
        (document.paths['/pets/{petId}'] = { ...document.paths['/pets/{petId}'], delete: { responses: { '204': {} } } }),
      /^DELETE \/pets\/\{petId\}: added/,
    ],
    [
      'a deprecation and a new description',
      (document: Document) => {
        operation(document, '/pets', 'get').deprecated = true;
        operation(document, '/pets', 'get').description = 'Lists pets.';
      },
      /^GET \/pets: deprecated: added \(true\)/,
    ],
    [
      // The schema's copy under components/ says breaking; in the answers, where it counts, it is not.
      'an error code an answer no longer lists',
      (document: Document) => schema(document, 'Error').properties?.code?.enum?.splice(-1),
      /^GET \/pets: response 400 body `code` enum value "service_unavailable": removed/,
    ],
  ])('%s', (_kind, change, line) => {
    const { breaking, review, additive } = judge(change);
    expect([...breaking, ...review]).toEqual([]);
    expect(additive).toContainEqual(expect.stringMatching(line));
  });
});

describe('what the diff tool cannot classify is held for review', () => {
  it('a shorter maximum length of a header in the answers', () => {
    const { breaking, review } = judge((document) => {
      const location = document.components.headers.Location;
      if (location) location.schema.maxLength = 64;
    });
    expect(breaking).toEqual([]);
    expect(review).toEqual([expect.stringMatching(/^POST \/pets: response 201 header `Location` maxLength: changed from \d+ to 64$/)]);
  });
});
