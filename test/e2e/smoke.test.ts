/**
 * `npm run smoke`, run as an operator runs it: against the local server it passes every check;
 * against a deliberately broken server (a proxy in front of it that breaks one thing) it exits 1
 * and names the check that failed, the others still ok. The key never appears in its output.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { API_KEY_PREFIX, generateApiKey } from '../../shared/api-keys';
import { matchRoute, pathBelowBase } from '../../tools/local-server/route-matcher';
import { startApiProxy, type Breakage, type RequestBreakage } from '../support/api-proxy';
import { expectOneLineFailure, npmRun, runCommand, runCommandClosingOutput, type CommandResult } from '../support/command';
import { postPet, startLocalApi, type LocalApi } from '../support/local-api';
import { CHECK_NAMES, SMOKE_CHECKS, SMOKE_PET_NAME, type SmokeCheck } from '../../tools/smoke/checks';
import { runSmoke } from '../../tools/smoke/run';
import { localUsageKey } from '../../tools/local-server/usage-plans';
import { databaseClient } from '../support/database';

const CHECKS: readonly string[] = CHECK_NAMES;
/** The checks `--read-only` skips: those that write, and those that read only what one wrote. */
const WRITING: readonly string[] = SMOKE_CHECKS.filter((check: SmokeCheck) => check.writes || check.readsWritten).map(
  (check) => check.name,
);

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** A check's line: its status word, then its name. */
const CHECK_LINE = new RegExp(`^(ok|FAIL|skip) +(${CHECKS.map(escaped).join('|')})  `);

let api: LocalApi;

beforeAll(async () => {
  api = await startLocalApi();
});
afterAll(() => api?.close());

/** `npm run smoke -- args…`, with no key in the environment unless `env` gives one. */
const smoke = (args: string[], env: Record<string, string> = {}) => npmRun('smoke', args, { PETSTORE_API_KEY: '', ...env });

/**
 * The same run in this process (tools/smoke/run.ts, which the command prints): each test costs a
 * check run rather than a Node start. The command itself runs on a fresh stage, against a broken
 * server, as documented with and without -s, without a key, and with its output closed.
 */
const smokeInProcess = async (args: string[], env: Record<string, string> = {}): Promise<CommandResult> => {
  const { output, exitCode } = await runSmoke(args, { PETSTORE_API_KEY: '', ...env });
  return { status: exitCode, stdout: `${output}\n`, stderr: '' };
};

/** The status word of each check's line, by check name. */
const statusesOf = (result: CommandResult): Record<string, string> =>
  Object.fromEntries(
    result.stdout
      .split('\n')
      .map((line) => CHECK_LINE.exec(line))
      .filter((match) => match !== null)
      .map(([, status, name]) => [name, status]),
  );

/** No 8 characters of `key` beyond its prefix alone, in any case, in what the command printed. */
const expectNoPartOf = (result: CommandResult, key: string) => {
  const printed = (result.stdout + result.stderr).toLowerCase();
  // Every 8 characters past the prefix, which every key shares.
  for (let start = API_KEY_PREFIX.length; start + 8 <= key.length; start++) {
    expect(printed, result.stdout).not.toContain(key.slice(start, start + 8).toLowerCase());
  }
};

const expectNoSecret = (result: CommandResult, key: string) => {
  expect(result.stdout + result.stderr).not.toContain(key);
  expect(result.stderr).not.toMatch(/^\s+at /m);
};

const petCount = async (of: LocalApi = api): Promise<number> => {
  const client = databaseClient({ endpoint: inject('dynamodbEndpoint') });
  try {
    return (await client.send(new ScanCommand({ TableName: of.tables.pets, Select: 'COUNT', ConsistentRead: true }))).Count ?? 0;
  } finally {
    client.destroy();
  }
};

describe('npm run smoke on a fresh stage', () => {
  it(`creates a second pet named ${SMOKE_PET_NAME}, so that the next page is really followed`, async () => {
    expect(await petCount()).toBe(0);

    const result = await smoke(['--url', api.url, '--key', api.key]);

    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(statusesOf(result)).toEqual(Object.fromEntries(CHECKS.map((name) => [name, 'ok'])));
    expect(result.stdout).toMatch(new RegExp(`^ok +next page +200, 1 pet, after creating 1 more pet named ${SMOKE_PET_NAME} `, 'm'));
    expect(await petCount()).toBe(2);
  });
});

/**
 * Listings that do not show the pets created through the proxy, as an eventually consistent Scan
 * may not right after their writes: the first `answers` listings (every one if Infinity) leave them
 * out, with no next link. On a fresh stage every pet is one of them.
 */
const hidingNewPets = (answers: number): Breakage => {
  const created = new Set<string>();
  let listings = 0;
  return (answer, { method, path }) => {
    if (method === 'POST' && answer.status === 201) created.add((JSON.parse(answer.body) as { id: string }).id);
    if (method !== 'GET' || !/^\/v1\/pets(\?|$)/.test(path) || answer.status !== 200 || listings++ >= answers) return;
    const pets = JSON.parse(answer.body) as Array<{ id: string }>;
    answer.body = JSON.stringify(pets.filter((pet) => !created.has(pet.id)));
    delete answer.headers.link;
  };
};

describe('npm run smoke on a fresh stage whose listing lags behind its writes', () => {
  let fresh: LocalApi;
  beforeEach(async () => {
    fresh = await startLocalApi();
  });
  afterEach(() => fresh?.close());

  it('lists again for a moment before failing for a missing next page, and passes once the pets show', async () => {
    const proxy = await startApiProxy(fresh.url, hidingNewPets(3));
    try {
      const result = await smokeInProcess(['--url', proxy.url, '--key', fresh.key]);

      expect(result.status, result.stdout).toBe(0);
      expect(statusesOf(result)).toEqual(Object.fromEntries(CHECKS.map((name) => [name, 'ok'])));
      // The create check's pet counts though the listing did not show it: one more makes two.
      expect(result.stdout).toMatch(/^ok +next page +200, 1 pet, after creating 1 more pet named /m);
      expect(await petCount(fresh)).toBe(2);
    } finally {
      await proxy.close();
    }
  });

  it('fails the next page, naming it, when the pets never show', async () => {
    const proxy = await startApiProxy(fresh.url, hidingNewPets(Infinity));
    try {
      const result = await smokeInProcess(['--url', proxy.url, '--key', fresh.key]);

      expect(result.status, result.stdout).toBe(1);
      expect(result.stdout).toMatch(/^FAIL next page +no Link rel="next" on a page of limit 1, though 2 pets exist  \(\d+ ms\)$/m);
      expect(statusesOf(result)).toEqual(Object.fromEntries(CHECKS.map((name) => [name, name === 'next page' ? 'FAIL' : 'ok'])));
      expect(await petCount(fresh)).toBe(2);
    } finally {
      await proxy.close();
    }
  });
});

describe('npm run smoke against the local server', () => {
  beforeAll(async () => {
    // Two more pets, so that a listing of limit 1 has a next page without the smoke's own.
    for (const name of ['Rex', 'Tom']) expect((await postPet(api, { name, categoryId: 1 })).status).toBe(201);
  });

  it('passes every check, one line each, and a summary', async () => {
    const result = await smokeInProcess(['--url', `${api.url}/`, '--key', api.key]);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(statusesOf(result)).toEqual(Object.fromEntries(CHECKS.map((name) => [name, 'ok'])));
    expect(result.stdout).toMatch(new RegExp(`^Passed: ${CHECKS.length} ok, 0 failed, 0 skipped in [\\d.]+ s$`, 'm'));
    expectNoSecret(result, api.key);
  });

  it('--read-only with a pets:read key from PETSTORE_API_KEY creates nothing, and --json is one document', async () => {
    const readKey = generateApiKey();
    await api.keys.register(readKey, 'smoke read-only', { usage: localUsageKey(), scopes: ['pets:read'], changedBy: 'local:test' });
    const before = await petCount();

    const result = await smokeInProcess(['--url', api.url, '--read-only', '--json'], { PETSTORE_API_KEY: readKey });

    expect(result.status, result.stdout + result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as { checks: Array<{ name: string; status: string; detail: string; ms: number }> };
    expect(WRITING.length).toBeGreaterThan(0);
    expect(report).toEqual({
      checks: expect.any(Array),
      passed: CHECKS.length - WRITING.length,
      failed: 0,
      skipped: WRITING.length,
      seconds: expect.any(Number),
    });
    expect(report.checks.map(({ name, status }) => [name, status])).toEqual(
      CHECKS.map((name) => [name, WRITING.includes(name) ? 'skip' : 'ok']),
    );
    expect(await petCount()).toBe(before);
    expectNoSecret(result, readKey);
  });

  // npm prints the command line it runs (its banner), on stdout: the documented form keeps the key
  // in PETSTORE_API_KEY, and -s (--silent) leaves stdout to the report.
  it('run as documented, without npm --silent, never shows the key from PETSTORE_API_KEY', async () => {
    const result = await runCommand('npm', ['run', 'smoke', '--', '--url', api.url], { PETSTORE_API_KEY: api.key });

    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('> node '); // npm's banner is there…
    expectNoSecret(result, api.key); // …without the key
  });

  it('npm run -s smoke -- --json prints one JSON document and nothing else', async () => {
    const result = await runCommand('npm', ['run', '-s', 'smoke', '--', '--url', api.url, '--json'], { PETSTORE_API_KEY: api.key });

    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ passed: CHECKS.length, failed: 0, skipped: 0 });
    expectNoSecret(result, api.key);
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

    const result = await smokeInProcess(['--url', `http://127.0.0.1:${port}/v1`, '--key', api.key]);

    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`^FAIL create +no answer from http://127.0.0.1:${port} \\(ECONNREFUSED\\)`, 'm'));
    expect(statusesOf(result)).toMatchObject({ list: 'FAIL', 'no key': 'FAIL', 'unknown route': 'FAIL' });
    expectNoSecret(result, api.key);
  });

  it('sends nothing more once a request got no answer: the other checks fail as not tried', async () => {
    // Accepts connections and reads requests, never answers, as a black-holed host.
    let requests = 0;
    const server = createServer(() => void requests++).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const result = await smokeInProcess(['--url', `${origin}/v1`, '--key', api.key], { PETSTORE_SMOKE_TIMEOUT_MS: '300' });

      expect(result.status).toBe(1);
      const lines = result.stdout.split('\n').filter((line) => /^(ok|FAIL|skip) /.test(line));
      expect(lines).toEqual([
        expect.stringMatching(new RegExp(`^FAIL ${CHECKS[0]} +no answer from ${origin} \\(no answer within 0.3 s\\)  \\(\\d+ ms\\)$`)),
        ...CHECKS.slice(1).map((name) =>
          expect.stringMatching(new RegExp(`^FAIL ${name} +not tried: ${origin} did not answer  \\(0 ms\\)$`)),
        ),
      ]);
      expect(requests).toBe(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
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

/** Every POST /pets answer's Location, changed by `change`. */
const inLocations =
  (change: (location: string) => string | undefined): Breakage =>
  (answer, { method }) => {
    if (method !== 'POST' || answer.headers.location === undefined) return;
    const location = change(answer.headers.location);
    if (location === undefined) delete answer.headers.location;
    else answer.headers.location = location;
  };

/** What breaks, the check that must fail, how its line says why, the breakage (of answers, then of requests). */
const breakages: Array<[string, string, RegExp, Breakage, RequestBreakage?]> = [
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
    (answer, { method, path }) => {
      // Only a request no route takes (the route table's matcher says which).
      const below = pathBelowBase(path.split('?')[0] ?? '');
      if (below === undefined || matchRoute(method, below) === undefined)
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
  [
    'lets a request without a key through, as if the authorizer were missing',
    'no key',
    /GET \/v1\/pets answered 200, not 401/,
    () => undefined,
    (headers) => {
      headers.authorization ??= `Bearer ${api.key}`;
    },
  ],
  [
    // Followed, the redirect would be answered 404 by the unknown path it names.
    'redirects a listing to a path of its own',
    'list',
    /GET \/v1\/pets answered 302, not 200/,
    (answer, { method, path }) => {
      if (method === 'GET' && path.startsWith('/v1/pets?'))
        Object.assign(answer, { status: 302, headers: { ...answer.headers, location: '/v1/smoke-test/moved' }, body: '' });
    },
  ],
  ['sends no Location for a created pet', 'create', /required header Location is missing/, inLocations(() => undefined)],
  [
    'puts a created pet on another host',
    'create',
    /Location is not on http:\/\/127\.0\.0\.1:\d+: http:\/\/pets\.example\.net/,
    inLocations((location) => location.replace(/^http:\/\/[^/]+/, 'http://pets.example.net')),
  ],
];

/**
 * The checks that learn from another one, by the check they learn from, through any chain of
 * them: they cannot pass when it fails. Checks learn only from earlier ones, so one pass in order
 * gathers every chain.
 */
const DEPENDENTS: Record<string, string[]> = {};
for (const check of SMOKE_CHECKS as readonly SmokeCheck[]) {
  const sources = check.learnsFrom ?? [];
  // Each check it learns from, and each check those depend on in turn (already gathered).
  const upstream = new Set(
    sources.flatMap((source) => [source, ...Object.keys(DEPENDENTS).filter((name) => DEPENDENTS[name]?.includes(source))]),
  );
  for (const name of upstream) (DEPENDENTS[name] ??= []).push(check.name);
}

describe('npm run smoke against a broken server', () => {
  it('the command exits 1 and names the check that failed', async () => {
    const [, failing, why, breakage] = breakages[0]!;
    const proxy = await startApiProxy(api.url, breakage);
    try {
      const result = await smoke(['--url', proxy.url, '--key', api.key]);

      expect(result.status, result.stdout).toBe(1);
      expect(result.stdout.split('\n').find((line) => line.startsWith(`FAIL ${failing} `))).toMatch(why);
      expect(result.stdout).toMatch(/^FAILED: \d ok, 1 failed, \d skipped in [\d.]+ s$/m);
      expectNoSecret(result, api.key);
    } finally {
      await proxy.close();
    }
  });

  it.each(breakages)('%s: fails, naming the check (%s)', async (_, failing, why, breakage, alterRequest) => {
    const proxy = await startApiProxy(api.url, breakage, alterRequest);
    try {
      const result = await smokeInProcess(['--url', proxy.url, '--key', api.key]);

      expect(result.status, result.stdout).toBe(1);
      const statuses = statusesOf(result);
      expect(statuses[failing], result.stdout).toBe('FAIL');
      expect(result.stdout.split('\n').find((line) => line.startsWith(`FAIL ${failing} `))).toMatch(why);
      // The one breakage fails its check; the checks that do not depend on it still pass.
      const unaffected = CHECKS.filter((name) => name !== failing && !DEPENDENTS[failing]?.includes(name));
      for (const name of unaffected) expect([name, statuses[name]]).toEqual([name, 'ok']);
      expect(result.stdout).toMatch(/^FAILED: \d ok, 1 failed, \d skipped in [\d.]+ s$/m);
      expectNoSecret(result, api.key);
    } finally {
      await proxy.close();
    }
  });
});

/** The listings' answers replaced by `[{"note": "x…x<the Authorization header>"}]`, its key starting at `keyAt`. */
const echoingAuthorizationAt =
  (keyAt: number): Breakage =>
  (answer, { method, path, authorization = '' }) => {
    if (method !== 'GET' || !/^\/v1\/pets(\?|$)/.test(path) || authorization === '') return;
    const head = '[{"note":"';
    const padding = 'x'.repeat(keyAt - head.length - 'Bearer '.length);
    answer.body = `${head}${padding}${authorization}"}]`;
  };

describe('npm run smoke never prints a key a broken server sends back', () => {
  // The contract check quotes the first 300 characters of a body that is not as documented: a key
  // starting at 285 straddles that cut.
  it.each([
    ['a key as the key tool makes them', () => api.key],
    ['a key of another form', () => `smoke-operator-key.${'0123456789'.repeat(4)}`],
  ])('%s, echoed across the cut of a quoted body', async (_, keyOf) => {
    const key = keyOf();
    if (key !== api.key)
      await api.keys.register(key, 'smoke straddle', { usage: localUsageKey(), scopes: ['pets:read'], changedBy: 'local:test' });
    const proxy = await startApiProxy(api.url, echoingAuthorizationAt(285));
    try {
      const result = await smokeInProcess(['--url', proxy.url, '--read-only'], { PETSTORE_API_KEY: key });

      expect(result.status, result.stdout).toBe(1);
      const unprefixed = key.startsWith(API_KEY_PREFIX) ? key.slice(API_KEY_PREFIX.length) : key;
      expect(result.stdout + result.stderr).not.toContain(unprefixed.slice(0, 12));
      expect(result.stdout).toMatch(/^FAIL list +the body does not match the documented schema: .* in \[\{"note":"x+Bearer …"\}\]/m);
    } finally {
      await proxy.close();
    }
  });

  it("masks another client's key in a line, whole or cut short", async () => {
    const other = generateApiKey();
    // A listing whose pets are named after that key: the list check quotes the pet, and the cut one.
    const proxy = await startApiProxy(
      api.url,
      inListings((pets) => pets.map((pet) => ({ ...pet, name: `${other} ${other.slice(0, 20)}`, status: 'lost' }))),
    );
    try {
      const result = await smokeInProcess(['--url', proxy.url, '--key', api.key]);

      expect(result.stdout).toMatch(/^FAIL list +.*"name":"… …"/m);
      expect(result.stdout + result.stderr).not.toContain(other.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + 8));
    } finally {
      await proxy.close();
    }
  });

  it('a key echoed without its prefix, as a pet of a listing', async () => {
    const body = api.key.slice(API_KEY_PREFIX.length);
    const proxy = await startApiProxy(
      api.url,
      inListings((pets) => pets.map((pet) => ({ ...pet, note: body }))),
    );
    try {
      const result = await smokeInProcess(['--url', proxy.url, '--key', api.key]);

      expect(result.stdout).toMatch(/^FAIL list +the body does not match the documented schema: .*"note":"…"/m);
      expectNoPartOf(result, api.key);
    } finally {
      await proxy.close();
    }
  });

  it('any part of 8 characters or more of the key, in any case, in any answer, header or body', async () => {
    /** What the broken server sends back this run: parts of the key, for the unknown route's header, the listing's and the 401's bodies. */
    let echoes = { header: '', listing: '', unauthorized: '' };
    const proxy = await startApiProxy(api.url, (answer, { method, path }) => {
      if (path.startsWith('/v1/smoke-test/')) answer.headers['cache-control'] = `no-store ${echoes.header}`;
      else if (answer.status === 401) answer.body = JSON.stringify({ ...JSON.parse(answer.body), hint: echoes.unauthorized });
      else if (/^\/v1\/pets\?/.test(path)) answer.body = JSON.stringify([{ note: echoes.listing }]);
    });
    const partOfKey = fc
      .tuple(
        fc.nat(),
        fc.integer({ min: 8, max: 52 }),
        fc.constantFrom<(part: string) => string>(
          (part) => part,
          (part) => part.toUpperCase(),
          (part) => part.toLowerCase(),
        ),
      )
      .map(([end, length, disguise]) => {
        // Ends 8 characters or more past the prefix, which names no key.
        const to = API_KEY_PREFIX.length + 8 + (end % (api.key.length - API_KEY_PREFIX.length - 7));
        return disguise(api.key.slice(Math.max(0, to - length), to));
      });
    try {
      await fc.assert(
        fc.asyncProperty(partOfKey, partOfKey, partOfKey, async (header, listing, unauthorized) => {
          echoes = { header, listing, unauthorized };
          const result = await smokeInProcess(['--url', proxy.url, '--key', api.key, '--read-only']);

          expect(statusesOf(result)).toMatchObject({ list: 'FAIL', 'no key': 'FAIL', 'unknown route': 'FAIL' });
          // Masked where received, so that no check holds it: in a header, which holds Latin-1 only, by "...".
          for (const [check, mask] of [
            ['list', '…'],
            ['no key', '…'],
            ['unknown route', '...'],
          ])
            expect(result.stdout.split('\n').find((line) => line.startsWith(`FAIL ${check} `))).toContain(mask);
          expectNoPartOf(result, api.key);
        }),
        { numRuns: 40, seed: 20_260_702 },
      );
    } finally {
      await proxy.close();
    }
  });
});

describe('npm run smoke with its output closed by the reader', () => {
  it('says in one line that the report could not be written, exit status 1, no stack trace', async () => {
    const result = await runCommandClosingOutput('npm', ['run', '--silent', 'smoke', '--', '--url', api.url, '--read-only'], {
      PETSTORE_API_KEY: api.key,
    });

    expect(expectOneLineFailure(result, { status: 1, secret: api.key })).toBe(
      'npm run smoke: the report could not be written, as standard output closed (EPIPE).',
    );
  });
});
