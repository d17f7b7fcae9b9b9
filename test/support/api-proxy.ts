/**
 * An HTTP proxy in front of a local API that a test uses to break it: each answer passes through
 * `breakage`, which may change its status, headers or body, as a faulty deployment would answer;
 * `alterRequest` may change a request's headers before it goes on (e.g. add a key it lacks).
 * Like any reverse proxy, it rewrites the API's own address in `Location` and `Link` to its own,
 * so that an unbroken answer through it is a correct answer of the proxy's address.
 */
import { once } from 'node:events';
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { uncheckedOrigins } from './unchecked-origins';

export interface ProxiedAnswer {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
}

export interface ProxiedRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly path: string;
  readonly authorization?: string;
}

/** Changes an answer in place. */
export type Breakage = (answer: ProxiedAnswer, request: ProxiedRequest) => void;

/** Changes the headers of a request in place, before it is forwarded. */
export type RequestBreakage = (headers: IncomingHttpHeaders) => void;

export interface ApiProxy {
  /** The proxy's base URL, ending in /v1 like the API's. */
  readonly url: string;
  close(): Promise<void>;
}

const readAll = async (stream: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

const REWRITTEN_HEADERS = ['location', 'link'];

export const startApiProxy = async (
  apiUrl: string,
  breakage: Breakage,
  alterRequest: RequestBreakage = () => undefined,
): Promise<ApiProxy> => {
  const api = new URL(apiUrl);
  let ownOrigin = '';

  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<ProxiedAnswer>((resolve, reject) => {
      const headers = { ...req.headers, host: api.host };
      alterRequest(headers);
      const outgoing = request({ host: api.hostname, port: api.port, path: req.url, method: req.method, headers }, (answer) => {
        readAll(answer).then((answerBody) => {
          const answerHeaders: Record<string, string> = {};
          for (const [name, value] of Object.entries(answer.headers)) {
            if (value === undefined || name === 'content-length' || name === 'transfer-encoding' || name === 'connection') continue;
            const text = Array.isArray(value) ? value.join(', ') : value;
            answerHeaders[name] = REWRITTEN_HEADERS.includes(name) ? text.replaceAll(api.origin, ownOrigin) : text;
          }
          resolve({ status: answer.statusCode ?? 502, headers: answerHeaders, body: answerBody.toString('utf8') });
        }, reject);
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const server = createServer(async (req, res) => {
    try {
      const answer = await forward(req, await readAll(req));
      breakage(answer, { method: req.method ?? 'GET', path: req.url ?? '/', authorization: req.headers.authorization });
      res.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) });
      res.end(answer.body);
    } catch {
      req.socket.destroy();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  ownOrigin = `http://127.0.0.1:${port}`;
  // Its answers are wrong on purpose: the check of every answer against openapi.json lets them be.
  uncheckedOrigins.add(ownOrigin);
  return {
    url: `${ownOrigin}${api.pathname}`,
    close: async () => {
      uncheckedOrigins.delete(ownOrigin);
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
};
