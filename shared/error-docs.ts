/**
 * What the OpenAPI document says of each error code: when an operation answers it, in the same
 * words in every operation. Beside the catalogue (shared/errors.ts), which every function's bundle
 * holds, so that no bundle carries the document's text; a new code is asked for here by the compiler.
 */
import { MAX_BODY_BYTES } from './http/json-body';
import type { ErrorCode } from './errors';

export const errorDocs = {
  invalid_json: 'the body is empty, not UTF-8, not valid JSON, or repeats a member name in one object (I-JSON, RFC 7493)',
  unsupported_media_type: "the body is not sent as JSON ('Content-Type: application/json')",
  validation_failed:
    'a field or parameter is missing, of the wrong type, out of range, unknown (any query parameter of an operation that takes none) or repeated, ' +
    'or a `name` holds a control character or a lone surrogate',
  invalid_cursor: 'the cursor is malformed, edited, or from a listing with another status',
  unauthorized: 'no Authorization header, not the Bearer scheme, or an unknown, revoked or expired key',
  forbidden:
    "the API key's scopes do not cover this operation, the key is on no usage plan of this stage (ask the API's operators), " +
    'or the gateway blocked the request',
  // Said of the resource the path names, whichever it is: the words are every operation's.
  not_found: 'nothing has the id the path names',
  gone: 'the operation is past its sunset',
  idempotency_key_reused: 'this `Idempotency-Key` was already used with a different body',
  payload_too_large: `the body is over ${MAX_BODY_BYTES} bytes`,
  too_many_requests:
    "over the API key's plan rate (see `RateLimit-Policy`), the whole stage's, or a keyless operation's own: retry after Retry-After seconds",
  quota_exceeded: "the API key's usage plan quota is used up until its period starts again: Retry-After is a fixed hint",
  request_refused: 'the gateway refused the request for a reason it has no code for: the HTTP status says which',
  internal_error: 'an unexpected error; details are logged, not sent',
  not_implemented: 'the operation is listed by the interface but not specified',
  service_unavailable: 'the database is unavailable: retry after Retry-After seconds',
} as const satisfies Record<ErrorCode, string>;
