/**
 * The generated files and their contents: the document, the types a typed client uses, and the
 * documents whose tables of operations are generated (tools/openapi/docs-tables.ts).
 */
import openapiTS, { astToString } from 'openapi-typescript';
import { buildOpenApiDocument } from './document';
import { generatedDocuments } from './docs-tables';
import { CLIENT_OPERATIONS_PATH, CLIENT_TYPES_PATH, OPENAPI_PATH } from './paths';

/**
 * The document's operations (method and path) and error codes as values, for a client that needs
 * them at run time: the types alone cannot be iterated.
 */
interface DocumentShape {
  readonly paths: Record<string, Record<string, { operationId: string }>>;
  readonly components: { schemas: { Error: { properties: { code: { enum: string[] } } } } };
}

const clientOperations = ({ paths, components }: DocumentShape): string => {
  const operations = Object.fromEntries(
    Object.entries(paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, { operationId }]) => [operationId, { method: method.toUpperCase(), path }]),
    ),
  );
  const { code } = components.schemas.Error.properties;
  return [
    `// Generated from ${OPENAPI_PATH} by \`npm run openapi\`. Do not edit.`,
    '/** Each operation of the document: its method and path. */',
    `export const OPERATIONS = ${JSON.stringify(operations, null, 2)} as const;`,
    '',
    "/** Every error code the document's Error may carry. */",
    `export const ERROR_CODES = ${JSON.stringify(code.enum, null, 2)} as const;`,
    '',
  ].join('\n');
};

export const generatedFiles = async (): Promise<Array<{ path: string; contents: string }>> => {
  const document = buildOpenApiDocument();
  const types = astToString(
    // Fields with a default (NewPet's status) stay optional for the client that sends them.
    await openapiTS(JSON.parse(JSON.stringify(document)), { defaultNonNullable: false }),
  );
  return [
    { path: OPENAPI_PATH, contents: `${JSON.stringify(document, null, 2)}\n` },
    { path: CLIENT_TYPES_PATH, contents: `// Generated from ${OPENAPI_PATH} by \`npm run openapi\`. Do not edit.\n${types}` },
    { path: CLIENT_OPERATIONS_PATH, contents: clientOperations(JSON.parse(JSON.stringify(document)) as DocumentShape) },
    ...(await generatedDocuments()),
  ];
};
