/**
 * The audit entry of a keys-table stream record. The records are in the shape AWS documents for a
 * DynamoDB stream event (Lambda's DynamoDBStreamEvent, StreamViewType NEW_AND_OLD_IMAGES):
 * `eventName` INSERT, MODIFY or REMOVE; `dynamodb.NewImage` / `dynamodb.OldImage` in raw
 * attribute values ({"S": …}, {"SS": […]}); `dynamodb.ApproximateCreationDateTime` in epoch seconds.
 */
import type { AttributeValue, DynamoDBRecord } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import {
  auditEntryOf,
  auditLogGroupName,
  DECLARED_TIME_TOLERANCE_MS,
  fitAuditEntry,
  MAX_AUDIT_ENTRY_BYTES,
  TRUNCATED_TEXT_LENGTH,
  TRUNCATION_MARK,
  type KeyAuditEntry,
} from '../../shared/key-audit';
import { READ_PETS, WRITE_PETS } from '../support/vocabulary';

const key = generateApiKey();
const keyHash = hashApiKey(key);
const keyId = keyIdOf(keyHash);
/** 2030-01-02T03:04:05Z, as the stream gives it. */
const STREAM_SECONDS = 1_893_553_445;
const STREAM_TIME = '2030-01-02T03:04:05.000Z';
/** A time the key tool declares for a change: a few seconds before the stream records it. */
const TOOL_TIME = '2030-01-02T03:04:03.000Z';
const EVENT_ID = 'c4ca4238a0b923820dcc509a6f75849b';
/** What every entry says of its stream record. */
const SOURCE = { streamAt: STREAM_TIME, eventId: EVENT_ID, sequenceNumber: '111' };

type Image = Record<string, AttributeValue>;

/** A secret-like value as the trail may show it: the first 8 hex digits of its SHA-256. */
const fingerprint = (value: string) => `sha256:${createHash('sha256').update(value).digest('hex').slice(0, 8)}`;

/** A stored key as DynamoDB writes it in a stream image. */
const stored = (extra: Image = {}): Image => ({
  keyHash: { S: keyHash },
  keyId: { S: keyId },
  name: { S: 'ci' },
  scopes: { SS: [READ_PETS, WRITE_PETS] },
  createdAt: { S: TOOL_TIME },
  changedBy: { S: 'arn:aws:sts::123456789012:assumed-role/admin/alice' },
  changedAt: { S: TOOL_TIME },
  ...extra,
});

const streamRecord = (eventName: 'INSERT' | 'MODIFY' | 'REMOVE', { OldImage, NewImage }: { OldImage?: Image; NewImage?: Image }) =>
  ({
    eventID: EVENT_ID,
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'eu-west-1',
    dynamodb: {
      ApproximateCreationDateTime: STREAM_SECONDS,
      Keys: { keyHash: { S: keyHash } },
      ...(NewImage ? { NewImage } : {}),
      ...(OldImage ? { OldImage } : {}),
      SequenceNumber: '111',
      SizeBytes: 26,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
    eventSourceARN: 'arn:aws:dynamodb:eu-west-1:123456789012:table/api-keys/stream/2030-01-01T00:00:00.000',
  }) satisfies DynamoDBRecord;

const modify = (OldImage: Image, NewImage: Image) => auditEntryOf(streamRecord('MODIFY', { OldImage, NewImage }));
const byTool = (at: string) => ({ changedBy: { S: 'local:bob' }, changedAt: { S: at } });

describe('auditEntryOf', () => {
  it('records a key created through the key tool: who, when, and every attribute but the hash', () => {
    expect(auditEntryOf(streamRecord('INSERT', { NewImage: stored() }))).toEqual({
      at: TOOL_TIME,
      keyId,
      name: 'ci',
      action: 'created',
      by: 'arn:aws:sts::123456789012:assumed-role/admin/alice',
      changes: {
        createdAt: { from: null, to: TOOL_TIME },
        keyId: { from: null, to: keyId },
        name: { from: null, to: 'ci' },
        scopes: { from: null, to: [READ_PETS, WRITE_PETS], grants: { from: [], to: [READ_PETS, WRITE_PETS] } },
      },
      ...SOURCE,
    });
  });

  it('records an INSERT that replaces another key as rolled', () => {
    const entry = auditEntryOf(streamRecord('INSERT', { NewImage: stored({ replaces: { S: 'aaaaaaaaaaaa' } }) }));
    expect(entry).toMatchObject({ action: 'rolled', changes: { replaces: { from: null, to: 'aaaaaaaaaaaa' } } });
  });

  it('records a revocation with its time and revoker', () => {
    const after = stored({ revokedAt: { S: '2030-01-02T03:04:04.000Z' }, ...byTool('2030-01-02T03:04:04.000Z') });
    expect(modify(stored(), after)).toEqual({
      at: '2030-01-02T03:04:04.000Z',
      keyId,
      name: 'ci',
      action: 'revoked',
      by: 'local:bob',
      changes: { revokedAt: { from: null, to: '2030-01-02T03:04:04.000Z' } },
      ...SOURCE,
    });
  });

  it('names the region a declared change was written in, and lists its stamp only when the write did not declare it', () => {
    const after = stored({
      revokedAt: { S: '2030-01-02T03:04:04.000Z' },
      ...byTool('2030-01-02T03:04:04.000Z'),
      changedInRegion: { S: 'us-east-2' },
    });
    expect(modify(stored({ changedInRegion: { S: 'us-east-1' } }), after)).toEqual({
      at: '2030-01-02T03:04:04.000Z',
      keyId,
      name: 'ci',
      action: 'revoked',
      by: 'local:bob',
      region: 'us-east-2',
      changes: { revokedAt: { from: null, to: '2030-01-02T03:04:04.000Z' } },
      ...SOURCE,
    });
    // Undeclared (changedAt as it was): a change like any other, and no region named.
    const edited = modify(stored(), stored({ changedInRegion: { S: 'us-east-2' } }));
    expect(edited).toMatchObject({ by: 'unknown', changes: { changedInRegion: { from: null, to: 'us-east-2' } } });
    expect(edited).not.toHaveProperty('region');
  });

  it("records the deletion of a key's usage key as usage_key_deleted, its release index marker left out", () => {
    const before = stored({ revokedAt: { S: '2030-01-02T03:00:00.000Z' }, usageKeyRelease: { S: 'pending' } });
    const { usageKeyRelease: _released, ...rest } = before;
    const after = {
      ...rest,
      usageKeyDeletedAt: { S: '2030-01-02T03:04:04.500Z' },
      changedBy: { S: 'system:key-expiry' },
      changedAt: { S: '2030-01-02T03:04:04.500Z' },
    };
    const entry = modify(before, after);
    expect(entry).toMatchObject({
      action: 'usage_key_deleted',
      by: 'system:key-expiry',
      changes: { usageKeyDeletedAt: { from: null, to: '2030-01-02T03:04:04.500Z' } },
    });
    expect(Object.keys(entry?.changes ?? {})).not.toContain('usageKeyRelease');
  });

  it("records the expiry sweep's mark as expired, by the sweep", () => {
    const before = stored({ expiresAt: { S: '2030-01-02T03:00:00.000Z' } });
    const after = {
      ...before,
      expiredAt: { S: '2030-01-02T03:00:00.000Z' },
      changedBy: { S: 'system:key-expiry' },
      changedAt: { S: '2030-01-02T03:04:04.500Z' },
    };
    expect(modify(before, after)).toMatchObject({
      action: 'expired',
      by: 'system:key-expiry',
      at: '2030-01-02T03:04:04.500Z',
      changes: { expiredAt: { from: null, to: '2030-01-02T03:00:00.000Z' } },
    });
  });

  it('records scopes narrowed in the console (a String Set, changedAt untouched) as by an unknown person, at the stream time', () => {
    expect(modify(stored(), stored({ scopes: { SS: [READ_PETS] } }))).toEqual({
      at: STREAM_TIME,
      keyId,
      name: 'ci',
      action: 'scopes_changed',
      by: 'unknown',
      changes: {
        scopes: { from: [READ_PETS, WRITE_PETS], to: [READ_PETS], grants: { from: [READ_PETS, WRITE_PETS], to: [READ_PETS] } },
      },
      ...SOURCE,
    });
  });

  it('lists a usage key paired by the tool with its id, and its value by fingerprint only', () => {
    const value = 'f'.repeat(40);
    const entry = modify(
      stored(),
      stored({ plan: { S: 'partner' }, usageKeyId: { S: 'abc123' }, usageKey: { S: value }, ...byTool('2030-01-02T03:04:04.000Z') }),
    );
    expect(entry).toMatchObject({ action: 'changed', by: 'local:bob' });
    expect(entry?.changes).toEqual({
      plan: { from: null, to: 'partner' },
      usageKey: { from: null, to: fingerprint(value) },
      usageKeyId: { from: null, to: 'abc123' },
    });
    expect(JSON.stringify(entry)).not.toContain(value);
  });

  it("records a usage key copied from another key in the console, by fingerprint, never the value: the copy spends the other's quota", () => {
    const own = 'own-usage-key-value-0123456789';
    const victims = 'victims-usage-key-value-9876543210';
    const entry = modify(
      stored({ usageKeyId: { S: 'own-id' }, usageKey: { S: own } }),
      stored({ usageKeyId: { S: 'own-id' }, usageKey: { S: victims } }),
    );
    expect(entry).toEqual({
      at: STREAM_TIME,
      keyId,
      name: 'ci',
      action: 'changed',
      by: 'unknown',
      changes: { usageKey: { from: fingerprint(own), to: fingerprint(victims) } },
      ...SOURCE,
    });
    expect(JSON.stringify(entry)).not.toContain(own);
    expect(JSON.stringify(entry)).not.toContain(victims);
  });

  it('records a usage key removed in the console (the key escapes its plan), and one of another type, by fingerprint', () => {
    const value = 'usage-key-value-0123456789abcdef';
    const paired = stored({ usageKeyId: { S: 'id-1' }, usageKey: { S: value } });
    const { usageKey: _, ...unpaired } = paired;
    expect(modify(paired, unpaired)).toMatchObject({
      action: 'changed',
      by: 'unknown',
      changes: { usageKey: { from: fingerprint(value), to: null } },
    });
    const numbered = modify(paired, stored({ usageKeyId: { S: 'id-1' }, usageKey: { N: '12345678901234567890' } }));
    expect(numbered?.changes.usageKey).toEqual({ from: fingerprint(value), to: { N: fingerprint('"12345678901234567890"') } });
    expect(JSON.stringify(numbered)).not.toContain('12345678901234567890');
  });

  it('writes a fingerprint of an API key or a key hash pasted into any text, an attribute name included', () => {
    const pasted = generateApiKey();
    const otherHash = hashApiKey(generateApiKey());
    const entry = modify(
      stored(),
      stored({ name: { S: `ci ${pasted}` }, note: { S: `was ${otherHash}` }, [`x${pasted}`]: { L: [{ S: pasted }] } }),
    );
    const line = JSON.stringify(entry);
    expect(line).not.toContain(pasted);
    expect(line).not.toContain(otherHash);
    expect(entry?.name).toBe(`ci [secret ${fingerprint(pasted)}]`);
    expect(entry?.changes.note).toEqual({ from: null, to: `was [secret ${fingerprint(otherHash)}]` });
    expect(entry?.changes[`x[secret ${fingerprint(pasted)}]`]).toEqual({
      from: null,
      to: { L: [{ S: `[secret ${fingerprint(pasted)}]` }] },
    });
  });

  it("names the key by its hash's id, and records a keyId attribute edited in the console as a change", () => {
    expect(modify(stored(), stored({ keyId: { S: 'aaaaaaaaaaaa' } }))).toMatchObject({
      keyId,
      action: 'changed',
      changes: { keyId: { from: keyId, to: 'aaaaaaaaaaaa' } },
    });
  });

  it('records a write that changes only who-and-when, listing them', () => {
    const entry = modify(stored(), stored(byTool('2030-01-02T03:04:04.000Z')));
    expect(entry).toMatchObject({
      action: 'changed',
      by: 'local:bob',
      changes: {
        changedAt: { from: TOOL_TIME, to: '2030-01-02T03:04:04.000Z' },
        changedBy: { from: 'arn:aws:sts::123456789012:assumed-role/admin/alice', to: 'local:bob' },
      },
    });
    // changedBy rewritten in the console, its changedAt left as it was: not believed, and listed.
    expect(modify(stored(), stored({ changedBy: { S: 'local:alice' } }))).toMatchObject({
      by: 'unknown',
      changes: { changedBy: { from: 'arn:aws:sts::123456789012:assumed-role/admin/alice', to: 'local:alice' } },
    });
  });

  it('compares String Sets as sets: the same scopes in another order are no change', () => {
    expect(modify(stored(), stored({ scopes: { SS: [WRITE_PETS, READ_PETS] } }))).toBeUndefined();
  });

  it('records a scopes attribute removed as a scope change that grants nothing', () => {
    const { scopes: _, ...withoutScopes } = stored();
    expect(modify(stored(), withoutScopes)).toMatchObject({
      action: 'scopes_changed',
      changes: { scopes: { from: [READ_PETS, WRITE_PETS], to: null, grants: { from: [READ_PETS, WRITE_PETS], to: [] } } },
    });
  });

  it('records no scopes for an item put without a scopes attribute: it is granted nothing, as no item is', () => {
    const { scopes: _, ...withoutScopes } = stored();
    const entry = auditEntryOf(streamRecord('INSERT', { NewImage: withoutScopes }));
    expect(entry?.action).toBe('created');
    expect(entry?.changes).not.toHaveProperty('scopes');
  });

  it('tells an attribute of another type from an absent one: a NULL revokedAt revokes, and is recorded', () => {
    expect(modify(stored(), stored({ revokedAt: { NULL: true } }))).toMatchObject({
      action: 'revoked',
      by: 'unknown',
      changes: { revokedAt: { from: null, to: { NULL: true } } },
    });
    expect(modify(stored(), stored({ revokedAt: { BOOL: false } }))?.action).toBe('revoked');
    expect(modify(stored(), stored({ expiresAt: { NULL: true } }))).toMatchObject({
      action: 'expiry_set',
      changes: { expiresAt: { from: null, to: { NULL: true } } },
    });
    expect(modify(stored(), stored({ scopes: { L: [{ S: READ_PETS }] } }))?.changes.scopes).toEqual({
      from: [READ_PETS, WRITE_PETS],
      to: { L: [{ S: READ_PETS }] },
      grants: { from: [READ_PETS, WRITE_PETS], to: [READ_PETS] },
    });
  });

  it('records revokedAt removed as unrevoked: the key works again', () => {
    const revoked = stored({ revokedAt: { S: '2030-01-02T00:00:00.000Z' } });
    expect(modify(revoked, stored())).toMatchObject({
      action: 'unrevoked',
      by: 'unknown',
      changes: { revokedAt: { from: '2030-01-02T00:00:00.000Z', to: null } },
    });
    expect(modify(stored({ revokedAt: { NULL: true } }), stored())?.action).toBe('unrevoked');
  });

  it('believes a declared changedBy only when its changedAt is close to the stream time', () => {
    // A console "duplicate item" of a key made with the tool carries the original's stamp.
    const copied = auditEntryOf(streamRecord('INSERT', { NewImage: stored(byTool('2029-12-01T00:00:00.000Z')) }));
    expect(copied).toMatchObject({ action: 'created', by: 'unknown', at: STREAM_TIME });
    // A writer naming someone else with a stamp far from now.
    const far = new Date(Date.parse(STREAM_TIME) + DECLARED_TIME_TOLERANCE_MS + 1000).toISOString();
    expect(modify(stored(), stored({ name: { S: 'x' }, ...byTool(far) }))).toMatchObject({ by: 'unknown', at: STREAM_TIME });
    // DynamoDB Local's stream time is rounded down to the minute: a minute later is still believed.
    const minuteLater = new Date(Date.parse(STREAM_TIME) + 60_000).toISOString();
    expect(modify(stored(), stored({ name: { S: 'x' }, ...byTool(minuteLater) }))).toMatchObject({ by: 'local:bob', at: minuteLater });
  });

  it('records an expiry set, changed and removed', () => {
    const expiring = stored({ expiresAt: { S: '2030-02-01T00:00:00.000Z' } });
    expect(modify(stored(), expiring)).toMatchObject({
      action: 'expiry_set',
      changes: { expiresAt: { from: null, to: '2030-02-01T00:00:00.000Z' } },
    });
    expect(modify(expiring, stored({ expiresAt: { S: '2030-03-01T00:00:00.000Z' } }))?.action).toBe('expiry_set');
    expect(modify(expiring, stored())).toMatchObject({
      action: 'expiry_removed',
      changes: { expiresAt: { from: '2030-02-01T00:00:00.000Z', to: null } },
    });
  });

  it('records the old end of a roll as an expiry set, naming its successor', () => {
    const after = stored({
      expiresAt: { S: '2030-01-02T00:00:00.000Z' },
      replacedBy: { S: 'bbbbbbbbbbbb' },
      ...byTool('2030-01-02T03:04:04.000Z'),
    });
    expect(modify(stored(), after)).toMatchObject({
      action: 'expiry_set',
      by: 'local:bob',
      changes: { expiresAt: { to: '2030-01-02T00:00:00.000Z' }, replacedBy: { from: null, to: 'bbbbbbbbbbbb' } },
    });
  });

  it('records a rename, and any other attribute as changed', () => {
    expect(modify(stored(), stored({ name: { S: 'deploy' } }))).toMatchObject({
      action: 'renamed',
      name: 'deploy',
      changes: { name: { from: 'ci', to: 'deploy' } },
    });
    expect(modify(stored(), stored({ note: { S: 'rotate in May' } }))).toMatchObject({
      action: 'changed',
      changes: { note: { from: null, to: 'rotate in May' } },
    });
    expect(modify(stored(), stored({ priority: { N: '3' } }))?.changes).toEqual({ priority: { from: null, to: { N: '3' } } });
  });

  it("records every change of a lastUsedAt on a key's item: only the console makes one, the authorizer writing its own table", () => {
    const usedAt = stored({ lastUsedAt: { S: '2030-01-02T03:00:00.000Z' } });
    const edits: Array<[string, Image, Image]> = [
      ['set, to the time of the write', stored(), stored({ lastUsedAt: { S: '2030-01-02T03:04:04.871Z' } })],
      ['moved on by an hour', usedAt, stored({ lastUsedAt: { S: '2030-01-02T04:00:00.000Z' } })],
      ['set back', usedAt, stored({ lastUsedAt: { S: '2029-06-01T00:00:00.000Z' } })],
      ['made unreadable', usedAt, stored({ lastUsedAt: { S: 'yesterday' } })],
      ['of another type', usedAt, stored({ lastUsedAt: { N: '1893553445' } })],
      ['removed', usedAt, stored()],
    ];
    for (const [edit, before, after] of edits) {
      const entry = modify(before, after);
      expect(entry, edit).toMatchObject({ action: 'changed', by: 'unknown', at: STREAM_TIME });
      expect(Object.keys(entry?.changes ?? {}), edit).toEqual(['lastUsedAt']);
    }
    expect(modify(stored(), stored())).toBeUndefined();
  });

  it('names the console for a change that keeps the last tool change', () => {
    // The item still says who changed it last through the tool; this write is not theirs.
    const entry = modify(stored(), stored({ revokedAt: { S: '2030-01-07T00:00:00.000Z' } }));
    expect(entry).toMatchObject({ action: 'revoked', by: 'unknown', at: STREAM_TIME });
  });

  it('records a deleted item from its old image, by an unknown person', () => {
    expect(auditEntryOf(streamRecord('REMOVE', { OldImage: stored() }))).toEqual({
      at: STREAM_TIME,
      keyId,
      name: 'ci',
      action: 'deleted',
      by: 'unknown',
      changes: {
        changedAt: { from: TOOL_TIME, to: null },
        changedBy: { from: 'arn:aws:sts::123456789012:assumed-role/admin/alice', to: null },
        createdAt: { from: TOOL_TIME, to: null },
        keyId: { from: keyId, to: null },
        name: { from: 'ci', to: null },
        scopes: { from: [READ_PETS, WRITE_PETS], to: null, grants: { from: [READ_PETS, WRITE_PETS], to: [] } },
      },
      ...SOURCE,
    });
  });

  it('reads the stream time of a record the AWS CLI printed (an ISO string), as when a failed batch is recovered by hand', () => {
    const record = streamRecord('MODIFY', {
      OldImage: stored(),
      NewImage: stored({ name: { S: 'x' }, ...byTool('2030-01-02T03:04:04.000Z') }),
    });
    const printed = { ...record, dynamodb: { ...record.dynamodb, ApproximateCreationDateTime: '2030-01-02T03:04:05+00:00' } };
    expect(auditEntryOf(printed as unknown as DynamoDBRecord)).toMatchObject({
      streamAt: STREAM_TIME,
      by: 'local:bob',
      at: '2030-01-02T03:04:04.000Z',
    });
  });

  it('takes the id from the hash for an item written without one', () => {
    const { keyId: _, ...withoutId } = stored();
    expect(auditEntryOf(streamRecord('INSERT', { NewImage: withoutId }))?.keyId).toBe(keyId);
  });

  it('never carries the key or its hash', () => {
    const records = [
      streamRecord('INSERT', { NewImage: stored() }),
      streamRecord('MODIFY', { OldImage: stored(), NewImage: stored({ scopes: { SS: [READ_PETS] } }) }),
      streamRecord('REMOVE', { OldImage: stored() }),
    ];
    for (const record of records) {
      const line = JSON.stringify(auditEntryOf(record));
      expect(line).not.toContain(keyHash);
      expect(line).not.toContain(key);
    }
  });
});

describe('fitAuditEntry', () => {
  const bytes = (entry: KeyAuditEntry) => Buffer.byteLength(JSON.stringify(entry), 'utf8');
  const renamedTo = (name: string) => modify(stored(), stored({ name: { S: name }, ...byTool('2030-01-02T03:04:04.000Z') }))!;

  it('leaves an entry that fits in a log event as it is', () => {
    const entry = renamedTo('deploy');
    expect(fitAuditEntry(entry)).toBe(entry);
    expect(fitAuditEntry(entry)).not.toHaveProperty('truncated');
  });

  it('cuts the long texts of an entry too long for a log event, marks it truncated, and keeps who changed which key how', () => {
    const entry = renamedTo('n'.repeat(250_000));
    expect(bytes(entry)).toBeGreaterThan(MAX_AUDIT_ENTRY_BYTES);

    const fitted = fitAuditEntry(entry);

    expect(bytes(fitted)).toBeLessThanOrEqual(MAX_AUDIT_ENTRY_BYTES);
    const cut = `${'n'.repeat(TRUNCATED_TEXT_LENGTH)}${TRUNCATION_MARK}`;
    expect(fitted).toEqual({ ...entry, name: cut, changes: { name: { from: 'ci', to: cut } }, truncated: true });
  });

  it('cuts a text between characters, never within one', () => {
    const fitted = fitAuditEntry(renamedTo('😀'.repeat(100_000)));
    expect(fitted.name).toBe(`${'😀'.repeat(TRUNCATED_TEXT_LENGTH)}${TRUNCATION_MARK}`);
  });

  it('leaves out the changes that do not fit even cut, in order, and counts them', () => {
    const attributes = Object.fromEntries(
      Array.from({ length: 300 }, (_, index) => [`a${String(index).padStart(3, '0')}`, { S: 'v'.repeat(2_000) }]),
    );
    const entry = modify(stored(), stored(attributes))!;

    const fitted = fitAuditEntry(entry);

    expect(bytes(fitted)).toBeLessThanOrEqual(MAX_AUDIT_ENTRY_BYTES);
    const kept = Object.keys(fitted.changes);
    expect(kept.length).toBeGreaterThan(100);
    expect(kept).toEqual(Object.keys(entry.changes).slice(0, kept.length));
    expect(fitted).toMatchObject({ truncated: true, omittedChanges: 300 - kept.length, keyId, action: 'changed', by: 'unknown' });
  });
});

describe('auditLogGroupName', () => {
  it("is the project's key-audit group of that keys table", () => {
    expect(auditLogGroupName('PetStore-prod-ApiKeysTable-1A2B')).toBe('/pet-store/key-audit/PetStore-prod-ApiKeysTable-1A2B');
  });
});
