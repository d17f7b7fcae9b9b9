/**
 * Raw HTTP for the hostile-input tests, and the properties every answer must have.
 *
 * fetch normalises what it sends (dot segments, header whitespace, methods it forbids), so these
 * tests speak node:http over one keep-alive agent instead: the path, the method, the header
 * values and the body bytes arrive as generated. Each answer is then checked against
 * openapi.json by the same checker contract-setup.ts applies to fetch.
 */
import { Agent, METHODS, request } from 'node:http';
import { expect } from 'vitest';
import { errorCatalogue } from '../../shared/errors';
import { contractViolations } from '../../tools/openapi/answer-check';
import { matchRoute, pathBelowBase } from '../../tools/local-server/route-matcher';

export interface RawRequest {
  readonly method: string;
  /** The request target exactly as sent (path and query). */
  readonly target: string;
  /** Header values; an array sends the header once per value. */
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: string | Uint8Array;
}

export interface RawAnswer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

export interface RawClient {
  send(raw: RawRequest): Promise<RawAnswer>;
  close(): void;
}

/**
 * A request left unanswered this long is a failure (answers normally take milliseconds): more than
 * a request's DynamoDB calls can take in this run, each retried once after its timeout.
 */
const ANSWER_TIMEOUT_MS = 30_000;

/** A client for the server behind `baseUrl` (its origin; targets carry their own /v1). */
export const rawClient = (baseUrl: string): RawClient => {
  const { hostname, port } = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const send = ({ method, target, headers = {}, body }: RawRequest) =>
    new Promise<RawAnswer>((resolve, reject) => {
      // Node frames a GET's body with neither Content-Length nor chunked encoding: say its length.
      const framed =
        body === undefined || Object.keys(headers).some((name) => /^(content-length|transfer-encoding)$/i.test(name))
          ? headers
          : { ...headers, 'Content-Length': String(Buffer.byteLength(body)) };
      const outgoing = request(
        { agent, host: hostname, port, method, path: target, headers: framed as Record<string, string | string[]> },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('error', reject);
          incoming.on('end', () => {
            const answerHeaders = new Headers();
            for (const [name, value] of Object.entries(incoming.headers)) {
              for (const one of Array.isArray(value) ? value : [value ?? '']) answerHeaders.append(name, one);
            }
            resolve({ status: incoming.statusCode ?? 0, headers: answerHeaders, text: Buffer.concat(chunks).toString('utf8') });
          });
        },
      );
      // No retry, even on a kept-alive connection: an answer that never comes is a failure to report.
      outgoing.on('error', reject);
      outgoing.setTimeout(ANSWER_TIMEOUT_MS, () => outgoing.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)));
      outgoing.end(body);
    });
  return { send, close: () => agent.destroy() };
};

/** The answer Node's own HTTP parser gives to what it cannot parse (tools/local-server/server.ts). */
const NOT_HTTP_MESSAGE = 'The request is not valid HTTP.';

/**
 * What any HTTP/1.1 front door makes of the request line (RFC 9112): `invalid` for a method Node's
 * parser does not know or a target with bytes outside visible ASCII; `valid` for a known method
 * and an origin-form path (node:http sends an empty target as '/'); `unclear` for other targets
 * (`*`, no leading slash), which a parser may accept or refuse.
 */
export const requestLine = ({ method, target }: RawRequest): 'valid' | 'invalid' | 'unclear' => {
  if (!METHODS.includes(method) || /[^\x21-\x7e]/.test(target)) return 'invalid';
  return target === '' || target.startsWith('/') ? 'valid' : 'unclear';
};
export const isParseableHttp = (raw: RawRequest) => requestLine(raw) === 'valid';

/** The one documented 5xx a caller can provoke: a route the interface names but does not specify is 501 not_implemented. */
const isNotImplementedRoute = ({ method, target }: RawRequest) => {
  const below = pathBelowBase(new URL(`http://localhost${target.startsWith('/') ? '' : '/'}${target}`).pathname);
  return below !== undefined && matchRoute(method, below)?.route.notImplemented === true;
};

/**
 * Whether the target's path holds a dot segment (`.` or `..`) or a backslash, percent-encoded or
 * not. docs/api.md: the path is routed as sent, never resolved, and no route has such a segment.
 */
const holdsDotSegmentOrBackslash = (target: string): boolean => {
  const [path = ''] = target.split(/[?#]/, 1);
  return /\\|%5c/i.test(path) || path.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
};

/**
 * The properties of every answer, whatever was asked: never 5xx; JSON; a non-2xx answer is the
 * Error shape with `status` equal to the HTTP status and a code the catalogue gives that status;
 * described by openapi.json (a path with a dot segment or a backslash, by the 404 of no route);
 * and no secret the request carried appears anywhere in it.
 */
export const expectSafeAnswer = (raw: RawRequest, answer: RawAnswer, secrets: readonly string[]) => {
  const where = `${raw.method} ${raw.target.slice(0, 200)} → ${answer.status} ${answer.text.slice(0, 300)}`;
  expect(answer.status, where).toBeGreaterThanOrEqual(200);
  if (!(answer.status === 501 && isNotImplementedRoute(raw))) expect(answer.status, where).toBeLessThan(500);
  const everything = `${answer.text}\n${[...answer.headers.entries()].map(([name, value]) => `${name}: ${value}`).join('\n')}`;
  for (const secret of secrets) expect(everything.includes(secret), `${where}: carries a secret the request sent`).toBe(false);

  // The local server's documentation (the OpenAPI document and its HTML reference page) is not the API.
  if (raw.method === 'GET' && answer.status === 200 && /^\/v1\/(openapi\.json|docs(\/.*)?)$/.test(raw.target.split('?')[0] ?? '')) return;
  expect(answer.headers.get('content-type'), where).toBe('application/json');
  if (raw.method === 'HEAD') return; // no body
  if (answer.status >= 300) {
    const body = JSON.parse(answer.text) as Record<string, unknown>;
    expect(Object.keys(body).sort(), where).toEqual(['code', 'message', 'status']);
    expect(body.status, where).toBe(answer.status);
    expect(typeof body.message === 'string' && body.message.length > 0, where).toBe(true);
    const codes = Object.entries(errorCatalogue)
      .filter(([, entry]) => entry.status === answer.status)
      .map(([code]) => code);
    expect(codes, where).toContain(body.code);
  }

  if (requestLine(raw) === 'invalid' || answer.text.includes(NOT_HTTP_MESSAGE)) {
    // Node's parser refused the request before the gateway saw it: only a request line that is not HTTP may cause that.
    expect(requestLine(raw), where).not.toBe('valid');
    expect(answer.status, where).toBe(400);
    expect(answer.text, where).toContain(NOT_HTTP_MESSAGE);
    return;
  }
  if (holdsDotSegmentOrBackslash(raw.target)) {
    // A URL would resolve such a path to another, perhaps a route's: the answer is the 404 of none.
    expect({ status: answer.status, code: errorCodeOf(answer) }, where).toEqual({ status: 404, code: 'not_found' });
    return;
  }
  const url = new URL(`http://127.0.0.1${raw.target.startsWith('/') ? '' : '/'}${raw.target}`);
  const problems = contractViolations({ method: raw.method, url, status: answer.status, headers: answer.headers, body: answer.text });
  expect(problems, where).toEqual([]);
};

/** The Error shape's code, or undefined for a 2xx answer. */
export const errorCodeOf = (answer: RawAnswer): string | undefined =>
  answer.status >= 300 ? (JSON.parse(answer.text) as { code: string }).code : undefined;
