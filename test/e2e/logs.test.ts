/**
 * The logs and metrics, as an operator reads them: one structured line per request carrying its
 * request id, the metrics by operation and error code counted from those lines, and never a key,
 * an Authorization header, an Idempotency-Key, a body or a table name.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { logger } from '../../shared/logger';
import { createPetAnswer, startLocalApi, startServerWithMissingPetsTable, type LocalApi } from '../support/local-api';
import { ACCESS_LINE_MESSAGE } from '../../shared/http/access-log';
import { routeOf, type HandledOperationId } from '../../shared/routes';
import { countedFrom } from '../support/access-lines';

let api: LocalApi;
let lines: string[];
const SECRET_NAME = 'Secret Rex the body should never be logged';

const IDEMPOTENCY_KEY = 'idempotency-key-that-should-never-be-logged';

beforeAll(async () => {
  // Before the server builds its handlers, as Lambda's environment is set before the code loads.
  process.env.POWERTOOLS_METRICS_DISABLED = 'false';
  api = await startLocalApi();
  logger.setLogLevel('INFO');
  lines = [];
  // Powertools writes INFO to stdout and ERROR to stderr: read both, as CloudWatch does.
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    });
  }
});
afterAll(async () => {
  vi.restoreAllMocks();
  logger.setLogLevel('SILENT');
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  await api.close();
});

const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

/** Sends bytes as they are, and reads the whole answer (the server closes the connection). */
const rawAnswer = (bytes: string) =>
  new Promise<string>((resolve, reject) => {
    const url = new URL(api.url);
    const socket = connect(Number(url.port), url.hostname, () => socket.write(bytes));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });

describe('logs', () => {
  it('writes one JSON line per request with its request id, operation, status, latency and key id', async () => {
    const { response } = await createPetAnswer(api.petStore, { name: SECRET_NAME, categoryId: 1 });
    const requestId = response.headers.get('x-request-id');
    const line = parsed().filter((entry) => entry.requestId === requestId);
    expect(line).toHaveLength(1);
    expect(line[0]).toMatchObject({
      level: 'INFO',
      message: 'request',
      operation: 'createPet',
      status: 201,
      latencyMs: expect.any(Number),
      coldStart: expect.any(Boolean),
      keyId: expect.stringMatching(/^[0-9a-f]{12}$/),
    });
  });

  it('logs refusals with their request id and error code', async () => {
    const response = await api.call('/pets?limit=0');
    const entry = parsed().find((candidate) => candidate.requestId === response.headers.get('x-request-id'));
    expect(entry).toMatchObject({ operation: 'listPets', status: 400, errorCode: 'validation_failed' });
    const gateway = await api.call('/nowhere');
    expect(parsed().some((candidate) => candidate.requestId === gateway.headers.get('x-amzn-requestid'))).toBe(true);
  });

  it('writes one line for every answer the local server gives itself: the 501, the docs, a refusal before any route', async () => {
    const answers = [
      await api.call('/store/orders'),
      await api.call('/docs'),
      await api.call('/openapi.json'),
      await api.call('/docs/swagger-ui.css'),
    ];
    for (const response of answers) {
      const requestId = response.headers.get('x-amzn-requestid');
      expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(parsed().filter((entry) => entry.requestId === requestId)).toEqual([
        expect.objectContaining({ level: 'INFO', status: response.status }),
      ]);
    }
    expect(parsed().find((entry) => entry.requestId === answers[0]?.headers.get('x-amzn-requestid'))).toMatchObject({
      message: 'request',
      operation: 'listStoreOrders',
      errorCode: 'not_implemented',
      keyId: expect.stringMatching(/^[0-9a-f]{12}$/),
    });
    for (const raw of ['GET /v1/pets HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n', 'CONNECT x:1 HTTP/1.1\r\nHost: x\r\n\r\n']) {
      const answer = await rawAnswer(raw);
      const requestId = /x-amzn-requestid: ([0-9a-f-]{36})/i.exec(answer)?.[1];
      expect(requestId).toBeDefined();
      expect(parsed().filter((entry) => entry.requestId === requestId)).toEqual([
        expect.objectContaining({ status: Number(answer.slice(9, 12)) }),
      ]);
    }
  });

  it("counts requests, pets created, replays and errors by operation and error code, from the access lines: the stack's metric filters", async () => {
    const before = lines.length;
    const keyed = () => createPetAnswer(api.petStore, { name: 'Rex', categoryId: 1 }, `"${IDEMPOTENCY_KEY}-metrics"`);
    expect((await keyed()).response.status).toBe(201);
    expect((await keyed()).response.status).toBe(201);
    expect((await api.call('/pets?limit=0')).status).toBe(400);
    const written = lines.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>);
    // No line of its own for a metric: each request writes its access line, which the filters read.
    expect(written.filter((entry) => entry._aws !== undefined)).toEqual([]);
    const counted = written
      .filter((entry) => entry.message === ACCESS_LINE_MESSAGE)
      .flatMap((entry) => countedFrom(routeOf(entry.operation as HandledOperationId), [entry]));
    const byOperation = (operation: string) => ({ service: 'pet-store', operation });
    expect(counted).toEqual([
      { metricName: 'Requests', dimensions: byOperation('createPet') },
      { metricName: 'PetsCreated', dimensions: byOperation('createPet') },
      { metricName: 'Requests', dimensions: byOperation('createPet') },
      { metricName: 'IdempotentReplays', dimensions: byOperation('createPet') },
      { metricName: 'Requests', dimensions: byOperation('listPets') },
      { metricName: 'Errors', dimensions: { ...byOperation('listPets'), errorCode: 'validation_failed' } },
    ]);
  });

  it('never writes the key, the Authorization header, an Idempotency-Key, a body or a table name', async () => {
    await api.call('/pets');
    const keyed = { 'Content-Type': 'application/json', 'Idempotency-Key': `"${IDEMPOTENCY_KEY}"` };
    for (const name of [SECRET_NAME, SECRET_NAME, `${SECRET_NAME} again`]) {
      await api.call('/pets', { method: 'POST', headers: keyed, body: JSON.stringify({ name, categoryId: 1 }) }); // 201, replay, 422
    }
    await api.call('/pets', { auth: false, headers: { Authorization: `bearer ${api.key}` } });
    await api.call('/pets', { auth: false, headers: { Authorization: `Bearer ${api.key}-wrong` } });
    await api.call(`/pets?api_key=${api.key}`, { auth: false });
    // A 500 whose database error names the table it could not find.
    const server = await startServerWithMissingPetsTable(api, 'pets-table-with-a-telling-name');
    try {
      const response = await fetch(`${server.url}/pets`, { headers: { Authorization: `Bearer ${api.key}` } });
      expect(response.status).toBe(500);
    } finally {
      await server.close();
    }
    const everything = lines.join('\n');
    expect(lines.length).toBeGreaterThan(5);
    expect(everything).not.toContain(api.key);
    expect(everything).not.toMatch(/authorization/i);
    expect(everything).not.toContain(SECRET_NAME);
    expect(everything).not.toContain(IDEMPOTENCY_KEY);
    expect(everything).not.toContain(api.tables.pets);
    expect(everything).not.toContain(api.tables.apiKeys);
    expect(everything).not.toContain('pets-table-with-a-telling-name');
    expect(everything).not.toMatch(/\n\s+at /);
    const failure = parsed().find((entry) => entry.status === 500);
    expect(failure).toMatchObject({ level: 'ERROR', errorCode: 'internal_error', errorName: expect.any(String) });
  });
});
