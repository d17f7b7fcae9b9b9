/**
 * The bytes of request bodies the local server holds at once (server.ts), and each key's part of
 * them: taken as a body is read (a declared length whole, before a byte of it), given back once
 * its request is answered. The rule: the server holds at most its budget; besides its largest body
 * in flight (which API Gateway's limit bounds), a key holds at most a share of the budget. Past
 * the budget, the server's own refusal (503); past the key's share, the key's own (429).
 */

/**
 * The bytes of request bodies held at once, across requests, by default: six bodies at API
 * Gateway's limit. A body that would pass it is not read, and its request is answered 503.
 */
export const BODIES_IN_FLIGHT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The share of the budget one key may hold besides its largest body (one body is always allowed,
 * up to API Gateway's limit): past it, its next body is its own 429. So that no one key holds the
 * budget from others.
 */
export const KEY_SHARE_OF_BODIES_IN_FLIGHT = 1 / 4;

/** Why a body's bytes were not taken: they would pass the server's budget, or the key's share of it. */
export type BudgetRefusal = 'BODIES_IN_FLIGHT' | 'KEY_BODIES_IN_FLIGHT';

/** The bytes of bodies held at once, and by each key. A body is any object standing for one request's body. */
export interface BodyBudget {
  /**
   * Takes `bytes` more for `body`, a body of `holder` (a key's id); or says whose limit they would
   * pass: the key's share (its bytes besides its largest body), then the server's.
   */
  take(holder: string, body: object, bytes: number): BudgetRefusal | undefined;
  /** Gives back every byte `body` holds. */
  give(holder: string, body: object): void;
}

export const createBodyBudget = (limit: number, keyShare: number): BodyBudget => {
  let held = 0;
  /** Each key's bodies in flight, and the bytes each holds. */
  const bodiesOf = new Map<string, Map<object, number>>();
  return {
    take: (holder, body, bytes) => {
      const bodies = bodiesOf.get(holder) ?? new Map<object, number>();
      const sizes = [...bodies].map(([each, size]) => (each === body ? size + bytes : size));
      if (!bodies.has(body)) sizes.push(bytes);
      const besidesLargest = sizes.reduce((sum, size) => sum + size, 0) - Math.max(...sizes);
      if (besidesLargest > keyShare) return 'KEY_BODIES_IN_FLIGHT';
      if (held + bytes > limit) return 'BODIES_IN_FLIGHT';
      held += bytes;
      bodies.set(body, (bodies.get(body) ?? 0) + bytes);
      bodiesOf.set(holder, bodies);
      return undefined;
    },
    give: (holder, body) => {
      const bodies = bodiesOf.get(holder);
      held -= bodies?.get(body) ?? 0;
      bodies?.delete(body);
      if (bodies?.size === 0) bodiesOf.delete(holder);
    },
  };
};
