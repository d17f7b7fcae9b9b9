/**
 * The small version of `npm run load`: the same module, 200 creates against this file's local
 * server, then every page walked unfiltered and per status. Nothing lost, duplicated or refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../shared/api-keys';
import { failures, judgeWalk, runLoad, WALK_FILTERS, type LoadReport } from '../../tools/load/load';
import { freePort } from '../../tools/dynamodb-local';
import { expectOneLineFailure, npmRun } from '../support/command';
import { startLocalApi, type LocalApi } from '../support/local-api';

describe('a load run of 200 creates', () => {
  let api: LocalApi;
  let report: LoadReport;
  beforeAll(async () => {
    api = await startLocalApi();
    report = await runLoad({ url: api.url, key: api.key, count: 200, concurrency: 16 });
  });
  afterAll(() => api.close());

  it('loses nothing, duplicates nothing, and every answer is 2xx', () => {
    expect({ lost: report.lost, duplicated: report.duplicated, non2xx: report.non2xx }).toEqual({ lost: 0, duplicated: 0, non2xx: 0 });
    expect(report.acknowledged).toBe(200);
    expect(failures(report)).toEqual([]);
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
});
