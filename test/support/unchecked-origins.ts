/**
 * Origins whose answers the contract check (contract-setup.ts) leaves alone: servers broken on
 * purpose, whose answers a test means to be wrong. A server adds its origin while it runs.
 */
export const uncheckedOrigins = new Set<string>();
