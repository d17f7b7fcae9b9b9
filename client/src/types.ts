/**
 * The API's types, taken from the types `npm run openapi` generates from openapi.json: a change to
 * the document changes them, and a test compares the client's lists of codes and operations with it.
 */
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

/** Each operation's method and path, or null for one the client does not call. */
export const OPERATIONS = {
  listPets: { method: 'GET', path: '/pets' },
  createPet: { method: 'POST', path: '/pets' },
  getPet: { method: 'GET', path: '/pets/{petId}' },
  // Answers 501 not_implemented to everyone: nothing to call yet.
  listStoreOrders: null,
} as const satisfies { readonly [Id in OperationId]: { readonly method: string; readonly path: string } | null };

// A Record over the union, so that a code added to or removed from openapi.json fails to compile here.
const DOCUMENTED_CODES: Record<ErrorCode, 1> = {
  invalid_json: 1,
  unsupported_media_type: 1,
  validation_failed: 1,
  invalid_cursor: 1,
  unauthorized: 1,
  forbidden: 1,
  not_found: 1,
  gone: 1,
  payload_too_large: 1,
  idempotency_key_reused: 1,
  too_many_requests: 1,
  quota_exceeded: 1,
  request_refused: 1,
  internal_error: 1,
  not_implemented: 1,
  service_unavailable: 1,
};

export const ERROR_CODES = Object.keys(DOCUMENTED_CODES) as ErrorCode[];

export const isErrorCode = (value: unknown): value is ErrorCode => typeof value === 'string' && Object.hasOwn(DOCUMENTED_CODES, value);
