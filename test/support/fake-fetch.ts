/** A fetch that answers from a script, for the client's unit tests: it records every request. */

export interface SentRequest {
  readonly url: URL;
  readonly method: string;
  readonly headers: Headers;
  readonly body: string | undefined;
}

export interface ScriptedAnswer {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * What fetch does for one request: answer, fail as undici does when the connection drops after the
 * request went out (`drop`) or is refused (`refuse`), or wait until the request is aborted (`hang`).
 */
export type Scripted = ScriptedAnswer | 'drop' | 'refuse' | 'hang';

const failure = (code: string, message: string) => new TypeError('fetch failed', { cause: Object.assign(new Error(message), { code }) });

export const errorAnswer = (status: number, code: string, headers: Record<string, string> = {}): ScriptedAnswer => ({
  status,
  body: { code, message: `refused: ${code}`, status },
  headers: { 'x-amzn-RequestId': `request-${code}`, ...headers },
});

/** Answers the script in order; past its end, the last entry again. */
export const scriptedFetch = (...script: Scripted[]) => {
  const sent: SentRequest[] = [];
  const fetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const headers = new Headers(init.headers);
    sent.push({ url: new URL(String(input)), method: init.method ?? 'GET', headers, body: init.body as string | undefined });
    const next = script[Math.min(sent.length - 1, script.length - 1)];
    if (next === undefined) throw new Error('nothing scripted');
    if (next === 'drop') throw failure('UND_ERR_SOCKET', 'other side closed');
    if (next === 'refuse') throw failure('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9');
    if (next === 'hang')
      return new Promise((_, reject) => {
        const { signal } = init;
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    const body = next.body === undefined ? null : typeof next.body === 'string' ? next.body : JSON.stringify(next.body);
    return new Response(body, { status: next.status, headers: { 'content-type': 'application/json', ...next.headers } });
  };
  return { fetch: fetch as typeof globalThis.fetch, sent };
};

/** A sleep that returns at once and records what it was asked to wait, on a clock it advances. */
export const fakeTime = () => {
  const waits: number[] = [];
  let clock = 0;
  return {
    waits,
    now: () => clock,
    sleep: async (ms: number, signal?: AbortSignal) => {
      signal?.throwIfAborted();
      waits.push(ms);
      clock += ms;
    },
  };
};
