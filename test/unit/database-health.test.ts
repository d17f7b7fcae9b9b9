/** The health route's reuse of its answer: a flood of health requests reads the tables at most once per window, one check at a time. */
import { describe, expect, it } from 'vitest';
import { HEALTH_REUSE_SECONDS, reusedFor, type DatabaseHealth } from '../../shared/database-health';
import { DatabaseUnavailable } from '../../shared/dynamodb';

/** A check that counts its calls and fails while `failing` says so. */
const countingCheck = () => {
  const state = { calls: 0, failing: false };
  const health: DatabaseHealth = {
    check: async () => {
      state.calls += 1;
      if (state.failing) throw new DatabaseUnavailable('pet read: InternalServerError');
    },
  };
  return { state, health };
};

describe('reusedFor', () => {
  it(`reads once for any number of checks within ${HEALTH_REUSE_SECONDS} s, concurrent or not, then again`, async () => {
    const { state, health } = countingCheck();
    let now = 0;
    const reused = reusedFor(health, HEALTH_REUSE_SECONDS, () => now);
    await Promise.all(Array.from({ length: 1_000 }, () => reused.check()));
    now = HEALTH_REUSE_SECONDS * 1_000 - 1;
    await reused.check();
    expect(state.calls).toBe(1);
    now = HEALTH_REUSE_SECONDS * 1_000;
    await reused.check();
    expect(state.calls).toBe(2);
  });

  it('reuses a failure for the window too, then sees the recovery', async () => {
    const { state, health } = countingCheck();
    let now = 0;
    const reused = reusedFor(health, HEALTH_REUSE_SECONDS, () => now);
    state.failing = true;
    await expect(reused.check()).rejects.toBeInstanceOf(DatabaseUnavailable);
    state.failing = false;
    await expect(reused.check()).rejects.toBeInstanceOf(DatabaseUnavailable);
    now += HEALTH_REUSE_SECONDS * 1_000;
    await expect(reused.check()).resolves.toBeUndefined();
    expect(state.calls).toBe(2);
  });

  it('joins a check still running past its window rather than starting another: one at a time', async () => {
    let calls = 0;
    let answer: () => void = () => undefined;
    const hanging: DatabaseHealth = {
      check: () => {
        calls += 1;
        return new Promise<void>((resolve) => (answer = resolve));
      },
    };
    let now = 0;
    const reused = reusedFor(hanging, HEALTH_REUSE_SECONDS, () => now);
    const first = reused.check();
    // The database hangs for ten windows: every check in them waits on the one already sent.
    now = 10 * HEALTH_REUSE_SECONDS * 1_000;
    const joined = reused.check();
    expect(calls).toBe(1);
    answer();
    await expect(Promise.all([first, joined])).resolves.toEqual([undefined, undefined]);
    // Its answer, once known, is reused for the window from then on, then read again.
    await reused.check();
    expect(calls).toBe(1);
    now += HEALTH_REUSE_SECONDS * 1_000;
    const again = reused.check();
    expect(calls).toBe(2);
    answer();
    await again;
  });

  it('with 0 s, reads every time', async () => {
    const { state, health } = countingCheck();
    const reused = reusedFor(health, 0);
    for (let call = 0; call < 3; call += 1) await reused.check();
    expect(state.calls).toBe(3);
  });
});
