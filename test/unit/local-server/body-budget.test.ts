/**
 * The local server's body budget (tools/local-server/body-budget.ts): the server holds at most its
 * budget of request bodies at once, and a key at most a quarter of it besides its largest body.
 */
import { describe, expect, it } from 'vitest';
import { BODIES_IN_FLIGHT_MAX_BYTES, createBodyBudget, KEY_SHARE_OF_BODIES_IN_FLIGHT } from '../../../tools/local-server/body-budget';
import { GATEWAY_MAX_BODY_BYTES } from '../../../tools/local-server/gateway';

const SHARE = BODIES_IN_FLIGHT_MAX_BYTES * KEY_SHARE_OF_BODIES_IN_FLIGHT;
const defaultBudget = () => createBodyBudget(BODIES_IN_FLIGHT_MAX_BYTES, SHARE);

describe('the body budget', () => {
  it('lets a key hold one body at API Gateway’s limit and a quarter of the budget besides it; a byte more is its own refusal', () => {
    const budget = defaultBudget();
    expect(budget.take('key-a', {}, GATEWAY_MAX_BODY_BYTES)).toBeUndefined();
    // Its quarter, in bodies no larger than the first.
    let besides = 0;
    while (besides < SHARE) {
      const bytes = Math.min(GATEWAY_MAX_BODY_BYTES, SHARE - besides);
      expect(budget.take('key-a', {}, bytes)).toBeUndefined();
      besides += bytes;
    }
    expect(budget.take('key-a', {}, 1)).toBe('KEY_BODIES_IN_FLIGHT');
    // Another key is not held to the first's share.
    expect(budget.take('key-b', {}, GATEWAY_MAX_BODY_BYTES)).toBeUndefined();
  });

  it('counts a body of unknown length as it arrives, its largest body exempt whichever it is', () => {
    const budget = defaultBudget();
    const [first, growing] = [{}, {}];
    expect(budget.take('key-a', first, SHARE)).toBeUndefined();
    // The second grows past the first: the first is then what counts against the share.
    for (let held = 0; held < SHARE; held += 1024 * 1024) expect(budget.take('key-a', growing, 1024 * 1024)).toBeUndefined();
    expect(budget.take('key-a', growing, 1024 * 1024)).toBeUndefined();
    expect(budget.take('key-a', {}, 1)).toBe('KEY_BODIES_IN_FLIGHT');
  });

  it('gives back what a body holds once it is answered, for the key’s next body', () => {
    const budget = defaultBudget();
    // One body, and one more within the quarter besides it.
    const bodies = [{}, {}];
    expect(GATEWAY_MAX_BODY_BYTES).toBeLessThanOrEqual(SHARE);
    expect(2 * GATEWAY_MAX_BODY_BYTES).toBeGreaterThan(SHARE);
    for (const body of bodies) expect(budget.take('key-a', body, GATEWAY_MAX_BODY_BYTES)).toBeUndefined();
    expect(budget.take('key-a', {}, GATEWAY_MAX_BODY_BYTES)).toBe('KEY_BODIES_IN_FLIGHT');
    budget.give('key-a', bodies[0]!);
    // Given twice (the answer sent, then the connection closed): once.
    budget.give('key-a', bodies[0]!);
    expect(budget.take('key-a', {}, GATEWAY_MAX_BODY_BYTES)).toBeUndefined();
  });

  it("four keys, each holding one body and part of its quarter, fill the budget: the next body of any key, theirs too, is the server's refusal", () => {
    const budget = defaultBudget();
    const keys = ['key-a', 'key-b', 'key-c', 'key-d'];
    const perKey = BODIES_IN_FLIGHT_MAX_BYTES / keys.length;
    expect(perKey - GATEWAY_MAX_BODY_BYTES).toBeLessThan(SHARE);
    for (const key of keys) {
      expect(budget.take(key, {}, GATEWAY_MAX_BODY_BYTES)).toBeUndefined();
      expect(budget.take(key, {}, perKey - GATEWAY_MAX_BODY_BYTES)).toBeUndefined();
    }
    // Each of the four is within its own share: what refuses it is the budget, not its share (a 503, not its 429).
    for (const key of keys) expect(budget.take(key, {}, 1)).toBe('BODIES_IN_FLIGHT');
    expect(budget.take('key-e', {}, 1)).toBe('BODIES_IN_FLIGHT');
  });
});
