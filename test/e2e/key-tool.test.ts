/**
 * The key tool and the API together: keys made, rolled, expired and moved between plans with
 * `npm run keys`'s commands (runKeysCommand, on the local stack's DynamoDB) are honoured over HTTP
 * by the local server within seconds, its authorizer cache on with API Gateway's default TTL
 * (300 s): the server drops the cached answers of a key whose item changes, and the expiry sweep
 * (run every second here) marks an expired key, which is such a change.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { writePlansFile } from '../support/plans-file';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { hashApiKey } from '../../shared/api-keys';
import type { Plans } from '../../shared/plans';
import { runKeysCommand } from '../../tools/keys/cli';
import { CHANGE_HOLDS_WITHIN_MS, expectError, inParallel, ROOMY_PLANS, startLocalApi, type LocalApi } from '../support/local-api';
import { requestsToEveryKeyedOperation } from '../support/operations';
import { databaseClient } from '../support/database';

/** The authorizer cache TTL: API Gateway's default, far longer than any test here waits. */
const AUTH_CACHE_TTL_SECONDS = 300;
/** How often the expiry sweep runs here (every minute under npm start, deployed too). */
const SWEEP_INTERVAL_MS = 1_000;

let api: LocalApi;
beforeAll(async () => {
  api = await startLocalApi({
    authCacheTtlSeconds: AUTH_CACHE_TTL_SECONDS,
    keyAudit: { pollIntervalMs: 60_000, expirySweepIntervalMs: SWEEP_INTERVAL_MS },
  });
});
afterAll(() => api.close());

/** `npm run keys -- …--json` on the local stack's keys table: the JSON objects it prints. */
const keysTool = async (...argv: string[]) => {
  const lines: string[] = [];
  const code = await runKeysCommand([...argv, '--json'], {
    env: {
      DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
      API_KEYS_TABLE_NAME: api.tables.apiKeys,
      API_KEY_LAST_USE_TABLE_NAME: api.tables.apiKeyLastUse,
    },
    print: (line) => lines.push(line),
  });
  expect(code).toBe(0);
  return lines.map((line) => JSON.parse(line) as { id: string; key?: string; expiresAt: string | null; scopes: string[] });
};

const newKey = async (...options: string[]) => {
  const [created] = await keysTool('create', '--name', 'e2e', ...options);
  if (!created?.key) throw new Error('create printed no key');
  return { id: created.id, key: created.key };
};

const listPets = (key: string) => api.call('/pets', { auth: false, headers: { Authorization: `Bearer ${key}` } });

/** Asks with `key` until it is refused; returns when that happened. Each answer before is a 200. */
const refusedAt = async (key: string, deadline: number): Promise<number> => {
  for (;;) {
    const response = await listPets(key);
    if (response.status !== 200) {
      await expectError(response, 401, 'unauthorized');
      return Date.now();
    }
    await response.arrayBuffer();
    if (Date.now() > deadline) throw new Error('the key is still accepted');
    await sleep(100);
  }
};

describe('keys made with the key tool, over HTTP', () => {
  it('lets a key created with --scopes pets:read list pets, and refuses it a create with 403 insufficient_scope', async () => {
    const { key } = await newKey('--scopes', 'pets:read');
    const before = (await (await api.call('/pets?limit=100')).json()) as unknown[];

    expect((await listPets(key)).status).toBe(200);
    const create = await api.call('/pets', {
      auth: false,
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    expect(create.headers.get('www-authenticate')).toBe('Bearer realm="pet-store", error="insufficient_scope"');
    await expectError(create, 403, 'forbidden');

    expect((await (await api.call('/pets?limit=100')).json()) as unknown[]).toHaveLength(before.length);
  });

  it('refuses a key created with --expires-in 2s with 401 once it has expired and the sweep has marked it, its allow cached', async () => {
    const createdAt = Date.now();
    const { key } = await newKey('--expires-in', '2s');
    expect((await listPets(key)).status).toBe(200);

    const refused = await refusedAt(key, createdAt + 2_000 + SWEEP_INTERVAL_MS + CHANGE_HOLDS_WITHIN_MS);

    expect(refused - createdAt).toBeGreaterThanOrEqual(2_000);
  });

  it('keeps a rolled key and its successor working during the --grace, then only the successor', async () => {
    const old = await newKey();
    expect((await listPets(old.key)).status).toBe(200);

    const rolledAt = Date.now();
    const [next, previous] = await keysTool('roll', old.id, '--grace', '2s');
    expect(previous).toMatchObject({ id: old.id, expiresAt: expect.any(String) });
    const successor = next?.key ?? '';
    expect((await listPets(old.key)).status).toBe(200);
    expect((await listPets(successor)).status).toBe(200);

    const refused = await refusedAt(old.key, rolledAt + 2_000 + SWEEP_INTERVAL_MS + CHANGE_HOLDS_WITHIN_MS);

    expect(refused - rolledAt).toBeGreaterThanOrEqual(2_000);
    expect((await listPets(successor)).status).toBe(200);
  });

  it('ends a leaked key at once when rolled with --grace 0, its allow cached, its successor working', async () => {
    const leaked = await newKey();
    expect((await listPets(leaked.key)).status).toBe(200);

    const [next] = await keysTool('roll', leaked.id, '--grace', '0');

    await refusedAt(leaked.key, Date.now() + CHANGE_HOLDS_WITHIN_MS);
    expect((await listPets(next?.key ?? '')).status).toBe(200);
  });

  it('answers 403 on every route to a key whose scopes attribute was deleted by hand, which list shows with no scope', async () => {
    const { id, key } = await newKey();
    const client = databaseClient({ endpoint: inject('dynamodbEndpoint') });
    try {
      await client.send(
        new UpdateCommand({ TableName: api.tables.apiKeys, Key: { keyHash: hashApiKey(key) }, UpdateExpression: 'REMOVE scopes' }),
      );
    } finally {
      client.destroy();
    }

    for (const [method, path] of requestsToEveryKeyedOperation) {
      const answer = await api.call(path, {
        auth: false,
        method,
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        ...(method === 'POST' ? { body: JSON.stringify({ name: 'Rex', categoryId: 1 }) } : {}),
      });
      expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="pet-store", error="insufficient_scope"');
      await expectError(answer, 403, 'forbidden');
    }
    expect((await keysTool('list')).find((listed) => listed.id === id)).toMatchObject({ scopes: [] });
    const lines: string[] = [];
    await runKeysCommand(['list'], {
      env: {
        DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
        API_KEYS_TABLE_NAME: api.tables.apiKeys,
        API_KEY_LAST_USE_TABLE_NAME: api.tables.apiKeyLastUse,
      },
      print: (line) => lines.push(line),
    });
    expect(lines.find((line) => line.startsWith(`${id}\t`))?.split('\t')[2]).toBe('(none)');
  });
});

describe('a key put on a plan with the key tool, over HTTP', () => {
  /** The server's plans, and the same in the PLANS_FILE the tool checks plan names against. */
  const SMALL = { rateLimit: 1, burstLimit: 2 };
  const PLANS: Plans = { ...ROOMY_PLANS, small: SMALL };
  const BURST = 12;
  let planned: LocalApi;
  const plansFile = writePlansFile(PLANS);

  beforeAll(async () => {
    planned = await startLocalApi({ authCacheTtlSeconds: AUTH_CACHE_TTL_SECONDS, plans: PLANS });
  });
  afterAll(async () => {
    await planned.close();
    plansFile.remove();
  });

  const plannedTool = async (...argv: string[]) => {
    const lines: string[] = [];
    const code = await runKeysCommand([...argv, '--json'], {
      env: {
        DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
        API_KEYS_TABLE_NAME: planned.tables.apiKeys,
        API_KEY_LAST_USE_TABLE_NAME: planned.tables.apiKeyLastUse,
        PLANS_FILE: plansFile.path,
      },
      print: (line) => lines.push(line),
    });
    expect(code).toBe(0);
    return lines.map((line) => JSON.parse(line) as { id: string; key?: string; plan: string });
  };

  /** The statuses of BURST requests sent at once with `key`; each 429 checked as too_many_requests. */
  const burst = async (key: string): Promise<number[]> =>
    inParallel(BURST, BURST, async () => {
      const response = await planned.call('/pets', { auth: false, headers: { Authorization: `Bearer ${key}` } });
      if (response.status === 429) await expectError(response, 429, 'too_many_requests');
      else await response.arrayBuffer();
      return response.status;
    });

  it('throttles a key created --plan small while a default key is answered, and set-plan lifts it', async () => {
    const [small] = await plannedTool('create', '--name', 'small-client', '--plan', 'small');
    const [roomy] = await plannedTool('create', '--name', 'default-client');
    expect(small).toMatchObject({ plan: 'small' });
    expect(roomy).toMatchObject({ plan: 'default' });

    const [smallStatuses, roomyStatuses] = await Promise.all([burst(small?.key ?? ''), burst(roomy?.key ?? '')]);
    expect(smallStatuses).toContain(429);
    // Its burst, and what its rate refills while the requests arrive.
    expect(smallStatuses.filter((status) => status === 200).length).toBeLessThanOrEqual(SMALL.burstLimit + 1);
    expect(roomyStatuses).toEqual(Array(BURST).fill(200));

    const [moved] = await plannedTool('set-plan', small?.id ?? '', 'default');
    expect(moved).toMatchObject({ id: small?.id, plan: 'default' });

    // The plan the gateway meters on is the authorizer's answer, cached: dropped once the key's item changed.
    await expect.poll(() => burst(small?.key ?? ''), { timeout: CHANGE_HOLDS_WITHIN_MS, interval: 100 }).toEqual(Array(BURST).fill(200));
  });
});
