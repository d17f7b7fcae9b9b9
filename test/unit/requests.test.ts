/** How a client of the API reads Retry-After: seconds or an HTTP date, and nothing else. */
import { describe, expect, it } from 'vitest';
import { retryAfterMs } from '../../tools/requests';

describe('retryAfterMs', () => {
  const now = Date.parse('2026-11-25T10:00:00.000Z');

  it('reads a number of seconds', () => {
    expect(retryAfterMs('1', now)).toBe(1_000);
    expect(retryAfterMs(' 3600 ', now)).toBe(3_600_000);
    expect(retryAfterMs('0', now)).toBe(0);
  });

  it('reads an HTTP date as the time until it, never less than 0', () => {
    expect(retryAfterMs('Wed, 25 Nov 2026 10:00:05 GMT', now)).toBe(5_000);
    expect(retryAfterMs('Wed, 25 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });

  it('reads nothing else', () => {
    for (const value of [null, '', '-1', '1.5', 'soon', '2026-11-25'])
      expect({ value, ms: retryAfterMs(value, now) }).toEqual({ value, ms: undefined });
  });
});
