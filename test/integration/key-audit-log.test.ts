/**
 * The local audit log as `npm run keys -- audit` reads it: its lines and the records set aside
 * come from one scan of the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyAuditEntry } from '../../shared/key-audit';
import { runAuditCommand } from '../../tools/keys/audit';
import { ensureLocalAuditLog, localAuditLogName, localAuditWriter, recordFailedAuditRecord } from '../../tools/local-server/key-audit-log';
import { recordingClient } from '../support/recording-client';
import { createTestTables, type TestTables } from '../support/tables';

let tables: TestTables;

const entry = (keyId: string, sequenceNumber: string, action: KeyAuditEntry['action']): KeyAuditEntry => ({
  at: '2026-01-02T03:04:05.000Z',
  keyId,
  name: `key ${keyId}`,
  action,
  by: 'local:auditor',
  changes: {},
  streamAt: '2026-01-02T03:04:00Z',
  eventId: `event-${sequenceNumber}`,
  sequenceNumber,
});

const created = entry('aaaaaaaaaaaa', '99', 'created');
const revoked = entry('aaaaaaaaaaaa', '100', 'revoked');
const other = entry('bbbbbbbbbbbb', '101', 'created');

beforeAll(async () => {
  tables = await createTestTables();
  await ensureLocalAuditLog(tables.client, tables.apiKeys);
  const write = localAuditWriter(tables.client, tables.apiKeys);
  for (const line of [revoked, other, created]) await write(line);
  await recordFailedAuditRecord(tables.client, tables.apiKeys, {
    eventId: 'event-102',
    sequenceNumber: '102',
    keyId: 'aaaaaaaaaaaa',
    streamAt: '2026-01-02T03:05:00Z',
    failedAt: '2026-01-02T03:06:00Z',
    attempts: 4,
  });
});
afterAll(() => tables?.client.destroy());

/** `audit [KEY_ID] --json` on a client that notes its commands: the lines printed, the refusal, and the scans of the log. */
const auditScanned = async (keyId?: string) => {
  const { client, sent } = recordingClient(tables.endpoint);
  const lines: string[] = [];
  try {
    const error = await runAuditCommand(keyId, {
      keyId,
      json: true,
      tableName: tables.apiKeys,
      endpoint: tables.endpoint,
      client,
      print: (line) => lines.push(line),
    }).then(
      () => undefined,
      (refusal: Error) => refusal.message,
    );
    const scans = sent.filter(({ command, tableName }) => command === 'Scan' && tableName === localAuditLogName(tables.apiKeys));
    return { entries: lines.map((line) => JSON.parse(line) as KeyAuditEntry), error, scans: scans.length };
  } finally {
    client.destroy();
  }
};

describe('npm run keys -- audit on the local audit log', () => {
  it('reads the lines and the records set aside in one scan', async () => {
    const { entries, error, scans } = await auditScanned();
    expect(entries.map(({ eventId }) => eventId)).toEqual(['event-99', 'event-100', 'event-101']);
    expect(error).toMatch(
      /^1 change\(s\) missing from the local audit trail: .* stream record 102 \(key aaaaaaaaaaaa, 2026-01-02T03:05:00Z\); /,
    );
    expect(scans).toBe(1);
  });

  it("reads one key's lines and records set aside in one scan", async () => {
    const { entries, error, scans } = await auditScanned('bbbbbbbbbbbb');
    expect(entries.map(({ eventId }) => eventId)).toEqual(['event-101']);
    expect(error).toBeUndefined();
    expect(scans).toBe(1);

    const ofA = await auditScanned('aaaaaaaaaaaa');
    expect(ofA.entries.map(({ eventId }) => eventId)).toEqual(['event-99', 'event-100']);
    expect(ofA.error).toMatch(/stream record 102 \(key aaaaaaaaaaaa, /);
    expect(ofA.scans).toBe(1);
  });
});
