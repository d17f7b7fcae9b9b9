// Generated from generated/openapi.json by `npm run openapi`. Do not edit.
/** Each operation of the document: its method and path. */
export const OPERATIONS = {
  "listPets": {
    "method": "GET",
    "path": "/pets"
  },
  "createPet": {
    "method": "POST",
    "path": "/pets"
  },
  "getPet": {
    "method": "GET",
    "path": "/pets/{petId}"
  },
  "listStoreOrders": {
    "method": "GET",
    "path": "/store/orders"
  }
} as const;

/** Every error code the document's Error may carry. */
export const ERROR_CODES = [
  "invalid_json",
  "unsupported_media_type",
  "validation_failed",
  "invalid_cursor",
  "unauthorized",
  "forbidden",
  "not_found",
  "gone",
  "payload_too_large",
  "idempotency_key_reused",
  "too_many_requests",
  "quota_exceeded",
  "request_refused",
  "internal_error",
  "not_implemented",
  "service_unavailable"
] as const;
