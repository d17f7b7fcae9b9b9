/**
 * Where `npm run openapi` writes, relative to the project root: with the other generated files.
 * A module of its own, importing nothing, because every test file's contract check reads it.
 */
export const OPENAPI_PATH = 'generated/openapi.json';
export const CLIENT_TYPES_PATH = 'generated/openapi-types.ts';
export const CLIENT_OPERATIONS_PATH = 'generated/openapi-operations.ts';
