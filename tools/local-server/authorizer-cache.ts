/**
 * The local gateway's authorizer cache: the policy the authorizer returned, per token, for the
 * TTL, as API Gateway caches it. API Gateway keys the cache by the header value as sent, so every
 * variant of a header (`BEARER`, extra spaces) is an entry of its own; a client can make as many
 * as it likes. The cache therefore holds at most `maxEntries`, drops expired entries as it goes,
 * and when full forgets the oldest entry (the next request with that token runs the authorizer
 * again, which is all a cache miss costs).
 *
 * A key whose item changes loses its entries at once (`forgetKey`, by the key's hash, which the
 * authorizer's context carries), as the key tool's flush empties API Gateway's cache deployed; and
 * while the changes cannot be followed (`following(false)`), nothing is cached at all. `flush`
 * empties it whole, as FlushStageAuthorizersCache empties a stage's.
 */
import type { APIGatewayAuthorizerResult } from 'aws-lambda';

/** How many tokens the cache holds at most: far more than the keys a developer uses locally. */
export const AUTH_CACHE_MAX_ENTRIES = 1_000;

interface CachedPolicy {
  readonly result: APIGatewayAuthorizerResult;
  readonly expiresAt: number;
  /** The key's hash, from the authorizer's context: what a change to its item names. */
  readonly keyHash: unknown;
}

export interface AuthorizerCache {
  /** The cached policy for a token, unless it has expired. */
  get(token: string, at: number): APIGatewayAuthorizerResult | undefined;
  /**
   * Caches the policy the authorizer gave for a token. `since` is the `changes` count read before
   * the authorizer was asked: if a key changed meanwhile, the answer may be from before the
   * change, and is not kept.
   */
  set(token: string, result: APIGatewayAuthorizerResult, at: number, since?: number): void;
  /** Drops every answer cached for the key with this hash: its item changed. */
  forgetKey(keyHash: string): void;
  /** Drops every answer cached, of every key. */
  flush(): void;
  /** Whether changes to keys reach `forgetKey`; while they do not, the cache holds nothing. */
  following(following: boolean): void;
  /** How many times keys have changed (or following stopped): read before asking the authorizer. */
  readonly changes: number;
  /** How many tokens are held (for tests and diagnostics). */
  readonly size: number;
}

export const createAuthorizerCache = (ttlSeconds: number, maxEntries = AUTH_CACHE_MAX_ENTRIES): AuthorizerCache => {
  // A Map iterates in insertion order, and every entry lives for the same TTL: the first entries
  // are the oldest and expire first, so sweeping and evicting both work from the front.
  const entries = new Map<string, CachedPolicy>();
  let changes = 0;
  let followed = true;

  const sweepExpired = (at: number) => {
    for (const [token, entry] of entries) {
      if (entry.expiresAt > at) break;
      entries.delete(token);
    }
  };

  return {
    get(token, at) {
      const entry = entries.get(token);
      if (entry === undefined) return undefined;
      if (entry.expiresAt > at) return entry.result;
      entries.delete(token);
      return undefined;
    },
    set(token, result, at, since = changes) {
      if (ttlSeconds <= 0 || maxEntries <= 0 || !followed || since !== changes) return;
      entries.delete(token); // a refreshed entry moves to the back
      sweepExpired(at);
      while (entries.size >= maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done === true) break;
        entries.delete(oldest.value);
      }
      entries.set(token, { result, expiresAt: at + ttlSeconds * 1000, keyHash: result.context?.keyHash });
    },
    forgetKey(keyHash) {
      changes += 1;
      for (const [token, entry] of entries) if (entry.keyHash === keyHash) entries.delete(token);
    },
    flush() {
      changes += 1;
      entries.clear();
    },
    following(following) {
      if (!following) {
        changes += 1;
        entries.clear();
      }
      followed = following;
    },
    get changes() {
      return changes;
    },
    get size() {
      return entries.size;
    },
  };
};
