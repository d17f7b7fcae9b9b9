/**
 * `npm run smoke`, run as an operator runs it: against the local server it passes every check;
 * against a deliberately broken server (a proxy in front of it that breaks one thing) it exits 1
 * and names the check that failed, the others still ok. The key never appears in its output.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApiKey } from '../../shared/api-keys';
import { createDocumentClient } from '../../shared/dynamodb';
import { startApiProxy, type Breakage } from '../support/api-proxy';
import { expectOneLineFailure, npmRun, type CommandResult } from '../support/command';
import { postPet, startLocalApi, type LocalApi } from '../support/local-api';

const CHECKS = ['create', 'list', 'next page', 'get', 'no key', 'unknown route'];

let api: LocalApi;

beforeAll(async () => {
  api = await startLocalApi();
  // Two pets, so that a listing of limit 1 has a next page.
  for (const name of ['Rex', 'Tom']) expect((await postPet(api, { name, categoryId: 1 })).status).toBe(201);
});
afterAll(() => api?.close());

/** `npm run smoke -- args…`, with no key in the environment unless `env` gives one. */
const smoke = (args: string[], env: Record<string, string> = {}) => npmRun('smoke', args, { PETSTORE_API_KEY: '', ...env });

/** The status word of each check's line, by check name. */
const statusesOf = (result: CommandResult): Record<string, string> =>
  Object.fromEntries(
    result.stdout
      .split('\n')
      .map((line) => /^(ok|FAIL|skip) +(create|list|next page|get|no key|unknown route)  /.exec(line))
      .filter((match) => match !== null)
      .map(([, status, name]) => [name, status]),
  );

const expectNoSecret = (result: CommandResult, key: string) => {
  expect(result.stdout + result.stderr).not.toContain(key);
  expect(result.stderr).not.toMatch(/^\s+at /m);
};

const petCount = async (): Promise<number> => {
  const client = createDocumentClient({ endpoint: inject('dynamodbEndpoint') });
  try {
    return (await client.send(new ScanCommand({ TableName: api.tables.pets, Select: 'COUNT', ConsistentRead: true }))).Count ?? 0;
  } finally {
    client.destroy();
  }
};

describe('npm run smoke against the local server', () => {
  it('passes every check, one line each, and a summary', async () => {
    const result = await smoke(['--url', `${api.url}/`, '--key', api.key]);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(statusesOf(result)).toEqual(Object.fromEntries(CHECKS.map((name) => [name, 'ok'])));
    expect(result.stdout).toMatch(/^Passed: 6 ok, 0 failed, 0 skipped in [\d.]+ s$/m);
    expectNoSecret(result, api.key);
  });

  it('--read-only with a pets:read key from PETSTORE_API_KEY creates nothing, and --json is one document', async () => {
    const readKey = generateApiKey();
    await api.keys.register(readKey, 'smoke read-only', { scopes: ['pets:read'], changedBy: 'local:test' });
    const before = await petCount();

    const result = await smoke(['--url', api.url, '--read-only', '--json'], { PETSTORE_API_KEY: readKey });

    expect(result.status, result.stdout + result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { checks: Array<{ name: string; status: string; detail: string; ms: number }> };
    expect(report).toEqual({ checks: expect.any(Array), passed: 5, failed: 0, skipped: 1, seconds: expect.any(Number) });
    expect(report.checks.map(({ name, status }) => [name, status])).toEqual(
      CHECKS.map((name) => [name, name === 'create' ? 'skip' : 'ok']),
    );
    expect(await petCount()).toBe(before);
    expectNoSecret(result, readKey);
  });

  it('refuses to start without a key, in one line (exit status 2)', async () => {
    expect(expectOneLineFailure(await smoke(['--url', api.url]), { status: 2 })).toMatch(
      /give an API key, with --key or in PETSTORE_API_KEY/,
    );
  });

  it('fails each check in one line when nothing answers at the URL', async () => {
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    server.close();
    await once(server, 'close');

    const result = await smoke(['--url', `http://127.0.0.1:${port}/v1`, '--key', api.key]);

    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`^FAIL create +no answer from http://127.0.0.1:${port} \\(ECONNREFUSED\\)`, 'm'));
    expect(statusesOf(result)).toMatchObject({ list: 'FAIL', 'no key': 'FAIL', 'unknown route': 'FAIL' });
    expectNoSecret(result, api.key);
  });
});

/** Pets of a listing's answers (GET /v1/pets, 200), changed by `change`. */
const inListings =
  (change: (pets: Array<Record<string, unknown>>, authorization: string) => unknown): Breakage =>
  (answer, { method, path, authorization = '' }) => {
    if (method === 'GET' && /^\/v1\/pets(\?|$)/.test(path) && answer.status === 200) {
      answer.body = JSON.stringify(change(JSON.parse(answer.body) as Array<Record<string, unknown>>, authorization));
    }
  };

/** What breaks, the check that must fail, how its line says why, and the breakage. */
const breakages: Array<[string, string, RegExp, Breakage]> = [
  [
    'drops the id of pets in listings',
    'list',
    /must have required property 'id'/,
    inListings((pets) => pets.map(({ id: _, ...pet }) => pet)),
  ],
  [
    'answers an unknown route 403 as raw API Gateway does',
    'unknown route',
    /answered 403, not 404/,
    (answer, { path }) => {
      if (!path.startsWith('/v1/pets'))
        Object.assign(answer, { status: 403, body: JSON.stringify({ message: 'Missing Authentication Token' }) });
    },
  ],
  [
    'drops Sunset from the deprecated get',
    'get',
    /required header Sunset is missing/,
    (answer, { path }) => {
      if (/^\/v1\/pets\/\d+$/.test(path)) delete answer.headers.sunset;
    },
  ],
  [
    'links the next page to another host',
    'next page',
    // Refused for its origin, never followed.
    /Link rel="next" is not on http:\/\/127\.0\.0\.1:\d+: http:\/\/pets\.example\.net/,
    (answer) => {
      if (answer.headers.link?.includes('rel="next"'))
        answer.headers.link = answer.headers.link.replace(/<http:\/\/[^/]+/, '<http://pets.example.net');
    },
  ],
  [
    'echoes the key in a listing answer the document does not describe',
    'list',
    /"name":"Bearer …"/,
    inListings((pets, authorization) => pets.map((pet) => ({ ...pet, name: authorization, status: 'lost' }))),
  ],
];

describe('npm run smoke against a broken server', () => {
  it.each(breakages)('%s: exits 1, naming the check (%s)', async (_, failing, why, breakage) => {
    const proxy = await startApiProxy(api.url, breakage);
    try {
      const result = await smoke(['--url', proxy.url, '--key', api.key]);

      expect(result.status, result.stdout).toBe(1);
      const statuses = statusesOf(result);
      expect(statuses[failing], result.stdout).toBe('FAIL');
      expect(result.stdout.split('\n').find((line) => line.startsWith(`FAIL ${failing} `))).toMatch(why);
      // The one breakage fails its check; the checks that do not depend on it still pass.
      const unaffected = CHECKS.filter((name) => name !== failing && !(failing === 'list' && name === 'next page'));
      for (const name of unaffected) expect([name, statuses[name]]).toEqual([name, 'ok']);
      expect(result.stdout).toMatch(/^FAILED: \d ok, 1 failed, \d skipped in [\d.]+ s$/m);
      expectNoSecret(result, api.key);
    } finally {
      await proxy.close();
    }
  });
});
