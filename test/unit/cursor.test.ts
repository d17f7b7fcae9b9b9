/** Pagination cursors: a cursor resumes its own listing; anything else is a 400 invalid_cursor. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../shared/cursor';
import { ApiError } from '../../shared/errors';
import { CURSOR_MAX_LENGTH, type PetStatus } from '../../shared/models';

const MAX_SAFE = 2 ** 53 - 1;

const decodeError = (cursor: string, status: PetStatus | undefined): ApiError => {
  try {
    decodeCursor(cursor, status);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error(`expected ${cursor} to be refused`);
};

const expectRefused = (cursor: string, status?: PetStatus) => {
  const error = decodeError(cursor, status);
  expect({ code: error.code, status: error.status }).toEqual({ code: 'invalid_cursor', status: 400 });
  expect(error.message).toMatch(/'cursor'/);
};

/** Swaps one character for another of the base64url alphabet. */
const replaceCharAt = (text: string, index: number): string =>
  text.slice(0, index) + (text[index] === 'A' ? 'B' : 'A') + text.slice(index + 1);

/**
 * A cursor built the way the service builds one, around any payload: this shows what the
 * checksum alone would let through, and that the payload is checked as well.
 */
const forge = (payloadJson: string): string => {
  const payload = Buffer.from(payloadJson).toString('base64url');
  const sum = createHash('sha256').update(`pet-store-cursor:v1:${payload}`).digest('base64url').slice(0, 16);
  return `${payload}.${sum}`;
};

describe('cursor round trip', () => {
  it.each([
    [undefined, 1],
    [undefined, 123_456_789],
    ['available', 42],
    ['pending', MAX_SAFE],
    ['sold', 7],
  ] as const)('decodes what it encoded (status %s, id %d)', (status, id) => {
    expect(decodeCursor(encodeCursor(status, id), status)).toBe(id);
  });

  it('is URL-safe and well under the maximum cursor length', () => {
    const cursor = encodeCursor('available', MAX_SAFE);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(cursor.length).toBeLessThanOrEqual(CURSOR_MAX_LENGTH);
  });

  it('does not show the id in plain text', () => {
    expect(encodeCursor(undefined, 987_654_321)).not.toContain('987654321');
  });
});

describe('refused cursors', () => {
  const cursor = encodeCursor('pending', 123_456_789);
  const [payload = '', sum = ''] = cursor.split('.');

  it('refuses a cursor with one character of the payload changed', () => {
    for (const index of [0, Math.floor(payload.length / 2), payload.length - 1]) {
      expectRefused(`${replaceCharAt(payload, index)}.${sum}`, 'pending');
    }
  });

  it('refuses a cursor with one character of the checksum changed', () => {
    expectRefused(`${payload}.${replaceCharAt(sum, 0)}`, 'pending');
    expectRefused(`${payload}.${replaceCharAt(sum, sum.length - 1)}`, 'pending');
  });

  it('refuses a truncated cursor', () => {
    expectRefused(cursor.slice(0, -1), 'pending');
    expectRefused(cursor.slice(1), 'pending');
    expectRefused(payload, 'pending');
    expectRefused(`${payload}.`, 'pending');
    expectRefused(`.${sum}`, 'pending');
  });

  it('refuses a cursor with an extra part', () => {
    expectRefused(`${cursor}.x`, 'pending');
  });

  it.each(['garbage', 'a.b', '...', '%%%', '🐶.🐱', 'eyJzIjpudWxsLCJrIjoxfQ'])('refuses the garbage %j', (garbage) => {
    expectRefused(garbage);
  });

  it('refuses a cursor of a listing with another status filter, and says so', () => {
    const cases: Array<[PetStatus | undefined, PetStatus | undefined]> = [
      ['pending', undefined],
      [undefined, 'pending'],
      ['pending', 'sold'],
    ];
    for (const [issuedFor, usedWith] of cases) {
      const error = decodeError(encodeCursor(issuedFor, 5), usedWith);
      expect(error.code).toBe('invalid_cursor');
      expect(error.message).toBe("Invalid query parameter 'cursor': it belongs to a listing with another status filter.");
    }
  });
});

describe('a payload with a valid checksum is still checked', () => {
  it('forges exactly what the service issues (so the cases below reach the payload check)', () => {
    expect(forge('{"s":null,"k":5}')).toBe(encodeCursor(undefined, 5));
    expect(decodeCursor(forge('{"s":"sold","k":9}'), 'sold')).toBe(9);
  });

  it.each([
    ['id 0', '{"s":null,"k":0}'],
    ['a negative id', '{"s":null,"k":-3}'],
    ['a fractional id', '{"s":null,"k":1.5}'],
    ['an id above 2^53-1', `{"s":null,"k":${2 ** 53}}`],
    ['an id as a string', '{"s":null,"k":"5"}'],
    ['an unknown status', '{"s":"adopted","k":5}'],
    ['an extra field', '{"s":null,"k":5,"x":1}'],
    ['a missing id', '{"s":null}'],
    ['not JSON', 'not json'],
    ['a JSON array', '[null,5]'],
  ])('refuses a well-checksummed payload with %s', (_, json) => {
    expectRefused(forge(json));
  });
});
