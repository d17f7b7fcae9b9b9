/**
 * The small version of `npm run load`: the same module, 200 creates against this file's local
 * server, then every page walked unfiltered and per status. Nothing lost, duplicated or refused.
 * Then runs over several keys on plans: a small plan's 429s are counted per key and sent again
 * until they succeed, a quota's are counted and not sent again.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import type { Plans } from '../../shared/plans';
import { failures, formatReport, judgeWalk, runLoad, WALK_FILTERS, type LoadReport } from '../../tools/load/load';
import { registerLoadKeys } from '../../tools/load/local-target';
import { freePort } from '../../tools/dynamodb-local';
import { expectOneLineFailure, npmRun } from '../support/command';
import { ROOMY_PLANS, startLocalApi, type LocalApi } from '../support/local-api';

/** A load run's creates and walks take seconds; on two cores shared with busy processes, minutes. */
const LOAD_RUN_TIMEOUT_MS = 600_000;

describe('a load run of 200 creates', () => {
  let api: LocalApi;
  let report: LoadReport;
  beforeAll(async () => {
    api = await startLocalApi();
    report = await runLoad({ url: api.url, keys: [api.key], count: 200, concurrency: 16 });
  }, LOAD_RUN_TIMEOUT_MS);
  afterAll(() => api.close());

  it('loses nothing, duplicates nothing, and every answer is 2xx', () => {
    expect({ lost: report.lost, duplicated: report.duplicated, non2xx: report.non2xx }).toEqual({ lost: 0, duplicated: 0, non2xx: 0 });
    expect(report.acknowledged).toBe(200);
    expect(failures(report)).toEqual([]);
  });

  it('reports its one key by id: every create and page, and no 429 on roomy plans', () => {
    const pages = report.walks.reduce((sum, walk) => sum + walk.pages, 0);
    // At least each create and page once; a retry (of a 503 or of no answer, on a busy machine) is a request too.
    expect(report.keys).toEqual([
      { keyId: keyIdOf(hashApiKey(api.key)), requests: expect.any(Number), tooManyRequests: 0, quotaExceeded: 0 },
    ]);
    expect(report.keys[0]?.requests).toBeGreaterThanOrEqual(200 + pages);
  });

  it('finds every acknowledged pet in each walk, exactly once', () => {
    expect(report.walks.map((walk) => walk.filter)).toEqual(WALK_FILTERS);
    for (const walk of report.walks)
      expect({ filter: walk.filter, missing: walk.missing, listedTwice: walk.listedTwice }).toEqual({
        filter: walk.filter,
        missing: [],
        listedTwice: [],
      });
    const [all, ...byStatus] = report.walks;
    expect(all?.listed).toBe(200);
    expect(all?.pages).toBe(2); // 100 per page; no next link after the last
    expect(byStatus.reduce((sum, walk) => sum + walk.listed, 0)).toBe(200);
  });
});

describe('load runs over several keys on plans', () => {
  /** The requests a day of the capped plan: fewer than its run's. */
  const CAPPED_QUOTA = 5;
  /** A plan far below the run's rate, and one whose quota is smaller than the run. */
  const testPlans: Plans = {
    ...ROOMY_PLANS,
    small: { rateLimit: 2, burstLimit: 1 },
    capped: { rateLimit: 1_000, burstLimit: 1_000, quota: { limit: CAPPED_QUOTA, period: 'DAY' } },
  };
  let api: LocalApi;
  beforeAll(async () => {
    api = await startLocalApi({ plans: testPlans });
  });
  afterAll(() => api.close());

  const pagesOf = (report: LoadReport) => report.walks.reduce((sum, walk) => sum + walk.pages, 0);

  it('on a small plan: 429s per key, each sent again after Retry-After until it succeeds, and nothing lost', async () => {
    const keys = await registerLoadKeys(api.keys, 3, 'small');
    const report = await runLoad({ url: api.url, keys, count: 18, concurrency: 12 });

    expect({ lost: report.lost, duplicated: report.duplicated, non2xx: report.non2xx }).toEqual({ lost: 0, duplicated: 0, non2xx: 0 });
    expect(report.acknowledged).toBe(18);
    expect(failures(report)).toEqual([]);
    expect(report.walks.every((walk) => walk.complete && walk.missing.length === 0)).toBe(true);

    // Each key by its id, in order, each over its own plan's rate.
    expect(report.keys.map((key) => key.keyId)).toEqual(keys.map((key) => keyIdOf(hashApiKey(key))));
    for (const key of report.keys)
      expect({ key: key.keyId, throttled: key.tooManyRequests > 0, quota: key.quotaExceeded }).toEqual({
        key: key.keyId,
        throttled: true,
        quota: 0,
      });
    // Every request counted: the creates, each 429 sent again, and the walks' pages (and any other
    // retry, of a 503 or of no answer, which a busy machine may cause).
    const sum = (pick: (key: LoadReport['keys'][number]) => number) => report.keys.reduce((total, key) => total + pick(key), 0);
    expect(sum((key) => key.requests)).toBeGreaterThanOrEqual(18 + sum((key) => key.tooManyRequests) + pagesOf(report));

    const text = formatReport(report);
    for (const key of report.keys)
      expect(text).toMatch(new RegExp(`key ${key.keyId} +${key.requests} requests, 429 too_many_requests ${key.tooManyRequests},`));
    for (const key of keys) expect(text).not.toContain(key);
  });

  it('over a quota: each 429 quota_exceeded counted and never sent again; the walks cut short lose nothing', async () => {
    const [key = ''] = await registerLoadKeys(api.keys, 1, 'capped');
    const report = await runLoad({ url: api.url, keys: [key], count: 8, concurrency: 1 });

    // The quota lets CAPPED_QUOTA requests through, whatever their answers (a 503 sent again, on a
    // busy machine, is one of them): the creates it let through are acknowledged, each later create
    // and each walk is refused at its first request, and a refusal is never sent again.
    expect(report.acknowledged).toBeGreaterThan(0);
    expect(report.acknowledged).toBeLessThanOrEqual(CAPPED_QUOTA);
    const overQuota = 8 - report.acknowledged + WALK_FILTERS.length;
    expect(report.keys).toEqual([
      { keyId: keyIdOf(hashApiKey(key)), requests: CAPPED_QUOTA + overQuota, tooManyRequests: 0, quotaExceeded: overQuota },
    ]);
    expect(report.walks.map((walk) => ({ complete: walk.complete, pages: walk.pages }))).toEqual(
      WALK_FILTERS.map(() => ({ complete: false, pages: 1 })),
    );
    expect({ lost: report.lost, duplicated: report.duplicated, non2xx: report.non2xx }).toEqual({
      lost: 0,
      duplicated: 0,
      non2xx: overQuota,
    });
    expect(failures(report)).toEqual(['non2xx']);
  });
});

describe('npm run load -- --keys N --plan NAME on a local server of its own', () => {
  it(
    'meters with PLANS_FILE, reports 429s per key in its JSON report, and exits 0 when nothing is lost',
    async () => {
      const plansFile = join(mkdtempSync(join(tmpdir(), 'load-plans-')), 'plans.json');
      writeFileSync(
        plansFile,
        JSON.stringify({ plans: { default: { rateLimit: 1_000, burstLimit: 1_000 }, small: { rateLimit: 1, burstLimit: 1 } } }),
      );
      const result = await npmRun('load', ['--keys', '2', '--plan', 'small', '--count', '8', '--concurrency', '8', '--json'], {
        PLANS_FILE: plansFile,
      });
      expect(result.status, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout) as LoadReport;
      expect({ acknowledged: report.acknowledged, lost: report.lost, duplicated: report.duplicated, non2xx: report.non2xx }).toEqual({
        acknowledged: 8,
        lost: 0,
        duplicated: 0,
        non2xx: 0,
      });
      expect(report.keys).toHaveLength(2);
      expect(report.keys.every((key) => /^[0-9a-f]{12}$/.test(key.keyId) && key.tooManyRequests > 0 && key.quotaExceeded === 0)).toBe(true);
    },
    LOAD_RUN_TIMEOUT_MS,
  );
});

describe('how a walk is judged', () => {
  const pet = (id: number, status: string) => ({ id, name: `load-x-${id}`, status });
  const acknowledged = new Map([pet(1, 'sold'), pet(2, 'available'), pet(3, 'sold')].map((p) => [p.id, p]));

  it('counts an acknowledged pet the walk missed, one listed twice, and one never acknowledged', () => {
    expect(judgeWalk('all', acknowledged, [pet(1, 'sold'), pet(1, 'sold'), pet(2, 'available'), pet(9, 'sold')])).toEqual({
      listed: 4,
      missing: [3],
      listedTwice: [1],
      unacknowledged: [9],
    });
  });

  it('expects only the pets of its status in a filtered walk', () => {
    expect(judgeWalk('sold', acknowledged, [pet(3, 'sold')])).toMatchObject({ missing: [1], listedTwice: [], unacknowledged: [] });
  });

  it('fails a run on any lost, duplicated or refused pet', () => {
    const clean = { lost: 0, duplicated: 0, non2xx: 0 } as LoadReport;
    expect(failures(clean)).toEqual([]);
    expect(failures({ ...clean, lost: 1, non2xx: 2 })).toEqual(['lost', 'non2xx']);
    expect(failures({ ...clean, duplicated: 1 })).toEqual(['duplicated']);
  });
});

describe('npm run load against an API it cannot use', () => {
  let api: LocalApi;
  beforeAll(async () => {
    api = await startLocalApi();
  });
  afterAll(() => api.close());

  it('says in one line that nothing answers at --url, and exits 2', async () => {
    const url = `http://127.0.0.1:${await freePort()}/v1`;
    const result = await npmRun('load', ['--url', url, '--key', api.key, '--count', '5']);
    const line = expectOneLineFailure(result, { status: 2, secret: api.key });
    expect(line).toContain(`no answer from ${url} (ECONNREFUSED)`);
  });

  it('says in one line that the API refused --key (401), without printing it, and exits 2', async () => {
    const wrongKey = generateApiKey();
    const result = await npmRun('load', ['--url', api.url, '--key', wrongKey, '--count', '5']);
    const line = expectOneLineFailure(result, { status: 2, secret: wrongKey });
    expect(line).toContain(`the API at ${api.url} refused --key (401)`);
    expect(await (await api.call('/pets')).json()).toEqual([]); // the run stopped before its first create
  });

  it('says in one line that --key is not an API key at all, without printing it, and exits 2', async () => {
    const notAKey = 'petstore key with spaces';
    const result = await npmRun('load', ['--url', api.url, '--key', notAKey, '--count', '5']);
    const line = expectOneLineFailure(result, { status: 2, secret: notAKey });
    expect(line).toContain('--key is not an API key');
  });
});
