// Generated from generated/openapi.json by `npm run openapi`. Do not edit.
/** Each operation of the document: its method and path, the status of its success, and whether that success has no content. */
export const OPERATIONS = {
  "listPets": {
    "method": "GET",
    "path": "/pets",
    "success": 200
  },
  "createPet": {
    "method": "POST",
    "path": "/pets",
    "success": 201
  },
  "getPet": {
    "method": "GET",
    "path": "/pets/{petId}",
    "success": 200
  },
  "listStoreOrders": {
    "method": "GET",
    "path": "/store/orders"
  },
  "getHealth": {
    "method": "GET",
    "path": "/health",
    "success": 200
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
