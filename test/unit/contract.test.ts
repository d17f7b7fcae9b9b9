/** The contract check itself: it must refuse answers the document does not describe. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { contractViolations } from '../../tools/openapi/answer-check';

const answer = (method: string, path: string, status: number, body: unknown, headers: Record<string, string> = {}) => ({
  method,
  url: new URL(`http://127.0.0.1:3000${path}`),
  status,
  headers: new Headers({
    'Content-Type': 'application/json',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'x-amzn-RequestId': 'b1946ac9-2d1f-4b7e-8d4b-5c7b0f2d8a11',
    ...headers,
  }),
  body: JSON.stringify(body),
});

const pet = { id: 7, name: 'Rex', categoryId: 1, status: 'available' };

describe('contract check', () => {
  it('accepts a documented answer', () => {
    expect(contractViolations(answer('GET', '/v1/pets', 200, [pet], { 'X-Request-Id': 'x' }))).toEqual([]);
  });

  it('refuses a status the operation does not list', () => {
    expect(contractViolations(answer('GET', '/v1/pets', 418, {}))).toEqual([
      expect.stringContaining('status 418 is not documented for listPets'),
    ]);
  });

  it('refuses a body that does not match the schema', () => {
    const [problem] = contractViolations(answer('GET', '/v1/pets', 200, [{ ...pet, status: 'lost' }], { 'X-Request-Id': 'x' }));
    expect(problem).toContain('does not match the documented schema');
  });

  it('refuses an error code the operation does not document for that status', () => {
    const body = { code: 'gone', message: 'x', status: 400 };
    expect(contractViolations(answer('GET', '/v1/pets', 400, body)).join()).toContain('does not match the documented schema');
  });

  it('refuses a missing required header, and a wrong documented value', () => {
    expect(contractViolations(answer('POST', '/v1/pets', 201, pet, { 'X-Request-Id': 'x' }))).toEqual([
      expect.stringContaining('required header Location is missing'),
    ]);
    const unauthorized = { code: 'unauthorized', message: 'x', status: 401 };
    expect(contractViolations(answer('GET', '/v1/pets', 401, unauthorized, { 'WWW-Authenticate': 'Basic' })).join()).toContain(
      'header WWW-Authenticate is "Basic"',
    );
  });

  it('refuses a header longer than documented', () => {
    const location = `http://127.0.0.1:3000/v1/pets/7?${'x'.repeat(300)}`;
    expect(contractViolations(answer('POST', '/v1/pets', 201, pet, { 'X-Request-Id': 'x', Location: location }))).toEqual([
      expect.stringContaining('header Location is longer than'),
    ]);
  });

  it('wants 404 not_found for a route the API does not have', () => {
    expect(contractViolations(answer('DELETE', '/v1/pets', 404, { code: 'not_found', message: 'x', status: 404 }))).toEqual([]);
    expect(contractViolations(answer('DELETE', '/v1/pets', 405, { code: 'x', message: 'x', status: 405 })).length).toBeGreaterThan(0);
  });

  it("is applied to every fetch of a local server's API in the tests", async () => {
    const server = createServer((_request, response) => response.writeHead(418).end('{}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      await expect(fetch(`http://127.0.0.1:${port}/v1/pets`)).rejects.toThrow(/not described by openapi.json/);
    } finally {
      server.close();
    }
  });
});
