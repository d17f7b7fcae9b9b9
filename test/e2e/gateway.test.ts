/**
 * What the gateway answers on its own, and what a failing database looks like from outside:
 * unknown routes, throttling and unexpected faults (500). Database outages (503) are in faults.test.ts.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  expectCommonHeaders,
  expectError,
  postJson,
  startLocalApi,
  startServerWithMissingPetsTable,
  type LocalApi,
} from '../support/local-api';
import { BASE_PATH } from '../../shared/routes';
import { fixturePath } from '../support/fixture-names';

let api: LocalApi;

/** Sends bytes as they are, and reads the whole answer (the server closes the connection). */
const rawRequest = (url: URL, bytes: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.write(bytes));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
beforeAll(async () => {
  api = await startLocalApi();
});
afterAll(() => api.close());

describe('unknown routes', () => {
  it.each([
    ['GET', `${BASE_PATH}${fixturePath('unknown')}`],
    ['DELETE', '/v1/pets'],
    ['PUT', '/v1/pets/1'],
    ['PATCH', '/v1/pets'],
    ['POST', '/v1/pets/1'],
    ['GET', `${BASE_PATH}/pets/1${fixturePath('owner')}`],
    ['GET', '/v1/pets/'],
    ['GET', '/pets'],
    ['GET', '/v2/pets'],
    ['GET', '/'],
    ['POST', `${BASE_PATH}${fixturePath('orders')}`],
  ])('answers %s %s with 404 not_found, with or without a key', async (method, path) => {
    const origin = new URL(api.url).origin;
    const headerSets: Array<Record<string, string>> = [{}, { Authorization: `Bearer ${api.key}` }];
    for (const headers of headerSets) {
      const response = await fetch(`${origin}${path}`, { method, headers });
      expectCommonHeaders(response);
      await expectError(response, 404, 'not_found');
    }
  });
});

describe('requests that are not quite HTTP', () => {
  it('treats a path starting with // as a path, not a host', async () => {
    const origin = new URL(api.url).origin;
    const response = await rawRequest(
      new URL(origin),
      `GET //evil.example/v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${api.key}\r\nConnection: close\r\n\r\n`,
    );
    expect(response).toMatch(/^HTTP\/1\.1 404 /);
    expect(response).toContain('"code":"not_found"');
  });

  it('answers a request Node cannot parse with 400 in the Error shape', async () => {
    const response = await rawRequest(new URL(api.url), 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 400 /);
    expect(response).toMatch(/content-type: application\/json/i);
    const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as unknown;
    expect(body).toEqual({ code: 'validation_failed', message: expect.any(String), status: 400 });
    expect(response).toMatch(/x-amzn-requestid: [0-9a-f-]{36}/i);
  });

  it('answers a HEAD request Node cannot parse with 400 and no body (RFC 9110)', async () => {
    const response = await rawRequest(new URL(api.url), 'HEAD ? HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(response).toMatch(/^HTTP\/1\.1 400 /);
    expect(response).toMatch(/content-type: application\/json/i);
    expect(response.endsWith('\r\n\r\n')).toBe(true);
  });

  it('closes a connection that asked for an Upgrade after answering, so nothing sent after it waits unanswered', async () => {
    const upgrade =
      `GET /v1/store/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${api.key}\r\n` +
      'Connection: Upgrade\r\nUpgrade: websocket\r\n\r\n';
    const response = await rawRequest(new URL(api.url), `${upgrade}GET /v1/pets?\u00ff HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(response).toMatch(/^HTTP\/1\.1 501 /);
    expect(response).toMatch(/connection: close/i);
    expect(response.match(/^HTTP\/1\.1 /gm)).toHaveLength(1);
  });

  it('answers CONNECT (a tunnel request, which Node would drop unanswered) with 404 not_found', async () => {
    const response = await rawRequest(
      new URL(api.url),
      `CONNECT ${new URL(api.url).host} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${api.key}\r\n\r\n`,
    );
    expect(response).toMatch(/^HTTP\/1\.1 404 /);
    expect(response).toMatch(/content-type: application\/json/i);
    const body = JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as unknown;
    expect(body).toEqual({ code: 'not_found', message: expect.any(String), status: 404 });
  });
});

/** A request with a Host header of the client's choosing (fetch always sends the URL's host). */
const withHost = (url: string, host: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
    const sent = httpRequest(url, { method: init.method ?? 'GET', headers: { ...init.headers, Host: host } }, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers }));
    });
    sent.on('error', reject);
    sent.end(init.body);
  });

describe('the URLs the API writes', () => {
  it("are on the server's own address, whatever Host the client sends", async () => {
    const auth = { Authorization: `Bearer ${api.key}` };
    const created = await withHost(`${api.url}/pets`, 'evil.example', {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    const location = String(created.headers.location);
    expect(location.replace(/\d+$/, '{id}')).toBe(`${api.url}/pets/{id}`);
    await postJson(api, { name: 'Fido', categoryId: 1 });
    const page = await withHost(`${api.url}/pets?limit=1`, 'evil.example', { headers: auth });
    const link = String(page.headers.link);
    expect(link.replace(/cursor=[^>]+>/, 'cursor=…>')).toBe(`<${api.url}/pets?limit=1&cursor=…>; rel="next"`);
    const pet = await withHost(location, 'evil.example', { headers: auth });
    expect(pet.headers.link).toBe(`<${api.url}/pets>; rel="successor-version"`);
  });
});

describe('CORS on the 501 the gateway answers itself', () => {
  it('carries Access-Control-Allow-Origin and the exposed headers for a listed origin, like every other answer', async () => {
    vi.stubEnv('CORS_ALLOWED_ORIGINS', 'https://app.example.com, https://admin.example.com');
    const withCors = await startLocalApi();
    vi.unstubAllEnvs();
    try {
      for (const path of ['/store/orders', '/pets']) {
        const response = await withCors.call(path, {
          headers: { Authorization: `Bearer ${withCors.key}`, Origin: 'https://app.example.com' },
        });
        expect({ path, allowOrigin: response.headers.get('access-control-allow-origin'), vary: response.headers.get('vary') }).toEqual({
          path,
          allowOrigin: 'https://app.example.com',
          vary: 'Origin',
        });
        expect(response.headers.get('access-control-expose-headers')).toMatch(/Link.*Location.*Retry-After.*X-Request-Id/);
      }
      const other = await withCors.call('/store/orders', {
        headers: { Authorization: `Bearer ${withCors.key}`, Origin: 'https://evil.example' },
      });
      expect(other.status).toBe(501);
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await withCors.close();
    }
  });
});

describe('throttling', () => {
  it('answers 429 too_many_requests with Retry-After once the burst is spent', async () => {
    const throttled = await startLocalApi({ throttle: { rate: 0.001, burst: 3 } });
    try {
      const statuses = [];
      for (let index = 0; index < 5; index += 1) statuses.push((await throttled.call('/pets')).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const response = await throttled.call('/pets');
      expect(response.headers.get('retry-after')).toBe('1');
      expectCommonHeaders(response);
      await expectError(response, 429, 'too_many_requests');
    } finally {
      await throttled.close();
    }
  });
});

/**
 * Sends a POST's head and the first bytes of a body declared `declared` bytes long, and resolves
 * with the head of the answer as soon as one comes, while the rest of the body is still unsent;
 * `finish` sends the rest. Resolves with undefined when nothing comes within 20 s.
 */
const partialPost = (url: URL, headers: string, declared: number) => {
  const socket = connect(Number(url.port), url.hostname);
  socket.on('error', () => undefined); // a server that closes while the client sends: the answer is what counts
  socket.write(`POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n${headers}\r\n`);
  socket.write(Buffer.alloc(1_024, 0x20));
  let answer = '';
  const head = new Promise<string | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), 20_000);
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n\r\n')) {
        clearTimeout(timer);
        resolve(answer.slice(0, answer.indexOf('\r\n\r\n')));
      }
    });
  });
  const finish = () => socket.write(Buffer.alloc(declared - 1_024, 0x20));
  return { head, finish, close: () => socket.destroy() };
};

describe('request bodies', () => {
  it.each([
    ['without a key', ''],
    ['with an unknown key', 'Authorization: Bearer petstore_0000000000000000000000000000000000000000000\r\n'],
  ])('answers a POST %s with 401 before its body is sent, never reading it, and closes the connection', async (_, auth) => {
    const post = partialPost(new URL(api.url), auth, 10 * 1024 * 1024);
    try {
      const head = await post.head;
      expect(head ?? 'no answer within 20 s').toMatch(/^HTTP\/1\.1 401 /);
      expect(head).toMatch(/^connection: close$/im);
    } finally {
      post.close();
    }
  });

  it("holds a bounded share of body bytes for one key: past it the key's next body is answered 429 unread, and the bytes come back once answered", async () => {
    const bounded = await startLocalApi({ maxBodyBytesInFlight: 1024 * 1024 });
    const declared = 600 * 1024;
    const auth = `Authorization: Bearer ${bounded.key}\r\n`;
    const bigPost = () => postJson(bounded, { name: 'Rex', categoryId: 1, padding: 'x'.repeat(declared) });
    const hold = () => {
      const post = partialPost(new URL(bounded.url), auth, declared);
      const answered = { yet: false };
      void post.head.then((head) => (answered.yet = head !== undefined));
      return { ...post, answered };
    };
    let holding = hold();
    try {
      // Once the first request is authorized, its 600 KiB are held until it is answered: more than the key's share of 1 MiB.
      let refused: Response | undefined;
      // Generous: on a busy machine the held request may take seconds to be authorized.
      for (const deadline = Date.now() + 40_000; !refused && Date.now() < deadline;) {
        const response = await bigPost();
        if (response.status === 429) refused = response;
        else await response.arrayBuffer();
        // Authorized while one of these held its body, the held request was the one refused, and
        // answered: it holds nothing, so it starts again.
        if (!refused && holding.answered.yet) {
          holding.close();
          holding = hold();
        }
      }
      if (!refused) throw new Error('no request was refused while 600 KiB of another were held');
      expect(refused.headers.get('retry-after')).toBe('1');
      await expectError(refused, 429, 'too_many_requests');

      holding.finish();
      // The held body, read whole, is the handler's to judge: over its 16 KiB, 413.
      expect(await holding.head).toMatch(/^HTTP\/1\.1 413 /);
      await expectError(await bigPost(), 413, 'payload_too_large');
    } finally {
      holding.close();
      await bounded.close();
    }
  }, 90_000);
});

describe('request bodies of unknown length (chunked)', () => {
  it("counts them as they arrive: past the bytes held at once, the server's own 503 and the connection closed, the rest unread", async () => {
    const bounded = await startLocalApi({ maxBodyBytesInFlight: 64 * 1024 });
    const { hostname, port } = new URL(bounded.url);
    const socket = connect(Number(port), hostname);
    socket.on('error', () => undefined);
    try {
      const answer = new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.on('close', () => resolve(text));
      });
      socket.write(
        `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${bounded.key}\r\n` +
          'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      );
      // 96 KiB, never ended: the server must answer without waiting for the end.
      for (let index = 0; index < 3; index += 1) socket.write(`8000\r\n${' '.repeat(0x8000)}\r\n`);
      const text = await answer;
      expect(text).toMatch(/^HTTP\/1\.1 503 /);
      expect(text).toMatch(/^connection: close$/im);
      expect(text).toMatch(/^retry-after: 1$/im);
      expect(text).toContain('"code":"service_unavailable"');
    } finally {
      socket.destroy();
      await bounded.close();
    }
  });
});

describe('unexpected faults', () => {
  it('answers 500 internal_error without naming the table, when the table is missing', async () => {
    // A deployment mistake, not an outage: the server's pets table does not exist.
    const server = await startServerWithMissingPetsTable(api, 'no-such-pets-table');
    try {
      const response = await fetch(`${server.url}/pets`, { headers: { Authorization: `Bearer ${api.key}` } });
      const text = await response.clone().text();
      expect(text).not.toContain('no-such-pets-table');
      expect(text).not.toMatch(/at .*\.ts:\d+/);
      expectCommonHeaders(response);
      await expectError(response, 500, 'internal_error');
    } finally {
      await server.close();
    }
  });
});

describe('names that objects already have', () => {
  it.each(['constructor', 'toString', 'hasOwnProperty', '__proto__'])('refuses the query parameter %s as unknown', async (name) => {
    const body = await expectError(await api.call(`/pets?${name}=1`), 400, 'validation_failed');
    expect(body.message).toBe(`Unknown query parameter '${name}'.`);
  });

  it.each(['constructor', 'toString', 'hasOwnProperty'])('ignores a header named %s', async (name) => {
    const response = await api.call('/pets', { headers: { Authorization: `Bearer ${api.key}`, [name]: '' } });
    expect(response.status).toBe(200);
  });
});

describe('an API key sent where a name goes', () => {
  it('is never repeated in the message', async () => {
    for (const response of [await api.call(`/pets?${api.key}=1`), await postJson(api, { [api.key]: 1, name: 'Rex', categoryId: 1 })]) {
      const body = await expectError(response, 400, 'validation_failed');
      expect(body.message).not.toContain(api.key);
      expect(body.message).toContain("'petstore_…'");
    }
  });
});
