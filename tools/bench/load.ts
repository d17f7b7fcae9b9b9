/**
 * Through the local server (the real handlers behind the gateway stand-in, with its authorizer
 * cache) against a raw node:http baseline, both on the same DynamoDB Local, under autocannon at
 * a fixed concurrency. Runs alternate between the two servers; each figure is a median of rounds.
 * The keys-table reads are counted during the same load; then several keys under a short
 * authorizer cache TTL show how often the authorizer writes a key's lastUsedAt.
 */
import { tableNamesOf } from '../../shared/tables';
import autocannon from 'autocannon';
import { createDocumentClient } from '../../shared/dynamodb';
import { startLocalStack } from '../local-server/local-stack';
import { ROOMY_PLANS } from '../local-server/usage-plans';
import { countGets } from './capacity';
import { LAST_USE_CACHE_TTL_SECONDS, measureLastUse, type LastUseResult } from './last-use';
import { startRawServer } from './raw-server';
import { seededTable } from './reads';
import { atLeast, atMost, type Check, type PartResult } from './results';
import { withStdoutSink } from './sink';
import { median, round, shuffled } from '../stats';

export interface LoadOptions {
  readonly endpoint: string;
  readonly connections: number;
  readonly seconds: number;
  readonly rounds: number;
}

/** The authorizer cache TTL of the local server during the load: the prod stage's, far above a run. */
const AUTH_CACHE_TTL_SECONDS = 300;

export const runLoad = async ({ endpoint, connections, seconds, rounds }: LoadOptions): Promise<PartResult> => {
  const started = Date.now();
  const { tableName: petsTableName, client: seedClient } = await seededTable(endpoint, 1_000);
  seedClient.destroy();
  const serverClient = createDocumentClient({ endpoint });
  const suffix = Date.now();
  // The seeded pets, and a fresh table of every other kind.
  const tables = tableNamesOf(({ defaultName }, table) => (table === 'pets' ? petsTableName : `bench-${defaultName}-${suffix}`));
  const keyReads = countGets(serverClient, tables.apiKeys);
  const api = await startLocalStack({
    dynamodbEndpoint: endpoint,
    tables,
    keyName: 'bench',
    serverClient,
    // Roomy plans: the budgets measure the service, not a plan's throttle.
    server: { port: 0, authCacheTtlSeconds: AUTH_CACHE_TTL_SECONDS, plans: ROOMY_PLANS },
  });
  const { key } = api;
  const raw = await startRawServer(endpoint, petsTableName);
  // The same counting middleware on the baseline's client: instrumentation costs both sides alike.
  countGets(raw.client, tables.apiKeys);
  const servers = { api: api.url, raw: raw.url };
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const scenarios = [
    { name: 'GET /v1/pets?status=available&limit=20', path: '/pets?status=available&limit=20', method: 'GET' },
    { name: 'POST /v1/pets', path: '/pets', method: 'POST', body: JSON.stringify({ name: 'Rex', categoryId: 1 }) },
    { name: 'GET /v1/pets/{id}', path: '/pets/1000000', method: 'GET' },
  ];
  type Run = { rps: number; p50: number; p99: number; total: number; bad: number };
  const runs = new Map<string, Run[]>();
  let apiRequests = 0;
  let readsInWarmUp = 0;
  let requestsInWarmUp = 0;
  let lastUse: LastUseResult | undefined;

  const { lines } = await withStdoutSink(async () => {
    const fire = async (server: keyof typeof servers, scenario: (typeof scenarios)[number], duration: number) => {
      const result = await autocannon({
        url: `${servers[server]}${scenario.path}`,
        connections,
        duration,
        method: scenario.method,
        headers,
        ...(scenario.body ? { body: scenario.body } : {}),
      });
      if (server === 'api') apiRequests += result.requests.total;
      return {
        rps: result.requests.total / result.duration,
        p50: result.latency.p50,
        p99: result.latency.p99,
        total: result.requests.total,
        bad: result.non2xx + result.errors + result.timeouts,
      };
    };
    // Warm-up: JIT, connection pools, the authorizer cache (one keys read expected here).
    for (const scenario of scenarios) for (const server of ['api', 'raw'] as const) await fire(server, scenario, 1);
    readsInWarmUp = keyReads.gets;
    requestsInWarmUp = apiRequests;
    for (let round = 0; round < rounds; round += 1) {
      for (const scenario of shuffled(scenarios)) {
        const order = round % 2 === 0 ? (['api', 'raw'] as const) : (['raw', 'api'] as const);
        for (const server of order) {
          const runKey = `${server}:${scenario.name}`;
          runs.set(runKey, [...(runs.get(runKey) ?? []), await fire(server, scenario, seconds)]);
        }
      }
    }
    // A few cache TTLs at least, so that every key misses the cache again and again.
    const lastUseSeconds = Math.max(seconds, 5 * LAST_USE_CACHE_TTL_SECONDS);
    lastUse = await measureLastUse({ endpoint, tables, keys: api.keys, connections, seconds: lastUseSeconds });
  });
  await api.stop();
  await raw.close();
  serverClient.destroy();

  const checks: Check[] = [];
  const rows: Array<Array<string | number>> = [];
  let bad = 0;
  for (const scenario of scenarios) {
    const of = (server: string, pick: (run: Run) => number) => median((runs.get(`${server}:${scenario.name}`) ?? []).map(pick));
    const apiRps = of('api', (r) => r.rps);
    const rawRps = of('raw', (r) => r.rps);
    bad += [...(runs.get(`api:${scenario.name}`) ?? []), ...(runs.get(`raw:${scenario.name}`) ?? [])].reduce((sum, r) => sum + r.bad, 0);
    rows.push([
      scenario.name,
      round(apiRps, 0),
      of('api', (r) => r.p50),
      of('api', (r) => r.p99),
      round(rawRps, 0),
      of('raw', (r) => r.p50),
      of('raw', (r) => r.p99),
      round(apiRps / rawRps),
    ]);
    checks.push(
      atLeast(
        {
          id: `load.${scenario.method}.${scenario.path.split('?')[0]}`,
          label: `${scenario.name} throughput`,
          value: round(apiRps, 0),
          unit: 'req/s',
          reference: { label: 'raw node:http baseline', value: round(rawRps, 0) },
          ratio: round(apiRps / rawRps),
        },
        '>= 0.8x baseline',
        0.8,
      ),
    );
  }
  // The budget is about a key inside its TTL: the measured rounds, after the warm-up filled the cache.
  const measuredRequests = apiRequests - requestsInWarmUp;
  const measuredReads = keyReads.gets - readsInWarmUp;
  const readsPerThousand = (measuredReads / measuredRequests) * 1_000;
  checks.push(
    atMost(
      {
        id: 'load.authorizer.keyReads',
        label: 'keys-table reads per 1,000 requests (one key, inside the TTL)',
        value: round(readsPerThousand, 3),
        unit: 'reads/1k req',
        ratio: round(readsPerThousand / 1, 3),
      },
      '<= 1 per 1,000 requests',
      1,
    ),
  );
  if (!lastUse) throw new Error('the last-use run did not run');
  const { maxWritesPerKey } = lastUse;
  bad += lastUse.bad;
  checks.push(
    atMost(
      {
        id: 'load.authorizer.lastUsedAtWrites',
        label: `lastUsedAt writes per key per hour under load (${lastUse.keys} keys, cache TTL ${LAST_USE_CACHE_TTL_SECONDS} s)`,
        value: maxWritesPerKey,
        unit: 'writes/key/h',
        ratio: maxWritesPerKey / 1,
      },
      '<= 1 per key per hour',
      1,
    ),
  );
  const totalWrites = lastUse.rows.reduce((sum, row) => sum + row.writes, 0);
  return {
    part: 'load',
    measuredAt: new Date().toISOString(),
    seconds: round((Date.now() - started) / 1000, 0),
    checks,
    tables: [
      {
        title:
          `Through the local server vs a raw node:http baseline (autocannon, ${connections} connections, ` +
          `${seconds} s a run, median of ${rounds} rounds)`,
        columns: ['request', 'API req/s', 'API p50 ms', 'API p99 ms', 'raw req/s', 'raw p50 ms', 'raw p99 ms', 'API / raw'],
        rows,
      },
      {
        title: 'Authorizer cache under that load',
        columns: ['phase', 'requests through the API', 'keys-table GetItem calls', 'per 1,000 requests', 'cache TTL s'],
        rows: [
          [
            'warm-up (cache empty at first)',
            requestsInWarmUp,
            readsInWarmUp,
            round((readsInWarmUp / requestsInWarmUp) * 1_000, 3),
            AUTH_CACHE_TTL_SECONDS,
          ],
          ['measured rounds (key inside the TTL)', measuredRequests, measuredReads, round(readsPerThousand, 3), AUTH_CACHE_TTL_SECONDS],
        ],
      },
      {
        title:
          `lastUsedAt writes under load (${lastUse.keys} keys in turn on each of ${connections} connections, ` +
          `authorizer cache TTL ${LAST_USE_CACHE_TTL_SECONDS} s)`,
        columns: ['key history', 'keys', 'writes due per key', 'writes', 'most writes for one key'],
        rows: [
          ...lastUse.rows.map((row) => [row.history, row.keys, row.due, row.writes, row.maxWrites]),
          ['all', lastUse.keys, '-', totalWrites, maxWritesPerKey],
        ],
      },
      {
        title: 'The authorizer under that load',
        columns: ['requests', 'authorizer runs (keys-table GetItem)', 'UpdateItem sent', 'UpdateItem that wrote', 'non-2xx or failed'],
        rows: [[lastUse.requests, lastUse.authorizerRuns, lastUse.updatesSent, totalWrites, lastUse.bad]],
      },
    ],
    notes: [
      `Both servers run in the benchmark's process, beside autocannon, on the same DynamoDB Local (Java); ` +
        `the machine's cores are shared with other work, so only the ratio means anything. ` +
        `Runs alternate API/raw (order flipped each round, scenarios shuffled).`,
      `The local server logs as deployed (Powertools, INFO) into a sink: ${lines} log lines. ` +
        `Non-2xx answers, errors or timeouts in all runs: ${bad}.`,
      'The raw baseline sends the same DynamoDB commands with the same client settings (createDocumentClient) ' +
        'and the same keys-read counter on its client, without auth, validation, middleware or logs.',
      `Keys-table reads are GetItem calls on the keys table counted by a client middleware. ` +
        `The budget counts the measured rounds, when the key is inside the TTL; the warm-up starts on an empty cache, ` +
        `where the first requests of ${connections} connections miss together before the first answer is cached ` +
        `(API Gateway's cache starts the same way), so it reads more than once.`,
      `lastUsedAt: a second local server on the same tables with a ${LAST_USE_CACHE_TTL_SECONDS} s authorizer cache TTL, ` +
        `GET /v1/pets/{id} with ${lastUse.keys} keys in turn, each of ${connections} connections awaiting its answer before ` +
        'the next request. A key is due one write when its lastUsedAt is an hour old or absent; ' +
        'the run lasts seconds, so each key may be written once at most. An UpdateItem its condition refuses ' +
        '(concurrent cache misses of one key, where another run wrote first) writes nothing but costs a write unit.',
    ],
  };
};
