/**
 * The API's types, taken from the types `npm run openapi` generates from openapi.json: a change to
 * the document changes them, and a test compares the client's lists of codes and operations with it.
 */
import { ERROR_CODES } from '../../generated/openapi-operations.js';
import type { components, operations } from '../../generated/openapi-types.js';

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
/** The body of every error answer. */
export type ErrorBody = components['schemas']['Error'];
/** Every error code the API documents. */
export type ErrorCode = ErrorBody['code'];
export type OperationId = keyof operations;
export type ListPetsQuery = NonNullable<operations['listPets']['parameters']['query']>;
export type PetId = operations['getPet']['parameters']['path']['petId'];

/** Each operation's method and path, and every documented error code, as the document has them. */
export { ERROR_CODES, OPERATIONS } from '../../generated/openapi-operations.js';

export const isErrorCode = (value: unknown): value is ErrorCode => (ERROR_CODES as readonly unknown[]).includes(value);
