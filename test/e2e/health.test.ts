/**
 * GET /health over HTTP, as a client's or monitor's health check calls it: no key, no Authorization header.
 * It answers whatever credential is sent, and a flood meets its own method throttle.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeOf } from '../../shared/routes';
import { expectCommonHeaders, expectError, startLocalApi, type LocalApi } from '../support/local-api';

const health = routeOf('getHealth');

let api: LocalApi;
beforeAll(async () => {
  api = await startLocalApi();
});
afterAll(() => api.close());

describe('GET /health', () => {
  it.each([
    ['without an Authorization header', {}],
    ['with a credential that is no key', { Authorization: 'Basic dXNlcjpwYXNz' }],
    ['with a revoked-looking bearer token', { Authorization: 'Bearer petstore_not-a-key' }],
  ])('answers 200 {"status":"ok"} %s: the route needs no key and reads none', async (_how, headers) => {
    const response = await api.call(health.path, { auth: false, headers });
    expect(response.status).toBe(200);
    expectCommonHeaders(response);
    expect(response.headers.get('ratelimit-policy')).toBeNull();
    expect(await response.text()).toBe('{"status":"ok"}');
  });

  it('is answered by the client library without sending the key', async () => {
    await expect(api.petStore.health()).resolves.toEqual({ status: 'ok' });
  });

  it("refuses a flood past its own method throttle with 429, not the stage's", async () => {
    const { burstLimit } = health.keyless.throttle;
    const answers = await Promise.all(Array.from({ length: burstLimit * 2 }, () => api.call(health.path, { auth: false })));
    const refused = answers.filter((response) => response.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    // The earlier tests spent some of the burst: some pass, the rest are refused.
    expect(answers.filter((response) => response.status === 200).length).toBeGreaterThan(0);
    await expectError(refused[0]!, 429, 'too_many_requests');
    for (const response of answers) if (!response.bodyUsed) await response.arrayBuffer();
  });
});
