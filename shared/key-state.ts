/**
 * What a key is at a moment, from its item's `revokedAt` and `expiresAt`: the one rule the
 * authorizer, the key tool and the audit trail all apply. A module of its own, with no DynamoDB
 * client in it, so that the audit function's bundle stays small.
 */
import { parseInstant } from './instants';

/** `lastUsedAt` is written at most once per key per this many milliseconds (by the authorizer, through the repository's recordUse). */
export const LAST_USE_RESOLUTION_MS = 60 * 60 * 1000;

/** What a key is at a moment: usable, past its expiry, or revoked. */
export type KeyState = 'active' | 'expired' | 'revoked';

/**
 * A key's state at `now`. Any `revokedAt`, whatever its type, revokes; an `expiresAt` that is not
 * an ISO 8601 instant with its zone (a slip in the console) counts as expired: a key fails closed.
 */
export const keyState = (record: { readonly revokedAt?: unknown; readonly expiresAt?: unknown }, now: Date): KeyState => {
  if (record.revokedAt !== undefined) return 'revoked';
  if (record.expiresAt === undefined) return 'active';
  const expiresAt = parseInstant(record.expiresAt);
  return expiresAt === undefined || expiresAt.getTime() <= now.getTime() ? 'expired' : 'active';
};
