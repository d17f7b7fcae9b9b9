/** What a call can fail with: an answer of the API, no answer, or no answer in time. */
import type { ErrorCode } from './types.js';

export interface PetStoreErrorInit {
  readonly status: number;
  readonly code: ErrorCode;
  readonly message: string;
  readonly requestId: string | undefined;
  readonly retryAfter: number | undefined;
  readonly operation: string | undefined;
}

/** An error answer of the API (any non-2xx status), after any retries. */
export class PetStoreError extends Error {
  override readonly name = 'PetStoreError';
  /** The HTTP status (trust it over the body's, as docs/api.md says). */
  readonly status: number;
  /** The documented code; for an answer without the Error shape, one derived from the status. */
  readonly code: ErrorCode;
  /** `x-amzn-RequestId`: the id in the API's log lines. */
  readonly requestId: string | undefined;
  /** Seconds the API asked to wait (`Retry-After`), when it did. */
  readonly retryAfter: number | undefined;
  /** The operation called (e.g. `createPet`), when known. */
  readonly operation: string | undefined;

  constructor({ status, code, message, requestId, retryAfter, operation }: PetStoreErrorInit) {
    super(message);
    this.status = status;
    this.code = code;
    this.requestId = requestId;
    this.retryAfter = retryAfter;
    this.operation = operation;
  }
}

/** No answer: the connection failed or dropped. */
export class PetStoreNetworkError extends Error {
  override readonly name = 'PetStoreNetworkError';

  constructor(
    message: string,
    /** False only when the request surely never left (connection refused, unknown host). */
    readonly mayHaveReachedServer: boolean,
    readonly operation: string | undefined,
    options?: { cause: unknown },
  ) {
    super(message, options);
  }
}

/** No whole answer within `timeoutMs`: the request was aborted. */
export class PetStoreTimeoutError extends Error {
  override readonly name = 'PetStoreTimeoutError';
  /** Always true: the request was sent, and the server may have acted on it. */
  readonly mayHaveReachedServer = true;

  constructor(
    readonly timeoutMs: number,
    readonly operation: string | undefined,
  ) {
    super(`No answer within ${timeoutMs} ms`);
  }
}

/**
 * A request URL not below `baseUrl` (another host, port or user, or a path out of its base path):
 * refused before anything is sent, so the key goes to no one else.
 */
export class PetStoreUrlError extends Error {
  override readonly name = 'PetStoreUrlError';
  /** Always false: nothing was sent. */
  readonly mayHaveReachedServer = false;

  constructor(
    /** The path as given. */
    readonly path: string,
    readonly operation: string | undefined,
  ) {
    super(`Refused: the path ${JSON.stringify(path)} is not below baseUrl (it must begin with one "/" and stay under baseUrl's path)`);
  }
}

/**
 * A `Link rel="next"` that repeats a cursor already followed: the server's paging goes round in a
 * circle, so `pets.all()` stops instead of asking for the same pages forever.
 */
export class PetStoreRepeatedCursorError extends Error {
  override readonly name = 'PetStoreRepeatedCursorError';

  constructor(
    /** The repeated cursor; null for a next link without one (the first page again). */
    readonly cursor: string | null,
    readonly operation: string | undefined,
  ) {
    super(`${operation ?? 'paging'}: the next page's cursor repeats one already followed; stopped instead of paging in a circle`);
  }
}
