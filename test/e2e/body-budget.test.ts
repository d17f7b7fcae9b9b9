/**
 * The bytes of request bodies the local server holds at once, under attack: connections that
 * declare big bodies, send one byte and stall. One key cannot hold the budget from other keys;
 * a stalled body is cut off after the body deadline; when keys together do fill it, the server's
 * refusal is its own (503, not charged to the client, logged as what it is); and every request,
 * even one whose client goes away mid-body, writes exactly one access line.
 */
import { request } from 'node:http';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AccessLogLine } from '../../shared/access-log';
import type { Plans } from '../../shared/plans';
import { runKeysCommand } from '../../tools/keys/cli';
import { GATEWAY_MAX_BODY_BYTES } from '../../tools/local-server/gateway';
import { KEY_SHARE_OF_BODIES_IN_FLIGHT } from '../../tools/local-server/body-budget';
import { BODIES_IN_FLIGHT_MAX_BYTES } from '../../tools/local-server/server';
import { writePlansFile } from '../support/plans-file';
import { expectError, ROOMY_PLANS, startLocalApi, type LocalApi } from '../support/local-api';
import { keyTablesEnv } from '../support/tables';

/** Short, so that the tests wait for it; long enough for a few requests on a busy machine. */
const BODY_TIMEOUT_SECONDS = 3;
/** A wait for what should come at once, or right after the deadline: bounded, so a failure is a message, not a hang. */
const BOUND_MS = (BODY_TIMEOUT_SECONDS + 10) * 1_000;
/** A plan whose quota is one request a day: a request charged to it shows in the next one's answer. */
const ONE_A_DAY = 'one-a-day-fixture';
const PLANS: Plans = { ...ROOMY_PLANS, [ONE_A_DAY]: { rateLimit: 1_000, burstLimit: 1_000, quota: { limit: 1, period: 'DAY' } } };

let api: LocalApi;
const plansFile = writePlansFile(PLANS);
const accessLines: AccessLogLine[] = [];
const wakeOnLine = new Set<() => void>();

beforeAll(async () => {
  api = await startLocalApi({
    plans: PLANS,
    bodyTimeoutSeconds: BODY_TIMEOUT_SECONDS,
    accessLog: (line) => {
      accessLines.push(line);
      for (const wake of wakeOnLine) wake();
    },
  });
});
// A test that fails leaves no stalled post holding bytes for the next.
const sockets: Array<{ destroy(): void }> = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
});
afterAll(async () => {
  await api.close();
  plansFile.remove();
});

/** Rejects with `what` when `promise` has not settled within BOUND_MS. */
const within = <T>(promise: Promise<T>, what: string): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${BOUND_MS} ms`)), BOUND_MS);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
};

/**
 * Each request of these tests comes from a loopback address of its own, so that its access line,
 * which holds no value a client writes, is found by its source address.
 */
let sources = 0;
const nextSourceAddress = () => {
  sources += 1;
  return `127.0.${Math.floor(sources / 250)}.${(sources % 250) + 2}`;
};

/** The access line of the request sent from this address, once it is written. */
const accessLineOf = (sourceIp: string): Promise<AccessLogLine> =>
  within(
    new Promise<AccessLogLine>((resolve) => {
      const look = () => {
        const line = accessLines.find((candidate) => candidate.sourceIp === sourceIp);
        if (!line) return;
        wakeOnLine.delete(look);
        resolve(line);
      };
      wakeOnLine.add(look);
      look();
    }),
    `the access line of ${sourceIp}`,
  );

const linesOf = (sourceIp: string) => accessLines.filter((line) => line.sourceIp === sourceIp);

/** `npm run keys -- …` on the server's keys table and plans: a new key, or a key's usage. */
const keysTool = async (...argv: string[]): Promise<string> => {
  const lines: string[] = [];
  const code = await runKeysCommand(argv, {
    env: { ...keyTablesEnv(inject('dynamodbEndpoint'), api.tables), PLANS_FILE: plansFile.path },
    print: (line) => lines.push(line),
  });
  expect(code).toBe(0);
  return lines[0] ?? '';
};
const newKey = async (plan: string) =>
  JSON.parse(await keysTool('create', '--name', `body-budget-${plan}`, '--plan', plan, '--json')) as { id: string; key: string };
const requestsToday = async (keyId: string): Promise<number> => {
  const { days } = JSON.parse(await keysTool('usage', keyId, '--json')) as { days: Array<{ requests: number }> };
  return days.at(-1)?.requests ?? 0;
};

interface RawAnswer {
  readonly status: number;
  readonly head: string;
  readonly body: string;
  /** Milliseconds from sending the request to the server closing the connection. */
  readonly afterMs: number;
}

/** A chunked body's bytes (RFC 9112, section 7.1), without extensions or trailers. */
const unchunked = (text: string): string => {
  let body = '';
  for (let at = 0; ;) {
    const lineEnd = text.indexOf('\r\n', at);
    const size = Number.parseInt(text.slice(at, lineEnd), 16);
    if (!(size > 0)) return body;
    body += text.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
};

/**
 * A POST /pets over a socket of its own, declaring `declared` bytes of body and sending one: the
 * attacker's request. Its answer comes when the server closes the connection (an unread body is
 * never drained past 64 KiB); `answered` says whether it has yet.
 */
const stalledPost = (key: string, declared: number) => {
  const sourceIp = nextSourceAddress();
  const { hostname, port } = new URL(api.url);
  const started = performance.now();
  const socket = connect({ port: Number(port), host: hostname, localAddress: sourceIp });
  sockets.push(socket);
  socket.on('error', () => undefined); // the answer, or its absence, is what counts
  socket.write(
    `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n{`,
  );
  const state = { answered: false };
  const onAnswer = new Set<() => void>();
  const answer = new Promise<RawAnswer>((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('close', () => {
      state.answered = true;
      for (const wake of onAnswer) wake();
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1] ?? 0);
      resolve({
        status,
        head,
        body: /^transfer-encoding: chunked$/im.test(head) ? unchunked(body) : body,
        afterMs: performance.now() - started,
      });
    });
  });
  return {
    sourceIp,
    answer: within(answer, `the answer to ${sourceIp}`),
    state,
    onAnswer,
    /** Goes away: what was sent is delivered, then the connection is closed. */
    hangUp: () => socket.end(),
    destroy: () => socket.destroy(),
  };
};
type StalledPost = ReturnType<typeof stalledPost>;

/** Resolves once `count` of `posts` are answered, or after `ms` (the bound, for a server that answers fewer). */
const answered = (posts: readonly StalledPost[], count: number, ms: number) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      for (const one of posts) one.onAnswer.delete(look);
      resolve();
    }
    function look() {
      if (posts.filter((one) => one.state.answered).length >= count) done();
    }
    for (const one of posts) one.onAnswer.add(look);
    look();
  });

/** A POST /pets of a valid pet from `key`, sent from `sourceIp` so that its access line can be found. */
const post = (key: string, sourceIp: string) =>
  new Promise<Response>((resolve, reject) => {
    const body = JSON.stringify({ name: 'Rex', categoryId: 1 });
    const sent = request(`${api.url}/pets`, {
      method: 'POST',
      localAddress: sourceIp,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    });
    sent.on('error', reject);
    sent.on('response', (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(answer.headers)) if (typeof value === 'string') headers.set(name, value);
        resolve(new Response(Buffer.concat(chunks), { status: answer.statusCode ?? 0, headers }));
      });
    });
    sent.end(body);
  });

/** A GET with `key`, so that its authorizer answer is cached before the attack and the attack's timing is the body's. */
const warm = async (key: string) =>
  expect((await api.call('/pets?limit=1', { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);

/** Splits `total` bytes into `parts` declared lengths, none over API Gateway's 10 MB. */
const declaredLengths = (total: number, parts: number): number[] =>
  Array.from({ length: parts }, (_, index) => Math.floor(total / parts) + (index < total % parts ? 1 : 0));

const expectErrorBody = (answer: RawAnswer, status: number, code: string) => {
  expect({ status: answer.status, body: JSON.parse(answer.body) as unknown }).toEqual({
    status,
    body: { code, status, message: expect.any(String) },
  });
  expect(answer.head).toMatch(/^content-type: application\/json$/im);
};

describe('one key holding every byte of the body budget (seven stalled 10 MB posts, 64 MiB in all)', () => {
  it("cannot: another key's POST succeeds while it holds what it may, and its stalled bodies are cut off at the deadline", async () => {
    const attacker = await newKey('default');
    const victim = await newKey('default');
    await Promise.all([warm(attacker.key), warm(victim.key)]);

    const lengths = declaredLengths(BODIES_IN_FLIGHT_MAX_BYTES, 7);
    expect(Math.max(...lengths)).toBeLessThanOrEqual(GATEWAY_MAX_BODY_BYTES);
    // One body of the key is read (held) whatever its share, and as many more as a quarter of the budget holds besides it.
    const mayHold = 1 + Math.floor((BODIES_IN_FLIGHT_MAX_BYTES * KEY_SHARE_OF_BODIES_IN_FLIGHT) / Math.max(...lengths));
    expect(mayHold).toBeLessThan(lengths.length);
    const posts = lengths.map((declared) => stalledPost(attacker.key, declared));
    // The others are refused at once; bounded by less than the deadline, for a server that refuses none.
    await answered(posts, posts.length - mayHold, BODY_TIMEOUT_SECONDS * 1_000 - 1_000);
    const victimPost = await post(victim.key, nextSourceAddress());
    const held = posts.filter((one) => !one.state.answered);
    expect(victimPost.status).toBe(201);
    expect(held.length, 'the stalled posts still held when the other key was answered').toBe(mayHold);

    // The key's own posts past its share are its own 429s, under its own key.
    const refused = posts.filter((one) => !held.includes(one));
    for (const one of refused) {
      const answer = await one.answer;
      expectErrorBody(answer, 429, 'too_many_requests');
      expect(answer.head).toMatch(/^retry-after: 1$/im);
      expect(await accessLineOf(one.sourceIp)).toMatchObject({ status: '429', gatewayResponse: 'THROTTLED', keyId: attacker.id });
    }

    // The stalled bodies are cut off at the deadline: a 400, the connection closed, a line of its own.
    for (const one of held) {
      const answer = await one.answer;
      expectErrorBody(answer, 400, 'validation_failed');
      expect(answer.head).toMatch(/^connection: close$/im);
      expect(answer.afterMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_SECONDS * 1_000 - 50);
      expect(await accessLineOf(one.sourceIp)).toMatchObject({ status: '400', gatewayResponse: 'BODY_TIMEOUT', keyId: attacker.id });
    }
    expect(accessLines.filter((line) => line.keyId === victim.id && line.status !== '200' && line.status !== '201')).toEqual([]);
  }, 60_000);
});

describe('a small stalled body', () => {
  it('is cut off at the deadline too, and its connection closed rather than waited on for the rest', async () => {
    const { id, key } = await newKey('default');
    await warm(key);
    const small = stalledPost(key, 1_024);
    const answer = await small.answer;
    expectErrorBody(answer, 400, 'validation_failed');
    expect(answer.head).toMatch(/^connection: close$/im);
    expect(answer.afterMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_SECONDS * 1_000 - 50);
    expect(linesOf(small.sourceIp)).toEqual([expect.objectContaining({ status: '400', gatewayResponse: 'BODY_TIMEOUT', keyId: id })]);
  });
});

describe('keys that together fill the body budget', () => {
  it("get the server's own refusal: 503 with Retry-After in the Error shape, not charged to the client, logged as what it is", async () => {
    // Four keys, each holding two stalled posts of 8 MiB: 16 MiB, one body and half a quarter of the budget besides it.
    const attackers = await Promise.all([1, 2, 3, 4].map(() => newKey('default')));
    const probe = await newKey('default');
    const victim = await newKey(ONE_A_DAY);
    await Promise.all([...attackers, probe].map(({ key }) => warm(key)));

    const shares = declaredLengths(BODIES_IN_FLIGHT_MAX_BYTES / attackers.length, 2);
    const stalled = attackers.flatMap(({ key }) => shares.map((declared) => ({ key, declared })));
    const posts: StalledPost[] = stalled.map(({ key, declared }) => stalledPost(key, declared));
    // The budget is full once a small POST of another key is refused (until then each is answered
    // at once). A stalled post that came while a probe held its bytes was refused: it goes again.
    let probed: Response | undefined;
    for (let attempt = 0; attempt < 200 && (probed === undefined || probed.status < 429); attempt += 1) {
      await probed?.arrayBuffer();
      probed = await api.call('/pets', { method: 'POST', headers: { Authorization: `Bearer ${probe.key}` }, body: '{}' });
      posts.forEach((one, index) => {
        const { key, declared } = stalled[index]!;
        if (one.state.answered) posts[index] = stalledPost(key, declared);
      });
    }
    await probed?.arrayBuffer();
    expect(probed?.status).toBe(503);

    const refusedFrom = [1, 2, 3].map(() => nextSourceAddress());
    const refusals = [];
    for (const sourceIp of refusedFrom) refusals.push(await post(victim.key, sourceIp));
    for (const refusal of refusals) {
      expect(refusal.headers.get('retry-after')).toBe('1');
      await expectError(refusal, 503, 'service_unavailable');
    }
    for (const sourceIp of refusedFrom) {
      const line = await accessLineOf(sourceIp);
      expect(line).toMatchObject({ status: '503', gatewayResponse: 'BODIES_IN_FLIGHT', keyId: victim.id });
    }
    expect(accessLines.filter((line) => line.keyId === victim.id && line.gatewayResponse === 'THROTTLED')).toEqual([]);
    expect(await requestsToday(victim.id)).toBe(0);

    // Not charged: with every stalled body cut off, the key's one request of the day is still there, and the only one counted.
    await Promise.all(posts.map((one) => one.answer));
    expect((await post(victim.key, nextSourceAddress())).status).toBe(201);
    expect(await requestsToday(victim.id)).toBe(1);
    await expectError(await post(victim.key, nextSourceAddress()), 429, 'quota_exceeded');
  }, 60_000);
});

describe('a client that goes away mid-body', () => {
  it('gets exactly one access line, which says the client closed, whether the server was reading its body yet or not', async () => {
    const { id, key } = await newKey('default');
    await warm(key);
    // Gone before the server reads the body: the head and a byte, then the connection closed.
    const early = stalledPost(key, 1_024);
    early.hangUp();
    // Gone while the server reads it: of three 10 MB bodies of one key, one is refused (429: two pass a
    // quarter of the budget besides the largest) while the other two are read.
    const trio = [0, 1, 2].map(() => stalledPost(key, GATEWAY_MAX_BODY_BYTES));
    await answered(trio, 1, BOUND_MS);
    const [reading, stillRead] = trio.filter((one) => !one.state.answered);
    const refused = trio.find((one) => one.state.answered);
    if (!reading || !stillRead || !refused) throw new Error('two of three 10 MB bodies of one key were answered at once');
    expect((await refused.answer).status).toBe(429);
    reading.destroy();

    for (const gone of [early, reading]) {
      expect(await accessLineOf(gone.sourceIp)).toMatchObject({
        status: '-',
        gatewayResponse: 'CLIENT_CLOSED',
        keyId: id,
        httpMethod: 'POST',
        resourcePath: '/pets',
      });
    }
    // Neither was answered: the one that hung up is not told its request was not HTTP.
    expect(await early.answer).toMatchObject({ status: 0, body: '' });
    // What the body held is given back: the key's next big body is read beside the one still read, not refused.
    const after = stalledPost(key, GATEWAY_MAX_BODY_BYTES);
    expect(await accessLineOf(after.sourceIp).then(({ gatewayResponse }) => gatewayResponse)).toBe('BODY_TIMEOUT');
    expect(linesOf(early.sourceIp)).toHaveLength(1);
    expect(linesOf(reading.sourceIp)).toHaveLength(1);
  }, 60_000);
});
