/**
 * The error catalogue: every error code the API can answer, with its HTTP status, default
 * message and extra headers. Handlers, the authorizer's gateway responses and the local server
 * all render errors from here, so a client sees one shape whoever answered.
 */
import type { ApiErrorBody } from './models';
import { PROJECT_NAME } from './project';

/** Seconds a client should wait before retrying after a 503, or a 429 for going too fast. */
export const RETRY_AFTER_SECONDS = 1;
/**
 * Seconds a client should wait after using up its quota. A fixed hint: API Gateway's answer is a
 * static gateway response, which cannot compute when the quota's period starts again.
 */
export const QUOTA_RETRY_AFTER_SECONDS = 3_600;
export const WWW_AUTHENTICATE = `Bearer realm="${PROJECT_NAME}"`;
/** RFC 6750: the credentials are valid, but do not allow this request. */
export const WWW_AUTHENTICATE_INSUFFICIENT_SCOPE = `${WWW_AUTHENTICATE}, error="insufficient_scope"`;
/** The longest `message` an error answer carries (openapi.json says so): longer ones are cut. */
export const ERROR_MESSAGE_MAX_LENGTH = 512;

interface CatalogueEntry {
  readonly status: number;
  readonly message: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export const errorCatalogue = {
  invalid_json: { status: 400, message: 'The request body is empty or is not valid JSON.' },
  unsupported_media_type: {
    status: 400,
    message: "The request body must be sent with 'Content-Type: application/json'.",
  },
  validation_failed: { status: 400, message: 'The request is not valid.' },
  invalid_cursor: {
    status: 400,
    message: 'Invalid query parameter \'cursor\': use the cursor from a Link rel="next" header of the same listing.',
  },
  unauthorized: {
    status: 401,
    message: "A valid API key is required: send 'Authorization: Bearer <API_KEY>'.",
    headers: { 'WWW-Authenticate': WWW_AUTHENTICATE },
  },
  // API Gateway's own 403s: a key whose policy does not cover the method, a request the web ACL
  // blocked, a refused signature or API key. One code, and one header, for all of them.
  forbidden: {
    status: 403,
    message: 'This request is not allowed: the API key has no permission for it, or it was blocked.',
    headers: { 'WWW-Authenticate': WWW_AUTHENTICATE_INSUFFICIENT_SCOPE },
  },
  not_found: { status: 404, message: 'No such resource.' },
  gone: { status: 410, message: 'This operation has been removed.' },
  payload_too_large: { status: 413, message: 'The request body is too large.' },
  idempotency_key_reused: {
    status: 422,
    message: 'This Idempotency-Key was already used with a different request body: use a new key.',
  },
  too_many_requests: {
    status: 429,
    message: 'Too many requests: slow down and retry later.',
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  },
  quota_exceeded: {
    status: 429,
    message:
      "This API key's usage quota is used up until its period starts again (a day at 00:00 UTC, a week on Sunday, a month on the 1st).",
    headers: { 'Retry-After': String(QUOTA_RETRY_AFTER_SECONDS) },
  },
  // The gateway's catch-all for a 4xx it has no answer of its own for (see gateway-responses.ts):
  // honest that it is generic, and that the HTTP status, not this body, says which 4xx it is.
  request_refused: { status: 400, message: 'The gateway refused the request: the HTTP status says why.' },
  internal_error: { status: 500, message: 'An unexpected error occurred. It has been logged.' },
  not_implemented: { status: 501, message: 'This operation is not implemented.' },
  service_unavailable: {
    status: 503,
    message: 'The service is temporarily unavailable: retry later.',
    headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  },
} as const satisfies Record<string, CatalogueEntry>;

export type ErrorCode = keyof typeof errorCatalogue;

/** An error the client is meant to see: its code decides the status and headers. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string = errorCatalogue[code].message,
  ) {
    super(message);
    this.status = errorCatalogue[code].status;
  }
}

/** Cut by code points, as JSON Schema's maxLength counts them, so no surrogate pair is split. */
const atMostMaxLength = (message: string): string => {
  const points = [...message];
  return points.length > ERROR_MESSAGE_MAX_LENGTH ? `${points.slice(0, ERROR_MESSAGE_MAX_LENGTH - 1).join('')}…` : message;
};

export const errorBody = (code: ErrorCode, message: string = errorCatalogue[code].message): ApiErrorBody => ({
  code,
  message: atMostMaxLength(message),
  status: errorCatalogue[code].status,
});

/** Headers an error answer carries besides the common ones (`WWW-Authenticate`, `Retry-After`). */
export const errorHeaders = (code: ErrorCode): Record<string, string> => {
  const entry: CatalogueEntry = errorCatalogue[code];
  return { ...entry.headers };
};
