/**
 * The client: each call sends the key, retries what is safe to retry (GETs, and creates with an
 * Idempotency-Key) on 429 too_many_requests, 503, a dropped connection or a timeout, with
 * exponential backoff and full jitter never sooner than Retry-After, and throws one error class
 * per kind of failure. The key lives in a private field: no error, log or enumerable field holds it.
 */
import { PetStoreError, PetStoreNetworkError, PetStoreRepeatedCursorError, PetStoreTimeoutError, PetStoreUrlError } from './errors.js';
import { instantOf, linkOf, retryAfterSeconds } from './headers.js';
import {
  OPERATIONS,
  isErrorCode,
  type ErrorCode,
  type ListPetsQuery,
  type NewPet,
  type OperationId,
  type Pet,
  type PetId,
  type PetStatus,
  type SuccessOf,
} from './types.js';

/** An operation's id, method and path (its parameters filled in), as the document gives them. */
const requestOf = (operation: OperationId, parameters: Readonly<Record<string, string | number>> = {}) => {
  const { method, path } = OPERATIONS[operation];
  return { operation, method, path: path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(parameters[name]))) };
};

export interface DeprecationNotice {
  readonly operation: string;
  /** When it was deprecated (`Deprecation`). */
  readonly deprecation: Date | undefined;
  /** When it stops working (`Sunset`): from then on it answers 410 gone. */
  readonly sunset: Date | undefined;
  /** What replaces it (`Link rel="successor-version"`). */
  readonly link: string | undefined;
}

export interface RetryNotice {
  readonly operation: string | undefined;
  /** The attempt about to be made: 2 for the first retry. */
  readonly attempt: number;
  readonly delayMs: number;
  readonly error: PetStoreError | PetStoreNetworkError | PetStoreTimeoutError;
}

export interface ResponseNotice {
  readonly operation: string | undefined;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** The answer, its body already read: see `body` and `text`. */
  readonly response: Response;
  readonly body: unknown;
  /** The body as received. */
  readonly text: string;
  /** This attempt's time, from sending the request to reading the whole body, in ms (by `now`). */
  readonly durationMs: number;
}

export interface PetStoreOptions {
  /** The API's base URL, with `/v1`: `https://<api-host>/v1`. http or https, without credentials, query or fragment (a TypeError otherwise). */
  readonly baseUrl: string;
  readonly apiKey: string;
  /** Per attempt, until the whole body is read. Default 10,000. */
  readonly timeoutMs?: number;
  /** Retries after the first attempt. Default 3. */
  readonly maxRetries?: number;
  /** No retry starts whose wait would end later than this after the first attempt began. Default 30,000. */
  readonly maxElapsedMs?: number;
  /** The backoff before retry n (from 0) is random in [0, min(maxDelayMs, baseDelayMs × 2^n)). Defaults 200 and 20,000. */
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Default: the global fetch, looked up at each call. */
  readonly fetch?: typeof fetch;
  /** Called once per operation and client when an answer says the operation is deprecated. */
  readonly onDeprecation?: (notice: DeprecationNotice) => void;
  /** Called before each retry's wait. */
  readonly onRetry?: (notice: RetryNotice) => void;
  /** Called with every answer, each attempt's: for tools that check raw headers and statuses. */
  readonly onResponse?: (notice: ResponseNotice) => void;
  /** For tests: the wait (it must reject when `signal` aborts), the random source in [0, 1), the clock in ms. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly random?: () => number;
  readonly now?: () => number;
}

export interface CallOptions {
  /** Cancels the call at any point: while waiting for an answer or between retries. Rejects with its reason. */
  readonly signal?: AbortSignal;
}

export interface RawRequest extends CallOptions {
  /** Names the call in hooks and errors; deprecation is reported per operation. */
  readonly operation?: OperationId;
  /** Default GET. Only GETs and requests with an idempotency key are retried. */
  readonly method?: string;
  /**
   * Below the base URL, e.g. `/pets/42`: it begins with one `/` (or `?`) and stays under the base
   * URL's path. Any other (`:8443/pets`, `//host`, `@host`, a whole URL, `/../`) is refused with a
   * PetStoreUrlError before anything is sent.
   */
  readonly path: string;
  /** Added to the path's own query; undefined values are left out. */
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  /** Sent as JSON. */
  readonly body?: unknown;
  readonly idempotencyKey?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** False: no Authorization header. */
  readonly auth?: boolean;
}

export interface RawAnswer {
  /** The last attempt's answer, its body already read. */
  readonly response: Response;
  /** The body: parsed JSON, the text when not JSON, undefined when empty. */
  readonly body: unknown;
  /** The body as received. */
  readonly text: string;
  /** The answer as an error, when its status is not 2xx. */
  readonly error: PetStoreError | undefined;
}

export interface Page {
  readonly pets: Pet[];
  readonly hasNext: boolean;
  /** The next page (`Link rel="next"`); undefined after the last. */
  next(options?: CallOptions): Promise<Page | undefined>;
}

export type ListOptions = Omit<ListPetsQuery, 'cursor'> & CallOptions;
export interface AllOptions extends CallOptions {
  readonly status?: PetStatus;
  /** Pets per request (`limit`). */
  readonly pageSize?: number;
}
export interface CreateOptions extends CallOptions {
  /** Default: a new UUID, the same for every retry of this call. False: send none (then a create is never retried). */
  readonly idempotencyKey?: string | false;
}

// RFC 6750's token68: anything else could not be sent, and fetch's refusal would quote it.
const KEY_SYNTAX = /^[\w.~+/-]+=*$/;
// One "/" and then no other "/" or "\\" (URLs read "\\" as "/"): two would begin a host's name.
const PATH_BELOW = /^(?:\/(?![/\\])|\?|$)/;
// Errors of a connection that surely never carried the request.
const NOT_SENT = ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN'];

const defaultSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    if (signal?.aborted) abort();
    else signal?.addEventListener('abort', abort, { once: true });
  });

/** baseUrl, parsed: http(s), without credentials, query or fragment, which a request would lose or send elsewhere. */
const parseBaseUrl = (baseUrl: string): URL => {
  let base: URL | undefined;
  try {
    base = new URL(baseUrl);
  } catch {
    // Refused below, without quoting it: it may hold a password.
  }
  if (!base || !/^https?:$/.test(base.protocol) || base.username || base.password || base.search || base.hash)
    throw new TypeError('PetStore: baseUrl must be an http or https URL without credentials, query or fragment');
  return base;
};

/**
 * The URL of `path` below `base`, built by the URL parser (not by joining strings, where
 * `:8443/pets` or `@evil.example` after a host would name another server): the key goes to
 * base's origin, under its path, or nowhere.
 */
const urlBelow = (base: URL, path: string, operation: string | undefined): URL => {
  const prefix = base.pathname.replace(/\/+$/, '');
  const url = PATH_BELOW.test(path) ? new URL(prefix + path, base.origin) : undefined;
  const below = url?.pathname === prefix || url?.pathname.startsWith(`${prefix}/`);
  if (!url || url.origin !== base.origin || !below) throw new PetStoreUrlError(path, operation);
  return url;
};

/** The code of an answer without the Error shape (a proxy's, say), from its status. */
const codeForStatus = (status: number): ErrorCode =>
  status === 429 ? 'too_many_requests' : status === 503 ? 'service_unavailable' : status < 500 ? 'request_refused' : 'internal_error';

const parseBody = (text: string): unknown => {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

const isTransient = (error: Error) => !(error instanceof PetStoreError) || error.status === 503 || error.code === 'too_many_requests';

export class PetStore {
  readonly baseUrl: string;
  readonly pets: {
    /** One page of pets; `next()` follows `Link rel="next"`. */
    list(options?: ListOptions): Promise<Page>;
    /** Every pet, page after page; a next link that repeats a cursor ends it with a PetStoreRepeatedCursorError. */
    all(options?: AllOptions): AsyncGenerator<Pet, void, undefined>;
    /** Creates a pet, safe to retry: with an Idempotency-Key, new unless given. */
    create(pet: NewPet, options?: CreateOptions): Promise<SuccessOf<'createPet'>>;
    /** @deprecated The API deprecated getPet: use `list` with a status filter. Reported once through `onDeprecation`. */
    get(id: PetId, options?: CallOptions): Promise<SuccessOf<'getPet'>>;
  };
  readonly #base: URL;
  readonly #apiKey: string;
  readonly #options: Omit<PetStoreOptions, 'apiKey' | 'baseUrl'>;
  readonly #reported = new Set<string>();

  constructor({ baseUrl, apiKey, ...options }: PetStoreOptions) {
    if (typeof apiKey !== 'string' || !KEY_SYNTAX.test(apiKey)) throw new TypeError('PetStore: apiKey is missing or not a bearer token');
    this.#base = parseBaseUrl(baseUrl);
    this.baseUrl = String(baseUrl).replace(/\/+$/, '');
    this.#apiKey = apiKey;
    this.#options = options;
    type Query = Record<string, string | number | undefined>;
    /** One page's pets, and the query of the next (`Link rel="next"`), if any. */
    const fetchPage = async (query: Query, signal?: AbortSignal): Promise<{ pets: Pet[]; nextQuery: Query | undefined }> => {
      const { response, body, error } = await this.raw({ ...requestOf('listPets'), query, signal });
      if (error) throw error;
      if (!Array.isArray(body)) throw new TypeError(`listPets: HTTP ${response.status} without a JSON array`);
      const next = linkOf(response.headers, 'next');
      // The key goes only to baseUrl: the next page's query is taken from the link, not its host.
      const nextQuery = next === undefined ? undefined : Object.fromEntries(new URL(next, response.url || this.baseUrl).searchParams);
      return { pets: body, nextQuery };
    };
    const listPage = async (query: Query, signal?: AbortSignal): Promise<Page> => {
      const { pets, nextQuery } = await fetchPage(query, signal);
      return {
        pets,
        hasNext: nextQuery !== undefined,
        next: async (options = { signal }) => (nextQuery ? listPage(nextQuery, options.signal) : undefined),
      };
    };
    this.pets = {
      list: ({ signal, ...query } = {}) => listPage(query, signal),
      all: async function* ({ status, pageSize, signal } = {}) {
        // The cursors followed so far; null is the first page's (none). A repeat would loop forever.
        const followed = new Set<unknown>([null]);
        let page = await fetchPage({ status, limit: pageSize }, signal);
        for (;;) {
          yield* page.pets;
          if (!page.nextQuery) return;
          const cursor = page.nextQuery.cursor ?? null;
          if (followed.has(cursor)) throw new PetStoreRepeatedCursorError(cursor === null ? null : String(cursor), 'listPets');
          followed.add(cursor);
          page = await fetchPage(page.nextQuery, signal);
        }
      },
      create: async (pet, { idempotencyKey = globalThis.crypto.randomUUID(), signal } = {}) =>
        this.#call({
          ...requestOf('createPet'),
          body: pet,
          idempotencyKey: idempotencyKey || undefined,
          signal,
        }),
      get: async (id, { signal } = {}) => this.#call({ ...requestOf('getPet', { petId: id }), signal }),
    };
  }

  /**
   * Whether the region that answers can read its tables: `{ status: 'ok' }`, or a PetStoreError
   * 503 (after the client's retries). Sent without the key, which the operation does not read.
   */
  async health({ signal }: CallOptions = {}): Promise<SuccessOf<'getHealth'>> {
    return this.#call({ ...requestOf('getHealth'), auth: false, signal });
  }

  /**
   * One request with the client's key, retries and error parsing, answering whatever status comes
   * last (an error status too, in `error`): for tools that check headers and statuses themselves.
   * Throws only for a path not below the base URL (PetStoreUrlError, nothing sent), no answer
   * (PetStoreNetworkError, PetStoreTimeoutError) or an abort.
   */
  async raw(request: RawRequest): Promise<RawAnswer> {
    const { maxRetries = 3, maxElapsedMs = 30_000, baseDelayMs = 200, maxDelayMs = 20_000 } = this.#options;
    const { random = Math.random, now = Date.now, sleep = defaultSleep, onRetry } = this.#options;
    const { method = 'GET', idempotencyKey, signal, query = {} } = request;
    const url = urlBelow(this.#base, request.path, request.operation);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
    const retryable = method.toUpperCase() === 'GET' || idempotencyKey !== undefined;
    const started = now();
    for (let attempt = 1; ; attempt += 1) {
      signal?.throwIfAborted();
      let outcome: RawAnswer | PetStoreNetworkError | PetStoreTimeoutError;
      try {
        outcome = await this.#attempt(request, url, attempt);
      } catch (error) {
        if (!(error instanceof PetStoreNetworkError || error instanceof PetStoreTimeoutError)) throw error;
        outcome = error;
      }
      const failure = outcome instanceof Error ? outcome : outcome.error;
      if (failure && retryable && attempt <= maxRetries && isTransient(failure)) {
        const backoff = random() * Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1));
        const delayMs = Math.max(backoff, ((failure as PetStoreError).retryAfter ?? 0) * 1000);
        if (now() - started + delayMs <= maxElapsedMs) {
          onRetry?.({ operation: request.operation, attempt: attempt + 1, delayMs, error: failure });
          await sleep(delayMs, signal);
          continue;
        }
      }
      if (outcome instanceof Error) throw outcome;
      return outcome;
    }
  }

  /**
   * One operation's success: its body, or nothing for an operation whose success has no content
   * (a 204, as openapi.json says); an error answer throws.
   */
  async #call<Id extends OperationId>(request: RawRequest & { operation: Id }): Promise<SuccessOf<Id>> {
    const { response, body, error } = await this.raw(request);
    if (error) throw error;
    const noContent = 'noContent' in OPERATIONS[request.operation];
    if (noContent && response.status !== 204)
      throw new TypeError(`${request.operation}: HTTP ${response.status} where the document promises 204 with no content`);
    return (noContent ? undefined : body) as SuccessOf<Id>;
  }

  async #attempt(request: RawRequest, url: URL, attempt: number): Promise<RawAnswer> {
    const { timeoutMs = 10_000, onResponse, onDeprecation, now = Date.now } = this.#options;
    const { operation, method = 'GET', path, body, idempotencyKey, auth = true, signal } = request;
    const headers: Record<string, string> = { accept: 'application/json', ...request.headers };
    if (auth) headers.authorization = `Bearer ${this.#apiKey}`;
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    if (body !== undefined) headers['content-type'] = 'application/json';

    // One controller per attempt: the caller's signal and the timeout both abort it.
    const controller = new AbortController();
    const abort = () => controller.abort(signal?.reason);
    signal?.addEventListener('abort', abort, { once: true });
    let timedOut = false;
    const sentAt = now();
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    let response: Response;
    let text: string;
    try {
      // Called unbound: a browser's fetch refuses any `this` but the global one.
      const send = this.#options.fetch ?? globalThis.fetch;
      response = await send(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        // The API never redirects: a 3xx is answered as it is, and the key goes nowhere else.
        redirect: 'manual',
        signal: controller.signal,
      });
      text = await response.text();
    } catch (error) {
      signal?.throwIfAborted();
      if (timedOut) throw new PetStoreTimeoutError(timeoutMs, operation);
      const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
      throw new PetStoreNetworkError(
        `No answer from ${url.origin}: ${String(code ?? (error as Error)?.message ?? error)}`,
        !NOT_SENT.includes(String(code)),
        operation,
        {
          cause: error,
        },
      );
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
    }

    const parsed = parseBody(text);
    onResponse?.({ operation, attempt, response, body: parsed, text, durationMs: now() - sentAt });
    const reportAs = operation ?? `${method} ${path}`;
    if (onDeprecation && response.headers.has('deprecation') && !this.#reported.has(reportAs)) {
      this.#reported.add(reportAs);
      onDeprecation({
        operation: reportAs,
        deprecation: instantOf(response.headers.get('deprecation')),
        sunset: instantOf(response.headers.get('sunset')),
        link: linkOf(response.headers, 'successor-version'),
      });
    }
    if (response.ok) return { response, body: parsed, text, error: undefined };
    const shaped = (parsed ?? {}) as { code?: unknown; message?: unknown };
    const documented = isErrorCode(shaped.code) && typeof shaped.message === 'string';
    const error = new PetStoreError({
      status: response.status,
      code: documented ? (shaped.code as ErrorCode) : codeForStatus(response.status),
      message: documented ? (shaped.message as string) : `HTTP ${response.status}, not in the API's Error shape`,
      requestId: response.headers.get('x-amzn-requestid') ?? response.headers.get('x-request-id') ?? undefined,
      retryAfter: retryAfterSeconds(response.headers.get('retry-after'), now()),
      operation,
    });
    return { response, body: parsed, text, error };
  }
}
