/**
 * The generated files and their contents: the document, the types a typed client uses, and the
 * documents whose tables of operations are generated (tools/openapi/docs-tables.ts).
 */
import openapiTS, { astToString } from 'openapi-typescript';
import { buildOpenApiDocument } from './document';
import { generatedDocuments } from './docs-tables';
import { CLIENT_OPERATIONS_PATH, CLIENT_TYPES_PATH, OPENAPI_PATH } from './paths';

/**
 * The document's operations (method, path and success status) and error codes as values, for a
 * client that needs them at run time: the types alone cannot be iterated.
 */
interface DocumentShape {
  readonly paths: Record<string, Record<string, { operationId: string; responses: Record<string, { content?: unknown }> }>>;
  readonly components: { schemas: { Error: { properties: { code: { enum: string[] } } } } };
}

/** The status an operation answers when it succeeds, and whether that answer has a body; none for one that cannot succeed. */
const successOf = (responses: DocumentShape['paths'][string][string]['responses']) => {
  const success = Object.entries(responses).find(([status]) => status.startsWith('2'));
  return success === undefined ? {} : { success: Number(success[0]), ...(success[1].content === undefined ? { noContent: true } : {}) };
};

export const clientOperations = ({ paths, components }: DocumentShape): string => {
  const operations = Object.fromEntries(
    Object.entries(paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, { operationId, responses }]) => [
        operationId,
        { method: method.toUpperCase(), path, ...successOf(responses) },
      ]),
    ),
  );
  const { code } = components.schemas.Error.properties;
  return [
    `// Generated from ${OPENAPI_PATH} by \`npm run openapi\`. Do not edit.`,
    '/** Each operation of the document: its method and path, the status of its success, and whether that success has no content. */',
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
