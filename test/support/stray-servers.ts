/**
 * HTTP servers on this machine that are not the API (a stray proxy, another service on another
 * port): each records what it was sent, and its answers are left out of the contract check.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { uncheckedOrigins } from './unchecked-origins';

export interface StrayAnswer {
  readonly status: number;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly authorization: string | undefined;
}

const running: Array<{ server: Server; origin: string }> = [];

/** A server answering with `answer`; `received` lists what it was sent. Stop it with stopStrayServers. */
export const startStrayServer = async (answer: (request: IncomingMessage) => StrayAnswer) => {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    received.push({ method: request.method ?? '', url: request.url ?? '', authorization: request.headers.authorization });
    request.resume();
    const { status, headers = {}, body = '' } = answer(request);
    response.writeHead(status, headers).end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  // Broken on purpose: its answers are not the API's.
  uncheckedOrigins.add(origin);
  running.push({ server, origin });
  return { origin, port, received };
};

export const stopStrayServers = async () => {
  await Promise.all(
    running.splice(0).map(({ server, origin }) => {
      uncheckedOrigins.delete(origin);
      return new Promise((resolve) => server.close(resolve));
    }),
  );
};
