/**
 * Which stream records of the keys table drop a key's cached answers at the local gateway: any
 * change of a key's item but its place in the expiry index, and no new item (no answer could have
 * let its key in before).
 */
import type { _Record as StreamRecord } from '@aws-sdk/client-dynamodb-streams';
import { describe, expect, it } from 'vitest';
import { changedKeyHash } from '../../../tools/local-server/key-changes';
import { READ_PETS, WRITE_PETS } from '../../support/vocabulary';

const KEY_HASH = 'a'.repeat(64);
const item = {
  keyHash: { S: KEY_HASH },
  name: { S: 'app' },
  scopes: { SS: [READ_PETS, WRITE_PETS] },
};

const record = (eventName: StreamRecord['eventName'], before?: Record<string, unknown>, after?: Record<string, unknown>): StreamRecord =>
  ({
    eventName,
    dynamodb: { Keys: { keyHash: { S: KEY_HASH } }, ...(before ? { OldImage: before } : {}), ...(after ? { NewImage: after } : {}) },
  }) as StreamRecord;

describe('changedKeyHash', () => {
  it.each([
    ['a revocation', { ...item, revokedAt: { S: '2027-01-01T01:00:00.000Z' } }],
    ['scopes narrowed', { ...item, scopes: { SS: [READ_PETS] } }],
    ['another plan', { ...item, plan: { S: 'partner' } }],
    ['an expiry set', { ...item, expiresAt: { S: '2027-01-01T00:00:00.000Z' } }],
    ['an expiry marked by the sweep', { ...item, expiredAt: { S: '2027-01-01T00:00:00.000Z' } }],
    ['a lastUsedAt put on the item in the console', { ...item, lastUsedAt: { S: '2027-01-01T02:00:00.000Z' } }],
  ])('names the key for %s', (_, after) => {
    expect(changedKeyHash(record('MODIFY', item, after))).toBe(KEY_HASH);
  });

  it('names the key for a deleted item', () => {
    expect(changedKeyHash(record('REMOVE', item))).toBe(KEY_HASH);
  });

  it('passes over a move in the expiry index, and a new item', () => {
    const queued = { ...item, expiryQueue: { S: 'pending' }, expiryDueAt: { S: '2027-01-01T00:00:00.000Z' } };
    expect(changedKeyHash(record('MODIFY', queued, { ...queued, expiryDueAt: { S: '2027-01-02T00:00:00.000Z' } }))).toBeUndefined();
    expect(changedKeyHash(record('INSERT', undefined, item))).toBeUndefined();
  });
});
