/**
 * Usage plans as a client meets them through the local gateway: each key metered on its own plan
 * (rate, then quota), 429s in the Error shape with Retry-After, the plan stated in
 * `RateLimit-Policy` on successful answers, a key on no plan of the stage refused, and a key whose
 * item was changed by hand so that it cannot be metered refused 401.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stages } from '../../infra/stages';
import { hashApiKey } from '../../shared/api-keys';
import { QUOTA_RETRY_AFTER_SECONDS, RETRY_AFTER_SECONDS } from '../../shared/errors';
import type { Plans } from '../../shared/plans';
import {
  createPetAnswer,
  expectCommonHeaders,
  expectError,
  getWith,
  petStoreWith,
  registerKeyOnPlan,
  startLocalApi,
  type LocalApi,
} from '../support/local-api';
import { databaseClient } from '../support/database';

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
    const { response: created } = await createPetAnswer(petStoreWith(api, metered), { name: 'Rex', categoryId: 1 });
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

describe('a key whose item cannot be metered', () => {
  /** Changes a key's item as an operator may in the DynamoDB console. */
  const editItem = async (key: string, expression: string, values?: Record<string, unknown>) => {
    const client = databaseClient({ endpoint: inject('dynamodbEndpoint') });
    try {
      await client.send(
        new UpdateCommand({
          TableName: api.tables.apiKeys,
          Key: { keyHash: hashApiKey(key) },
          UpdateExpression: expression,
          ...(values ? { ExpressionAttributeValues: values } : {}),
        }),
      );
    } finally {
      client.destroy();
    }
  };

  it("is refused 401 when its usage key was replaced by another key's, rather than spend the other key's plan", async () => {
    const cheap = await registerKeyOnPlan(api, 'small');
    const victim = await registerKeyOnPlan(api, 'metered');
    // Edited before its first request: the gateway caches an answer for the cache TTL.
    await editItem(cheap, 'SET usageKey = :usageKey', { ':usageKey': (await api.keys.find(victim))?.usageKey });

    const refused = await getWith(api, cheap);
    expectCommonHeaders(refused);
    await expectError(refused, 401, 'unauthorized');
    // The other key's quota is untouched: all of it is left.
    expect(await statusesOf(victim, 3)).toEqual([200, 200, 200]);
  });

  it('is refused 401 without a usage key', async () => {
    const key = await registerKeyOnPlan(api, 'default');
    await editItem(key, 'REMOVE usageKey');
    await expectError(await getWith(api, key), 401, 'unauthorized');
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

describe('one region of a stage in several regions', () => {
  it("meters each key on the region's even share of its plan's quota, at the plan's rate, and states that share in RateLimit-Policy", async () => {
    // As many regions as the stage that runs in several lists.
    const regionCount = stages.global?.regions?.length ?? 0;
    expect(regionCount, 'the global stage lists its regions (infra/stages.ts)').toBeGreaterThan(1);
    const metered = PLANS.metered!;
    const share = Math.floor(metered.quota!.limit / regionCount);
    const region = await startLocalApi({ plans: PLANS, regionCount });
    try {
      const key = await registerKeyOnPlan(region, 'metered');
      const answers = [];
      for (let index = 0; index <= share; index += 1) answers.push(await getWith(region, key));
      expect(answers.map(({ status }) => status)).toEqual([...Array.from({ length: share }, () => 200), 429]);
      expect(answers[0]?.headers.get('ratelimit-policy')).toBe(`"metered";q=${metered.rateLimit};w=1, "metered-quota";q=${share};w=86400`);
      await expectError(answers[share]!, 429, 'quota_exceeded');
    } finally {
      await region.close();
    }
  });
});
