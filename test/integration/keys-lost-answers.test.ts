/**
 * A key command whose write landed but whose answer was lost (the connection dropped after
 * DynamoDB took the write) finds out what happened, rather than leaving behind an active key or
 * a shortened grace that no one was told of. DynamoDB Local behind test/support/fault-proxy.ts,
 * which forwards the write, lets it land, then closes the connection instead of answering.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { apiKeysRepository, type ApiKeysRepository } from '../../shared/api-keys-repository';
import { runKeysCommand } from '../../tools/keys/cli';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { createTestTables, keyTablesEnv, type TestTables } from '../support/tables';

let tables: TestTables;
let keys: ApiKeysRepository;
let proxy: FaultProxy;
let lines: string[];

beforeEach(async () => {
  tables = await createTestTables();
  keys = apiKeysRepository({ client: tables.client, tables });
  proxy = await startFaultProxy(tables.endpoint);
  lines = [];
});
afterEach(async () => {
  await proxy.close();
});

/** The tool against the table, through the proxy. */
const run = (...argv: string[]) =>
  runKeysCommand(argv, {
    env: keyTablesEnv(proxy.endpoint, tables),
    print: (line) => lines.push(line),
  });

const printed = () => lines.map((line) => JSON.parse(line) as { id: string; key?: string; expiresAt: string | null });

describe('a write whose answer is lost', () => {
  it('create: every answer to its PutItem lost, it reads the key again, finds it stored, and shows it', async () => {
    proxy.inject({ operation: 'PutItem', table: tables.apiKeys, fault: 'lose-answer' });

    expect(await run('create', '--name', 'lost answer', '--json')).toBe(0);

    const [created] = printed();
    expect(created?.key).toMatch(/^petstore_/);
    expect(proxy.calls({ operation: 'PutItem' })).toBeGreaterThan(0);
    // The key shown is the key stored, and it works.
    expect((await keys.findActive(String(created?.key)))?.keyId).toBe(created?.id);
    expect(await keys.list()).toHaveLength(1);
  });

  it('roll: every answer to its transaction lost, it reads both keys again and reports the roll: the new key and the old one’s expiry', async () => {
    expect(await run('create', '--name', 'rolled', '--json')).toBe(0);
    const [old] = printed();
    lines = [];
    proxy.inject({ operation: 'TransactWriteItems', fault: 'lose-answer' });

    expect(await run('roll', String(old?.id), '--grace', '1h', '--json')).toBe(0);

    const [next, previous] = printed();
    expect(next?.key).toMatch(/^petstore_/);
    expect(previous?.id).toBe(old?.id);
    const stored = await keys.findById(String(old?.id));
    expect(stored).toMatchObject({ replacedBy: next?.id, expiresAt: previous?.expiresAt });
    expect((await keys.findActive(String(next?.key)))?.replaces).toBe(old?.id);
  });

  it('create: its answer and the read again both lost, it says in one line which key to revoke', async () => {
    proxy.inject({ operation: 'PutItem', table: tables.apiKeys, fault: 'lose-answer' });
    proxy.inject({ operation: 'GetItem', table: tables.apiKeys, fault: 'drop' });

    const error = await run('create', '--name', 'unknown', '--json').catch((thrown: unknown) => thrown);

    const [stored] = await keys.list();
    expect(stored).toBeDefined();
    expect((error as Error).message).toBe(
      `DynamoDB did not answer the write of key ${stored?.keyId}, nor the read that would tell whether it landed: ` +
        `its key was shown to no one. Revoke it: npm run keys -- revoke ${stored?.keyId}`,
    );
    expect(lines).toEqual([]);
  });
});
