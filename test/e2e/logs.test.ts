/**
 * The logs, as an operator reads them: one structured line per request carrying its request id,
 * and never a key, an Authorization header, a body or a table name.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { logger } from '../../shared/logger';
import { postPet, startLocalApi, startServerWithMissingPetsTable, type LocalApi } from '../support/local-api';

let api: LocalApi;
let lines: string[];
const SECRET_NAME = 'Secret Rex the body should never be logged';

beforeAll(async () => {
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
  await api.close();
});

const parsed = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);

describe('logs', () => {
  it('writes one JSON line per request with its request id, operation, status, latency and key id', async () => {
    const response = await postPet(api, { name: SECRET_NAME, categoryId: 1 });
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

  it('never writes the key, the Authorization header, a body or a table name', async () => {
    await api.call('/pets');
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
    expect(everything).not.toContain(api.tables.pets);
    expect(everything).not.toContain(api.tables.apiKeys);
    expect(everything).not.toContain('pets-table-with-a-telling-name');
    expect(everything).not.toMatch(/\n\s+at /);
    const failure = parsed().find((entry) => entry.status === 500);
    expect(failure).toMatchObject({ level: 'ERROR', errorCode: 'internal_error', errorName: expect.any(String) });
  });
});
