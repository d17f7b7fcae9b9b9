/** Pet ids: safe integers from 1, increasing with creation time, until 2094. */
import { describe, expect, it } from 'vitest';
import { ID_EPOCH_MS, newPetId } from '../../shared/ids';

const RANDOM_RANGE = 4096;
/** When an id was minted, read back from its layout: milliseconds since the epoch, then 12 random bits. */
const mintedAt = (id: number): Date => new Date(Math.floor(id / RANDOM_RANGE) + ID_EPOCH_MS);
/** The last millisecond whose ids all stay at or below 2^53 − 1. */
const LAST_MS = ID_EPOCH_MS + 2 ** 41 - 1;

describe('newPetId', () => {
  it('mints a safe integer of at least 1 now', () => {
    for (let i = 0; i < 200; i += 1) {
      const id = newPetId();
      expect(Number.isSafeInteger(id)).toBe(true);
      expect(id).toBeGreaterThanOrEqual(1);
    }
  });

  it('counts from 2025-01-01', () => {
    expect(ID_EPOCH_MS).toBe(Date.parse('2025-01-01T00:00:00Z'));
    expect(newPetId(ID_EPOCH_MS, 1)).toBe(1);
    expect(newPetId(ID_EPOCH_MS + 1, 0)).toBe(RANDOM_RANGE);
  });

  it('increases with time whatever the random bits', () => {
    const now = Date.parse('2026-06-01T12:00:00Z');
    expect(newPetId(now, RANDOM_RANGE - 1)).toBeLessThan(newPetId(now + 1, 0));
    expect(newPetId()).toBeLessThan(newPetId(Date.now() + 1000));
  });

  it('gives different ids within one millisecond to different random draws', () => {
    const now = Date.parse('2026-06-01T12:00:00Z');
    expect(new Set([0, 1, 2, RANDOM_RANGE - 1].map((random) => newPetId(now, random))).size).toBe(4);
  });

  it('reaches exactly 2^53 − 1 at its last millisecond, in 2094', () => {
    expect(new Date(LAST_MS).getUTCFullYear()).toBe(2094);
    expect(newPetId(LAST_MS, RANDOM_RANGE - 1)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('throws a RangeError one millisecond later rather than mint an unsafe id', () => {
    expect(() => newPetId(LAST_MS + 1, 0)).toThrow(RangeError);
  });

  it('throws before its epoch and at an id of 0', () => {
    expect(() => newPetId(ID_EPOCH_MS - 1, RANDOM_RANGE - 1)).toThrow(RangeError);
    expect(() => newPetId(ID_EPOCH_MS, 0)).toThrow(RangeError);
  });
});

describe('the time in an id', () => {
  it.each(['2025-01-01T00:00:00.001Z', '2026-03-14T15:09:26.535Z', '2094-01-01T00:00:00.000Z'])(
    'gives back the millisecond an id was minted (%s)',
    (iso) => {
      const ms = Date.parse(iso);
      for (const random of [0, 1234, RANDOM_RANGE - 1]) {
        expect(mintedAt(newPetId(ms, random)).toISOString()).toBe(iso);
      }
    },
  );

  it('places a fresh id at the current time', () => {
    const before = Date.now();
    const time = mintedAt(newPetId()).getTime();
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Date.now());
  });
});
