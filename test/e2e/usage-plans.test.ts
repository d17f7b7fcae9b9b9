/**
 * Usage plans as a client meets them through the local gateway: each key metered on its own plan
 * (rate, then quota), 429s in the Error shape with Retry-After, the plan stated in
 * `RateLimit-Policy` on successful answers, keys from before plans on the shared usage key (its
 * plan the stage throttle), and a key on no plan of the stage refused.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { QUOTA_RETRY_AFTER_SECONDS, RETRY_AFTER_SECONDS } from '../../shared/errors';
import { createDocumentClient } from '../../shared/dynamodb';
import type { Plans } from '../../shared/plans';
import { putConsoleKey } from '../support/console-keys';
import { expectCommonHeaders, expectError, getWith, registerKeyOnPlan, startLocalApi, type LocalApi } from '../support/local-api';

/** Plans small enough to reach in a few requests; a rate of 0.001/s refills nothing during a test. */
const PLANS: Plans = {
  default: { rateLimit: 1_000, burstLimit: 1_000 },
  small: { rateLimit: 0.001, burstLimit: 3 },
  metered: { rateLimit: 1_000, burstLimit: 1_000, quota: { limit: 3, period: 'DAY' } },
};

let api: LocalApi;
beforeAll(async () => {
  api = await startLocalApi({ plans: PLANS });
});
afterAll(() => api.close());

const statusesOf = async (key: string, count: number) => {
  const statuses: number[] = [];
  for (let index = 0; index < count; index += 1) statuses.push((await getWith(api, key)).status);
  return statuses;
};

describe('a key over its plan', () => {
  it("gets 429 too_many_requests with Retry-After, in the Error shape, once its plan's burst is spent; another key does not", async () => {
    const small = await registerKeyOnPlan(api, 'small');
    const other = await registerKeyOnPlan(api, 'small');
    expect(await statusesOf(small, 5)).toEqual([200, 200, 200, 429, 429]);

    const refused = await getWith(api, small);
    expect(refused.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));
    expectCommonHeaders(refused);
    await expectError(refused, 429, 'too_many_requests');
    // Each key has its own bucket, even on the same plan.
    expect(await statusesOf(other, 3)).toEqual([200, 200, 200]);
    expect(await statusesOf(api.key, 3)).toEqual([200, 200, 200]);
  });

  it('gets 429 quota_exceeded with the fixed Retry-After hint once its quota is used up', async () => {
    const metered = await registerKeyOnPlan(api, 'metered');
    expect(await statusesOf(metered, 3)).toEqual([200, 200, 200]);

    const refused = await getWith(api, metered);
    expect(refused.headers.get('retry-after')).toBe(String(QUOTA_RETRY_AFTER_SECONDS));
    expectCommonHeaders(refused);
    await expectError(refused, 429, 'quota_exceeded');
  });
});

describe('RateLimit-Policy', () => {
  it("names the key's plan on successful answers: its rate, and its quota when it has one", async () => {
    const small = await registerKeyOnPlan(api, 'small');
    expect((await getWith(api, small)).headers.get('ratelimit-policy')).toBe('"small";q=1;w=1000');
    const metered = await registerKeyOnPlan(api, 'metered');
    expect((await getWith(api, metered)).headers.get('ratelimit-policy')).toBe('"metered";q=1000;w=1, "metered-quota";q=3;w=86400');
    const created = await api.call('/pets', {
      method: 'POST',
      headers: { Authorization: `Bearer ${metered}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('ratelimit-policy')).toBe('"metered";q=1000;w=1, "metered-quota";q=3;w=86400');
    // Nothing that could pass for a remaining count: API Gateway does not expose one.
    expect(created.headers.get('ratelimit')).toBeNull();
    expect(created.headers.get('ratelimit-remaining')).toBeNull();
  });

  it("is not on errors, the function's or the gateway's", async () => {
    const small = await registerKeyOnPlan(api, 'small');
    const notFound = await getWith(api, small, '/pets/999999999');
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('ratelimit-policy')).toBeNull();
    await getWith(api, small);
    await getWith(api, small);
    const throttled = await getWith(api, small);
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('ratelimit-policy')).toBeNull();
  });
});

describe('keys from before plans', () => {
  it('are metered together by the shared usage key, at the stage throttle, whatever plan the item names, until they are paired', async () => {
    // A small stage throttle, so that the shared bucket shows: two such keys spend it together.
    const stage = await startLocalApi({ plans: PLANS, throttle: { rate: 0.001, burst: 4 } });
    try {
      const client = createDocumentClient({ endpoint: inject('dynamodbEndpoint') });
      // Typed in the console: no usage key of their own; one names a plan all the same.
      const before = await putConsoleKey(client, stage.tables.apiKeys, {});
      const consoleKey = await putConsoleKey(client, stage.tables.apiKeys, { extra: { plan: { S: 'metered' } } });
      client.destroy();

      const first = await getWith(stage, consoleKey);
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit-policy')).toBe('"shared";q=1;w=1000');
      const statuses = [];
      for (const key of [before, consoleKey, before, consoleKey]) statuses.push((await getWith(stage, key)).status);
      // One bucket of 4 for both: the fifth request of the two is refused.
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await stage.close();
    }
  });

  it('are on the shared plan, and a paired key on its own plan and bucket', async () => {
    const client = createDocumentClient({ endpoint: inject('dynamodbEndpoint') });
    const before = await putConsoleKey(client, api.tables.apiKeys, {});
    client.destroy();
    const paired = await registerKeyOnPlan(api, 'default');
    expect((await getWith(api, before)).headers.get('ratelimit-policy')).toMatch(/^"shared";/);
    expect((await getWith(api, paired)).headers.get('ratelimit-policy')).toMatch(/^"default";/);
  });
});

describe('a key on no usage plan of the stage', () => {
  it('is refused 403 forbidden, in the Error shape', async () => {
    const stray = await registerKeyOnPlan(api, 'retired');
    const refused = await getWith(api, stray);
    expectCommonHeaders(refused);
    const body = await expectError(refused, 403, 'forbidden');
    expect(body.message).toMatch(/not on a usage plan/);
  });
});
