/**
 * lastUsedAt writes under load: several keys, each with a history of its own, sent in turn by
 * every connection to a local server whose authorizer cache TTL is short, so that the authorizer
 * runs again and again for each key. Every UpdateItem on the last-use table is counted, and every one
 * that wrote, per key: a key is written at most once an hour, and the run lasts seconds.
 * Each connection awaits its answer before the next request (not autocannon, which stops with
 * requests in flight), so that nothing is still running, and logging, once the run is over.
 */
import { generateApiKey } from '../../shared/api-keys';
import type { ApiKeysRepository } from '../../shared/api-keys-repository';
import { createDocumentClient } from '../../shared/dynamodb';
import type { TableNames } from '../../shared/tables';
import { startLocalServer } from '../local-server/server';
import { localUsageKey, ROOMY_PLANS } from '../local-server/usage-plans';
import { countGets, countUpdates } from './capacity';
import { localActor } from '../keys/caller';

/** The authorizer cache TTL while last use is measured: a second, so each key misses the cache every second. */
export const LAST_USE_CACHE_TTL_SECONDS = 1;

/** The keys' histories: how long ago each was last used, and how many writes a run is due for it. */
const HISTORIES = [
  { history: 'never used', minutesAgo: undefined, due: 1, count: 3 },
  { history: 'last used 2 h before', minutesAgo: 120, due: 1, count: 3 },
  { history: 'last used 10 min before', minutesAgo: 10, due: 0, count: 2 },
] as const;

export interface LastUseOptions {
  readonly endpoint: string;
  /** The tables of the load's stack: the keys are registered in its keys table. */
  readonly tables: TableNames;
  readonly keys: ApiKeysRepository;
  readonly connections: number;
  readonly seconds: number;
  /** Requests each key is sent at least, however long that takes (default 0: the run lasts `seconds` only). */
  readonly minRequestsPerKey?: number;
}

export interface LastUseRow {
  readonly history: string;
  readonly keys: number;
  readonly due: number;
  /** Writes of the key of this history written most. */
  readonly maxWrites: number;
  readonly writes: number;
}

export interface LastUseResult {
  readonly keys: number;
  readonly requests: number;
  readonly bad: number;
  /** GetItem calls on the keys table: how many times the authorizer ran. */
  readonly authorizerRuns: number;
  readonly updatesSent: number;
  readonly maxWritesPerKey: number;
  readonly rows: LastUseRow[];
}

export const measureLastUse = async ({
  endpoint,
  tables,
  keys,
  connections,
  seconds,
  minRequestsPerKey = 0,
}: LastUseOptions): Promise<LastUseResult> => {
  const now = Date.now();
  const seeded: Array<{ key: string; keyHash: string; history: (typeof HISTORIES)[number] }> = [];
  for (const history of HISTORIES) {
    for (let index = 0; index < history.count; index += 1) {
      const key = generateApiKey();
      const record = await keys.register(key, 'bench last use', { usage: localUsageKey(), changedBy: localActor() });
      if (history.minutesAgo !== undefined) await keys.recordUse(record, new Date(now - history.minutesAgo * 60_000));
      seeded.push({ key, keyHash: record.keyHash, history });
    }
  }

  const client = createDocumentClient({ endpoint });
  const reads = countGets(client, tables.apiKeys);
  const updates = countUpdates(client, tables.apiKeyLastUse, 'keyHash');
  // Roomy plans: the keys are sent as fast as the server answers, and no plan refuses one.
  const server = await startLocalServer({ client, port: 0, tables, authCacheTtlSeconds: LAST_USE_CACHE_TTL_SECONDS, plans: ROOMY_PLANS });
  try {
    const load = { requests: 0, bad: 0 };
    const deadline = Date.now() + seconds * 1000;
    const authorizations = seeded.map(({ key }) => `Bearer ${key}`);
    const minRequests = minRequestsPerKey * authorizations.length;
    let sent = 0;
    // The keys take turns across all the connections, so that each is sent as often as the others.
    const connection = async () => {
      while (Date.now() < deadline || sent < minRequests) {
        const index = sent++;
        const headers = { Authorization: authorizations[index % authorizations.length] ?? '' };
        const response = await fetch(`${server.url}/pets/1000000`, { headers }).catch(() => undefined);
        await response?.arrayBuffer();
        load.requests += 1;
        if (!response?.ok) load.bad += 1;
      }
    };
    await Promise.all(Array.from({ length: connections }, () => connection()));
    const writesOf = (keyHash: string) => updates.writesByKey.get(keyHash) ?? 0;
    const rows = HISTORIES.map((history) => {
      const writes = seeded.filter((key) => key.history === history).map((key) => writesOf(key.keyHash));
      return {
        history: history.history,
        keys: writes.length,
        due: history.due,
        maxWrites: Math.max(...writes),
        writes: writes.reduce((sum, count) => sum + count, 0),
      };
    });
    return {
      keys: seeded.length,
      requests: load.requests,
      bad: load.bad,
      authorizerRuns: reads.gets,
      updatesSent: updates.sent,
      maxWritesPerKey: Math.max(...seeded.map((key) => writesOf(key.keyHash))),
      rows,
    };
  } finally {
    await server.close();
    client.destroy();
  }
};
