/** The key-audit function over a stream batch: one line per change, in order; a line not written is handed again. */
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHandler, logAuditEntry } from '../../functions/key-audit';
import { auditEntryOf, MAX_AUDIT_LINE_BYTES, TRUNCATED_TEXT_LENGTH, TRUNCATION_MARK, type KeyAuditEntry } from '../../shared/key-audit';
import { context } from '../support/events';
import { modifyRecord } from '../support/stream-records';

const batch = (...records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records });

describe('the key-audit function', () => {
  it('writes one line per change, in stream order', async () => {
    const written: KeyAuditEntry[] = [];
    const handler = createHandler({ write: (entry) => void written.push(entry) });

    const result = await handler(
      batch(
        modifyRecord('1', 'name', 'deploy'),
        modifyRecord('2', 'note', 'rotate in May'),
        modifyRecord('3', 'revokedAt', '2030-01-01T00:00:00.000Z'),
      ),
      context,
    );

    expect(result).toEqual({ batchItemFailures: [] });
    expect(written.map(({ eventId, sequenceNumber, action }) => [eventId, sequenceNumber, action])).toEqual([
      ['event-1', '1', 'renamed'],
      ['event-2', '2', 'changed'],
      ['event-3', '3', 'revoked'],
    ]);
  });

  it('reports the first record whose line fails, and writes none after it, so the stream hands them again in order', async () => {
    const written: string[] = [];
    let calls = 0;
    const handler = createHandler({
      write: ({ eventId }) => {
        calls += 1;
        if (calls === 2) throw new Error('log destination unavailable');
        written.push(eventId);
      },
    });

    const result = await handler(
      batch(modifyRecord('10', 'name', 'a'), modifyRecord('11', 'name', 'b'), modifyRecord('12', 'name', 'c')),
      context,
    );

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: '11' }] });
    expect(written).toEqual(['event-10']);
  });
});

describe('the audit line as logged', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** The JSON lines written to stdout while `run` runs. */
  const stdoutLines = (run: () => void): Array<Record<string, unknown>> => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    });
    run();
    vi.restoreAllMocks();
    return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  };

  it("is written whatever POWERTOOLS_LOG_LEVEL says (here SILENT, the tests' setting), and names its stream record", () => {
    expect(process.env.POWERTOOLS_LOG_LEVEL).toBe('SILENT');
    const entry = auditEntryOf(modifyRecord('42', 'revokedAt', '2030-01-01T00:00:00.000Z'));

    const lines = stdoutLines(() => logAuditEntry(entry!));

    expect(lines).toEqual([
      expect.objectContaining({ level: 'INFO', message: 'key change', action: 'revoked', eventId: 'event-42', sequenceNumber: '42' }),
    ]);
  });

  it("is written within a log event's size, truncated and marked so, when a change is longer (a 250 KB name)", async () => {
    const record = modifyRecord('43', 'name', 'n'.repeat(250_000));
    const written: KeyAuditEntry[] = [];
    const handler = createHandler({
      write: (entry) => {
        written.push(entry);
        logAuditEntry(entry);
      },
    });
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    });

    expect(await handler(batch(record), context)).toEqual({ batchItemFailures: [] });

    vi.restoreAllMocks();
    expect(lines).toHaveLength(1);
    const line = lines[0] ?? '';
    expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(MAX_AUDIT_LINE_BYTES);
    expect(JSON.parse(line)).toMatchObject({
      message: 'key change',
      truncated: true,
      keyId: 'ffffffffffff',
      action: 'renamed',
      by: 'unknown',
      eventId: 'event-43',
      sequenceNumber: '43',
      name: `${'n'.repeat(TRUNCATED_TEXT_LENGTH)}${TRUNCATION_MARK}`,
    });
    // The local trail stores what the log group would hold.
    expect(written).toEqual([expect.objectContaining({ truncated: true, name: `${'n'.repeat(TRUNCATED_TEXT_LENGTH)}${TRUNCATION_MARK}` })]);
  });
});
