/** @pet-store/client: the pet store API with idempotent creates, retries and paging by default. */
export { PetStore } from './pet-store.js';
export type {
  AllOptions,
  CallOptions,
  CreateOptions,
  DeprecationNotice,
  ListOptions,
  Page,
  PetStoreOptions,
  RawAnswer,
  RawRequest,
  ResponseNotice,
  RetryNotice,
} from './pet-store.js';
export { PetStoreError, PetStoreNetworkError, PetStoreRepeatedCursorError, PetStoreTimeoutError, PetStoreUrlError } from './errors.js';
export { ERROR_CODES, OPERATIONS } from './types.js';
export type { ErrorBody, ErrorCode, ListPetsQuery, NewPet, OperationId, Pet, PetId, PetStatus } from './types.js';
