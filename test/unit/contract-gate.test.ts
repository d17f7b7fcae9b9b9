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
import { fixturePath } from '../support/fixture-names';
import { routes, type Route } from '../../shared/routes';
import { literally } from '../support/vocabulary';

/** The parts of an OpenAPI document these tests change. */
interface Schema {
  type?: string | string[];
  format?: string;
  const?: string;
  maxLength?: number;
  enum?: string[];
  properties?: Record<string, Schema>;
  required?: string[];
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  style?: string;
  schema: Schema;
}
interface MediaType {
  example?: unknown;
  examples?: Record<string, { value: { message: string } }>;
}
interface Operation {
  description?: string;
  deprecated?: boolean;
  parameters?: Array<{ $ref: string } | Parameter>;
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, { headers?: Record<string, { $ref: string; required?: boolean }>; content?: Record<string, MediaType> }>;
}
interface Document {
  tags: Array<{ name: string; description?: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    parameters: Record<string, Parameter>;
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
const header = (document: Document, route: string, method: string, status: string, name: string) => {
  const found = operation(document, route, method).responses[status]?.headers?.[name];
  if (found === undefined) throw new Error(`no header ${name} in ${method} ${route} ${status}`);
  return found;
};
const json = (content: Record<string, MediaType> | undefined): MediaType => {
  const found = content?.['application/json'];
  if (found === undefined) throw new Error('no application/json content');
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
    [
      // NewPet refuses members it does not know: a client still sending the field gets 400.
      'a required request field removed',
      (document: Document) => removeField(document, 'NewPet', 'name'),
      /^POST \/pets: request body `name` \(required\): removed/,
    ],
    [
      'an optional request field removed',
      (document: Document) => delete schema(document, 'NewPet').properties?.status,
      /^POST \/pets: request body `status`: removed/,
    ],
    [
      'a wider answer type: an integer becoming any number',
      (document: Document) => (property(document, 'Pet', 'id').type = 'number'),
      /^GET \/pets\/\{petId\}: response 200 body `id` type: changed from "integer" to "number"/,
    ],
    [
      'a wider answer type: a string that may be null',
      (document: Document) => (property(document, 'Pet', 'name').type = ['string', 'null']),
      /^GET \/pets: response 200 body `\[\]\.name` type: changed from "string" to \["string","null"\]/,
    ],
    [
      'another format',
      (document: Document) => (property(document, 'Pet', 'id').format = 'int32'),
      /^POST \/pets: response 201 body `id` format: changed from "int64" to "int32"/,
    ],
    [
      'a constant no longer constant',
      (document: Document) => delete document.components.headers.CacheControl?.schema.const,
      /^GET \/pets: response 200 header `Cache-Control` const: removed \("no-store"\)/,
    ],
    [
      'a required response header made optional',
      (document: Document) => delete header(document, '/pets/{petId}', 'get', '200', 'Sunset').required,
      /^GET \/pets\/\{petId\}: response 200 header `Sunset` required: removed/,
    ],
    [
      'a required response header marked not required',
      (document: Document) => (header(document, '/pets', 'post', '201', 'X-Request-Id').required = false),
      /^POST \/pets: response 201 header `X-Request-Id` required: removed/,
    ],
  ])('%s', (_kind, change, line) => {
    const { breaking } = judge(change);
    expect(breaking).toContainEqual(expect.stringMatching(line));
  });
});

describe('a new error code', () => {
  // docs/architecture.md, The contract is enforced: a release decision, which contract:accept never takes.
  it('is refused as breaking in every operation, since every Error answer shares the enum of codes', () => {
    const { breaking, review } = judge((document) => schema(document, 'Error').properties?.code?.enum?.push('new_error_code'));
    const operations = Object.entries(generated().paths).flatMap(([route, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${route}`),
    );
    expect(operations.length).toBeGreaterThan(0);
    for (const name of operations)
      expect(breaking).toContainEqual(
        expect.stringMatching(`^${name.replace(/[{}]/g, '\\$&')}: response \\d+ body \`code\` enum value "new_error_code": added`),
      );
    expect(breaking.filter((line) => !line.includes('enum value "new_error_code": added'))).toEqual([]);
    expect(review).toEqual([]);
  });
});

describe('the gate refuses a property removed from a parameter', () => {
  it('an object query parameter losing a property', () => {
    const withFilter = (document: Document, properties: Record<string, Schema>) =>
      operation(document, '/pets', 'get').parameters?.push({
        name: 'filter',
        in: 'query',
        style: 'deepObject',
        schema: { type: 'object', properties },
      });
    const before = generated();
    withFilter(before, { tag: { type: 'string' }, color: { type: 'string' } });
    const after = generated();
    withFilter(after, { tag: { type: 'string' } });
    expect(compareContracts(before, after).breaking).toEqual([
      expect.stringMatching(/^GET \/pets: query parameter `filter` `color`: removed/),
    ]);
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
      (document: Document) => (document.paths[fixturePath('items', '{itemId}')] = { post: { responses: { '204': {} } } }),
      new RegExp(`^POST ${literally(fixturePath('items', '{itemId}'))}: added`),
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
    [
      'another example of an answer',
      (document: Document) => (json(operation(document, '/pets', 'post').responses['201']?.content).example = { id: 7, name: 'Max' }),
      /^POST \/pets: response 201 body example/,
    ],
    [
      'another example of a request',
      (document: Document) => (json(operation(document, '/pets', 'post').requestBody?.content).example = { name: 'Max', categoryId: 2 }),
      /^POST \/pets: request body example/,
    ],
    [
      // The error examples are the error catalogue's messages.
      'another error message in every example of it',
      (document: Document) => {
        for (const item of Object.values(document.paths))
          for (const { responses } of Object.values(item))
            for (const response of Object.values(responses)) {
              const example = response.content?.['application/json']?.examples?.validation_failed;
              if (example) example.value.message = 'The request does not fit the model.';
            }
      },
      /^POST \/pets: response 400 body examples\/validation_failed\/value\/message: changed from "[^"]+" to "The request does not fit the model\."/,
    ],
    [
      'a tag described otherwise',
      (document: Document) => {
        const [first] = document.tags;
        if (first) first.description = 'Animals for sale.';
      },
      /^tags\/0\/description: changed from "[^"]+" to "Animals for sale\."/,
    ],
    // Added after the document's own tags: at the index their count gives.
    [
      'a new tag',
      (document: Document) => document.tags.push({ name: 'orders', description: 'Orders.' }),
      new RegExp(`^tags/${generated().tags.length}: added`),
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
    // Once in each operation whose success carries it (the route table's creates, whichever).
    expect(review).toEqual(
      (routes as readonly Route[])
        .filter((route) => route.success?.requiredHeaders?.includes('Location'))
        .map((route) =>
          expect.stringMatching(
            `^${route.method} ${literally(route.path)}: response ${route.success?.status} header \`Location\` maxLength: changed from \\d+ to 64$`,
          ),
        ),
    );
  });
});
