/**
 * Setup for every test file: wraps fetch so that each answer from a local server's API is
 * checked against openapi.json (tools/openapi/answer-check.ts, the check `npm run smoke` uses).
 * A violation rejects the fetch, and so fails the test that made the request.
 */
import { contractViolations } from '../../tools/openapi/answer-check';
import { uncheckedOrigins } from './unchecked-origins';

/** Marks the wrapper: a worker that runs several files in one module graph (the unit project) wraps fetch once. */
const CHECKED = Symbol.for('pet-store.contract-checked-fetch');

const isLocalApi = (url: URL) =>
  (url.hostname === '127.0.0.1' || url.hostname === 'localhost') && url.pathname.startsWith('/v1') && !uncheckedOrigins.has(url.origin);

const wrap = (originalFetch: typeof fetch): typeof fetch =>
  Object.assign(
    async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const response = await originalFetch(input, init);
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (!isLocalApi(url)) return response;
      const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
      const body = await response.clone().text();
      const problems = contractViolations({ method, url, status: response.status, headers: response.headers, body });
      if (problems.length > 0) throw new Error(`The answer is not described by openapi.json:\n- ${problems.join('\n- ')}`);
      return response;
    },
    { [CHECKED]: true },
  );

if (!(CHECKED in globalThis.fetch)) globalThis.fetch = wrap(globalThis.fetch);
