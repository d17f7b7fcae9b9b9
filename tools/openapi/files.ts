/**
 * The generated files and their contents: the document, the types a typed client uses, and the
 * documents whose tables of operations are generated (tools/openapi/docs-tables.ts).
 */
import openapiTS, { astToString } from 'openapi-typescript';
import { buildOpenApiDocument } from './document';
import { generatedDocuments } from './docs-tables';
import { CLIENT_TYPES_PATH, OPENAPI_PATH } from './paths';

export const generatedFiles = async (): Promise<Array<{ path: string; contents: string }>> => {
  const document = buildOpenApiDocument();
  const types = astToString(
    // Fields with a default (NewPet's status) stay optional for the client that sends them.
    await openapiTS(JSON.parse(JSON.stringify(document)), { defaultNonNullable: false }),
  );
  return [
    { path: OPENAPI_PATH, contents: `${JSON.stringify(document, null, 2)}\n` },
    { path: CLIENT_TYPES_PATH, contents: `// Generated from ${OPENAPI_PATH} by \`npm run openapi\`. Do not edit.\n${types}` },
    ...(await generatedDocuments()),
  ];
};
