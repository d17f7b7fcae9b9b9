/**
 * `npm run keys -- usage` and `list --usage` against the local server: the requests a key makes
 * over HTTP are counted today, as the local gateway's meter let them through (a refused one is
 * not), and what remains of the plan's quota goes down by as many. The tool reads the local
 * server's usage table on the same DynamoDB; the server and the tool have the same plans.
 */
import { writePlansFile } from '../support/plans-file';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Plans } from '../../shared/plans';
import { runKeysCommand } from '../../tools/keys/cli';
import { startLocalStack } from '../../tools/local-server/local-stack';
import { expectError, inParallel, ROOMY_PLANS, startLocalApi, type LocalApi } from '../support/local-api';
import { keyTablesEnv } from '../support/tables';

const QUOTA = 5;
const PLANS: Plans = { ...ROOMY_PLANS, metered: { rateLimit: 1_000, burstLimit: 1_000, quota: { limit: QUOTA, period: 'DAY' } } };

let api: LocalApi;
const plansFile = writePlansFile(PLANS);

beforeAll(async () => {
  api = await startLocalApi({ plans: PLANS });
});
afterAll(async () => {
  await api.close();
  plansFile.remove();
});

/** `npm run keys -- …` on the local server's DynamoDB and plans: the lines it prints. */
const keysTool = async (...argv: string[]): Promise<string[]> => {
  const lines: string[] = [];
  const code = await runKeysCommand(argv, {
    env: { ...keyTablesEnv(inject('dynamodbEndpoint'), api.tables), PLANS_FILE: plansFile.path },
    print: (line) => lines.push(line),
  });
  expect(code).toBe(0);
  return lines;
};

interface Usage {
  readonly days: ReadonlyArray<{ readonly day: string; readonly requests: number }>;
  readonly quota: { readonly limit: number; readonly period: string; readonly remaining: number } | null;
}
const usageOf = async (keyId: string): Promise<Usage> => JSON.parse((await keysTool('usage', keyId, '--json'))[0] ?? '') as Usage;

const newKey = async (plan: string) => {
  const created = JSON.parse((await keysTool('create', '--name', `usage-${plan}`, '--plan', plan, '--json'))[0] ?? '') as {
    id: string;
    key: string;
  };
  return created;
};

const listPets = (key: string) => api.call('/pets', { auth: false, headers: { Authorization: `Bearer ${key}` } });
const today = () => new Date().toISOString().slice(0, 10);

describe("a key's usage, counted by the local server and read by the key tool", () => {
  it("counts today's requests as they are answered, and the remaining quota goes down by as many; a refused one is not counted", async () => {
    const { id, key } = await newKey('metered');
    const before = await usageOf(id);
    expect(before.days).toHaveLength(7);
    expect(before.days.at(-1)).toEqual({ day: today(), requests: 0 });
    expect(before.quota).toEqual({ limit: QUOTA, period: 'DAY', remaining: QUOTA });

    for (let sent = 0; sent < 3; sent += 1) expect((await listPets(key)).status).toBe(200);
    const after = await usageOf(id);
    expect(after.days.at(-1)).toEqual({ day: today(), requests: 3 });
    expect(after.quota).toEqual({ limit: QUOTA, period: 'DAY', remaining: QUOTA - 3 });

    // Up to the quota, then one refused by it.
    for (let sent = 3; sent < QUOTA; sent += 1) expect((await listPets(key)).status).toBe(200);
    await expectError(await listPets(key), 429, 'quota_exceeded');
    const spent = await usageOf(id);
    expect(spent.days.at(-1)).toEqual({ day: today(), requests: QUOTA });
    expect(spent.quota?.remaining).toBe(0);

    const text = await keysTool('usage', id, '--days', '2');
    expect(text).toEqual([
      'day         requests',
      `${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}  0`,
      `${today()}  ${QUOTA}`,
      `remaining: 0 of ${QUOTA} this DAY (plan metered)`,
    ]);
  });

  it("list --usage shows each key's requests today", async () => {
    const busy = await newKey('default');
    const idle = await newKey('default');
    for (let sent = 0; sent < 4; sent += 1) expect((await listPets(busy.key)).status).toBe(200);

    const listed = (await keysTool('list', '--usage', '--json')).map((line) => JSON.parse(line) as { id: string; usedToday: number });
    const usedToday = new Map(listed.map(({ id, usedToday }) => [id, usedToday]));
    expect(usedToday.get(busy.id)).toBe(4);
    expect(usedToday.get(idle.id)).toBe(0);
  });

  it('counts requests answered at once each once', async () => {
    const { id, key } = await newKey('default');
    const statuses = await inParallel(40, 20, async () => {
      const response = await listPets(key);
      await response.arrayBuffer();
      return response.status;
    });
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect((await usageOf(id)).days.at(-1)).toEqual({ day: today(), requests: 40 });
  });

  it('shows no quota for a plan without one', async () => {
    const { id, key } = await newKey('default');
    expect((await listPets(key)).status).toBe(200);
    expect((await keysTool('usage', id, '--days', '1')).at(-1)).toBe('remaining: no quota (plan default)');
  });

  // Last: it starts another server on this keys table.
  it('starts from zero when the local stack starts again on the same tables, as its meter does', async () => {
    const { id, key } = await newKey('metered');
    expect((await listPets(key)).status).toBe(200);
    expect((await usageOf(id)).days.at(-1)).toEqual({ day: today(), requests: 1 });

    const again = await startLocalStack({
      dynamodbEndpoint: inject('dynamodbEndpoint'),
      tables: api.tables,
      keyName: 'again',
      server: { port: 0, plans: PLANS },
    });
    try {
      expect(await usageOf(id)).toMatchObject({ quota: { remaining: QUOTA } });
      const response = await fetch(`${again.url}/pets`, { headers: { Authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
      expect((await usageOf(id)).days.at(-1)).toEqual({ day: today(), requests: 1 });
    } finally {
      await again.stop();
    }
  });
});
