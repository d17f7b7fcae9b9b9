/**
 * Whether openapi.json describes an answer: the status must be one the operation lists, the body
 * must match that response's schema, and the required headers must be there, with their
 * documented values and lengths. The tests check every answer of the local server with it, and
 * `npm run smoke` every answer of a deployment.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { projectRoot } from '../../shared/project-root';
import { BASE_PATH } from '../../shared/routes';
import { matchRoute, pathBelowBase } from '../local-server/route-matcher';
import { OPENAPI_PATH } from './paths';

interface HeaderObject {
  readonly required?: boolean;
  readonly schema?: { const?: string; pattern?: string; maxLength?: number };
}
interface ResponseObject {
  readonly headers?: Record<string, { $ref: string; required?: boolean }>;
  readonly content?: Record<string, unknown>;
}
interface OpenApiDocument {
  readonly paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  readonly components: { headers: Record<string, HeaderObject> };
}

const DOCUMENT_ID = 'openapi.json';
export const openApiDocument = JSON.parse(readFileSync(resolve(projectRoot, OPENAPI_PATH), 'utf8')) as OpenApiDocument;

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(openApiDocument as object, DOCUMENT_ID);

const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
const validators = new Map<string, ReturnType<typeof ajv.compile>>();
const validatorAt = (path: string) => {
  let validate = validators.get(path);
  if (!validate) {
    validate = ajv.compile({ $ref: `${DOCUMENT_ID}#/${path}` });
    validators.set(path, validate);
  }
  return validate;
};

/** Paths the local server serves besides the API: the document itself and its reference page. */
const isDocumentation = (path: string) =>
  path === `${BASE_PATH}/openapi.json` || path === `${BASE_PATH}/docs` || path.startsWith(`${BASE_PATH}/docs/`);

/** What parseJson gives for a body that is not JSON. */
const NOT_JSON = Symbol('not JSON');
export const parseJson = (body: string): unknown => {
  try {
    return JSON.parse(body);
  } catch {
    return NOT_JSON;
  }
};

/** An answer as a client received it, for the request it answers. */
export interface Described {
  readonly method: string;
  readonly url: URL;
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

/** The problems with an answer, as sentences; empty when the document describes it. */
export const contractViolations = ({ method, url, status, headers, body }: Described): string[] => {
  if (isDocumentation(url.pathname)) return [];
  const subPath = pathBelowBase(url.pathname);
  const match = subPath === undefined ? undefined : matchRoute(method, subPath);
  const problems: string[] = [];
  const where = `${method} ${url.pathname}${url.search} → ${status}`;

  if (!match) {
    // Not an operation: the document says such requests are answered 404 not_found.
    if (status !== 404) problems.push(`${where}: a path or method the API does not have must answer 404`);
    if (method === 'HEAD') return problems; // no body to check
    const parsed = parseJson(body);
    if (!validatorAt(pointer('components', 'schemas', 'Error'))(parsed)) {
      problems.push(`${where}: the body is not the Error shape`);
    } else if ((parsed as { code: string }).code !== 'not_found') {
      problems.push(`${where}: an unknown route must answer code not_found`);
    }
    return problems;
  }

  const operationPath = ['paths', match.route.path, method.toLowerCase()];
  const operation = openApiDocument.paths[match.route.path]?.[method.toLowerCase()];
  const response = operation?.responses[String(status)];
  if (!response) return [`${where}: status ${status} is not documented for ${match.route.operationId}`];

  for (const [name, reference] of Object.entries(response.headers ?? {})) {
    const definition = openApiDocument.components.headers[reference.$ref.split('/').at(-1) ?? ''];
    const value = headers.get(name);
    if (value === null) {
      if (reference.required) problems.push(`${where}: required header ${name} is missing`);
      continue;
    }
    if (definition?.schema?.const !== undefined && value !== definition.schema.const) {
      problems.push(`${where}: header ${name} is ${JSON.stringify(value)}, documented as ${JSON.stringify(definition.schema.const)}`);
    }
    if (definition?.schema?.pattern !== undefined && !new RegExp(definition.schema.pattern).test(value)) {
      problems.push(`${where}: header ${name} does not match ${definition.schema.pattern}`);
    }
    if (definition?.schema?.maxLength !== undefined && [...value].length > definition.schema.maxLength) {
      problems.push(`${where}: header ${name} is longer than ${definition.schema.maxLength} characters`);
    }
  }

  if (!response.content) {
    // A success with no content (204): nothing to type, nothing to read.
    if (body !== '') problems.push(`${where}: a body where the document says there is no content`);
    if (headers.has('content-type')) problems.push(`${where}: a Content-Type where the document says there is no content`);
  } else {
    if (headers.get('content-type') !== 'application/json') problems.push(`${where}: Content-Type is not application/json`);
    const parsed = parseJson(body);
    if (parsed === NOT_JSON) return [...problems, `${where}: the body is not JSON`];
    const validate = validatorAt(pointer(...operationPath, 'responses', String(status), 'content', 'application/json', 'schema'));
    if (!validate(parsed)) {
      problems.push(`${where}: the body does not match the documented schema: ${ajv.errorsText(validate.errors)} in ${body.slice(0, 300)}`);
    }
  }
  return problems;
};
