/**
 * Origins whose answers the contract check (contract-setup.ts) leaves alone: servers broken on
 * purpose, whose answers a test means to be wrong. A server adds its origin while it runs.
 *
 * One set per worker, kept on globalThis: where a worker runs several files in one module graph
 * (the unit project), a file may load this module again, and the fetch wrapper installed by an
 * earlier file must still see the origins the later one adds.
 */
const UNCHECKED = Symbol.for('pet-store.unchecked-origins');
const worker = globalThis as typeof globalThis & { [UNCHECKED]?: Set<string> };

export const uncheckedOrigins: Set<string> = (worker[UNCHECKED] ??= new Set<string>());
