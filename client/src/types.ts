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

/**
 * The body an operation answers when it succeeds, from its generated type: its 200's or 201's, and
 * nothing (void) for a 204, which has no content.
 */
export type SuccessBody<Operation extends { responses: object }> = Operation['responses'] extends {
  200: { content: { 'application/json': infer Body } };
}
  ? Body
  : Operation['responses'] extends { 201: { content: { 'application/json': infer Body } } }
    ? Body
    : Operation['responses'] extends { 204: unknown }
      ? void
      : never;
/** What the client's call of an operation resolves to. */
export type SuccessOf<Id extends OperationId> = SuccessBody<operations[Id]>;

/** Each operation's method and path, and every documented error code, as the document has them. */
export { ERROR_CODES, OPERATIONS } from '../../generated/openapi-operations.js';

export const isErrorCode = (value: unknown): value is ErrorCode => (ERROR_CODES as readonly unknown[]).includes(value);
