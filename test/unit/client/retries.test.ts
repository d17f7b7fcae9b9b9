/**
 * The client's retries against a scripted fetch, on a fake clock: what is retried (GETs and keyed
 * creates; 429 too_many_requests, 503, a dropped connection, a timeout) and what is not (a create
 * without a key, quota_exceeded, other errors), the backoff's bounds and jitter, Retry-After, the
 * bounds on attempts and total time, and cancelling.
 */
import { describe, expect, it } from 'vitest';
import { PetStore, PetStoreError, PetStoreNetworkError, PetStoreTimeoutError, type PetStoreOptions } from '../../../client/src/index';
import { errorAnswer, fakeTime, scriptedFetch, type Scripted } from '../../support/fake-fetch';

const BASE_URL = 'https://api.example.test/v1';
const API_KEY = 'petstore_unit-test-key-0123456789abcdef';
const rex = { id: 1, name: 'Rex', categoryId: 1, status: 'available' } as const;
const ok = (body: unknown = [rex]) => ({ status: 200, body });
const created = { status: 201, body: rex };
const unavailable = errorAnswer(503, 'service_unavailable', { 'Retry-After': '1' });
const throttled = errorAnswer(429, 'too_many_requests', { 'Retry-After': '1' });

/** A client on a script and a fake clock; `random` 0.5 unless given. */
const clientOn = (script: Scripted[], options: Partial<PetStoreOptions> = {}) => {
  const { fetch, sent } = scriptedFetch(...script);
  const time = fakeTime();
  const retries: number[] = [];
  const store = new PetStore({
    baseUrl: BASE_URL,
    apiKey: API_KEY,
    fetch,
    sleep: time.sleep,
    now: time.now,
    random: () => 0.5,
    onRetry: ({ attempt }) => retries.push(attempt),
    ...options,
  });
  return { store, sent, waits: time.waits, retries };
};

describe('what is retried', () => {
  it('a GET after 503 and 429 too_many_requests, waiting Retry-After, until it succeeds', async () => {
    const { store, sent, waits } = clientOn([unavailable, throttled, ok()]);
    await expect(store.pets.list()).resolves.toMatchObject({ pets: [rex] });
    expect(sent).toHaveLength(3);
    expect(waits).toEqual([1_000, 1_000]);
  });

  it('a GET after a dropped connection, a refused one and a timeout', async () => {
    const { store, sent } = clientOn(['drop', 'refuse', 'hang', ok()], { timeoutMs: 20 });
    await expect(store.pets.list()).resolves.toMatchObject({ pets: [rex] });
    expect(sent).toHaveLength(4);
  });

  it('a create with the key it made, the same key on every attempt', async () => {
    const { store, sent } = clientOn(['drop', unavailable, throttled, created]);
    await expect(store.pets.create({ name: 'Rex', categoryId: 1 })).resolves.toEqual(rex);
    const keys = sent.map((request) => request.headers.get('idempotency-key'));
    expect(keys).toHaveLength(4);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(sent.map((request) => JSON.parse(request.body ?? ''))).toEqual(Array(4).fill({ name: 'Rex', categoryId: 1 }));
  });

  it("a create with the caller's key, and a new key for each call", async () => {
    const { store, sent } = clientOn([unavailable, created]);
    await store.pets.create({ name: 'Rex', categoryId: 1 }, { idempotencyKey: 'order-42' });
    expect(sent.map((request) => request.headers.get('idempotency-key'))).toEqual(['order-42', 'order-42']);
    await store.pets.create({ name: 'Rex', categoryId: 1 });
    await store.pets.create({ name: 'Rex', categoryId: 1 });
    const [, , first, second] = sent.map((request) => request.headers.get('idempotency-key'));
    expect(first).not.toBe(second);
  });
});

describe('what is not retried', () => {
  it('a create without an idempotency key: one attempt, the error at once', async () => {
    const { store, sent, waits } = clientOn([unavailable, created]);
    const error = await store.pets.create({ name: 'Rex', categoryId: 1 }, { idempotencyKey: false }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PetStoreError);
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable', retryAfter: 1 });
    expect(sent).toHaveLength(1);
    expect(sent[0]?.headers.has('idempotency-key')).toBe(false);
    expect(waits).toEqual([]);
  });

  it('a raw POST without a key, even when the connection dropped', async () => {
    const { store, sent } = clientOn(['drop', created]);
    const error = await store
      .raw({ method: 'POST', path: '/pets', body: { name: 'Rex', categoryId: 1 } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PetStoreNetworkError);
    expect(error).toMatchObject({ mayHaveReachedServer: true });
    expect(sent).toHaveLength(1);
  });

  it('429 quota_exceeded: returned at once with its Retry-After, never waited for', async () => {
    // With no bound on the total time: quota_exceeded is not retried for what it is, not for its long Retry-After.
    const { store, sent, waits, retries } = clientOn([errorAnswer(429, 'quota_exceeded', { 'Retry-After': '3600' }), ok()], {
      maxElapsedMs: Number.POSITIVE_INFINITY,
    });
    await expect(store.pets.list()).rejects.toMatchObject({ status: 429, code: 'quota_exceeded', retryAfter: 3_600 });
    expect({ attempts: sent.length, waits, retries }).toEqual({ attempts: 1, waits: [], retries: [] });
  });

  it.each([
    [400, 'validation_failed'],
    [401, 'unauthorized'],
    [404, 'not_found'],
    [500, 'internal_error'],
  ])('%i %s', async (status, code) => {
    const { store, sent } = clientOn([errorAnswer(status, code), ok()]);
    await expect(store.pets.list()).rejects.toMatchObject({ status, code, requestId: `request-${code}` });
    expect(sent).toHaveLength(1);
  });
});

describe('the backoff', () => {
  it('waits random × min(maxDelayMs, baseDelayMs × 2^n) before retry n: full jitter, bounded', async () => {
    const draws = [0.999, 0.999, 0.999, 0.999, 0.999, 0.25];
    const { store, waits } = clientOn(['drop'], { maxRetries: 6, baseDelayMs: 100, maxDelayMs: 1_000, random: () => draws.shift() ?? 0 });
    await expect(store.pets.list()).rejects.toBeInstanceOf(PetStoreNetworkError);
    expect(waits.map((ms) => Math.round(ms))).toEqual([100, 200, 400, 799, 999, 250]);
  });

  it('spreads the waits of many clients over [0, cap) (jitter), within the cap', async () => {
    const firstWaits: number[] = [];
    for (let run = 0; run < 200; run += 1) {
      const { store, waits } = clientOn(['drop', ok()], { random: Math.random, baseDelayMs: 200 });
      await store.pets.list();
      firstWaits.push(...waits);
    }
    expect(Math.min(...firstWaits)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...firstWaits)).toBeLessThan(200);
    // Spread over the range, not bunched: both halves are well used.
    expect(firstWaits.filter((ms) => ms < 100).length).toBeGreaterThan(50);
    expect(firstWaits.filter((ms) => ms >= 100).length).toBeGreaterThan(50);
  });

  it('never retries sooner than Retry-After, in seconds or as an HTTP date', async () => {
    const { store, waits } = clientOn([errorAnswer(503, 'service_unavailable', { 'Retry-After': '7' }), ok()], { random: () => 0.999 });
    await store.pets.list();
    expect(waits).toEqual([7_000]);

    const at = new Date(Date.UTC(2030, 0, 1, 0, 0, 5));
    const dated = clientOn([errorAnswer(429, 'too_many_requests', { 'Retry-After': at.toUTCString() }), ok()], {
      now: () => Date.UTC(2030, 0, 1),
    });
    await dated.store.pets.list();
    expect(dated.waits).toEqual([5_000]);
  });

  it('stops after maxRetries retries (default 3), with the last error', async () => {
    const { store, sent, retries } = clientOn([throttled, throttled, throttled, unavailable, ok()]);
    await expect(store.pets.list()).rejects.toMatchObject({ status: 503, code: 'service_unavailable' });
    expect({ attempts: sent.length, retries }).toEqual({ attempts: 4, retries: [2, 3, 4] });

    const none = clientOn([unavailable, ok()], { maxRetries: 0 });
    await expect(none.store.pets.list()).rejects.toMatchObject({ status: 503 });
    expect(none.sent).toHaveLength(1);
  });

  it('starts no retry whose wait would end past maxElapsedMs', async () => {
    const { store, sent, waits } = clientOn([unavailable], { maxRetries: 10, maxElapsedMs: 2_500 });
    await expect(store.pets.list()).rejects.toMatchObject({ status: 503 });
    expect({ attempts: sent.length, waits }).toEqual({ attempts: 3, waits: [1_000, 1_000] });

    const tooLong = clientOn([errorAnswer(503, 'service_unavailable', { 'Retry-After': '120' }), ok()]);
    await expect(tooLong.store.pets.list()).rejects.toMatchObject({ status: 503, retryAfter: 120 });
    expect(tooLong.sent).toHaveLength(1);
  });
});

describe('errors', () => {
  it('a timeout: PetStoreTimeoutError, each attempt aborted, the server may have had it', async () => {
    // A hanging fetch only settles when its request is aborted.
    const { store, sent } = clientOn(['hang'], { timeoutMs: 30, maxRetries: 1 });
    const error = await store.pets.get(1).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PetStoreTimeoutError);
    expect(error).toMatchObject({ mayHaveReachedServer: true, timeoutMs: 30, operation: 'getPet', message: 'No answer within 30 ms' });
    expect(sent).toHaveLength(2);
  });

  it('a refused connection never reached the server; a dropped one may have', async () => {
    const refused = clientOn(['refuse'], { maxRetries: 0 });
    await expect(refused.store.pets.list()).rejects.toMatchObject({ name: 'PetStoreNetworkError', mayHaveReachedServer: false });
    const dropped = clientOn(['drop'], { maxRetries: 0 });
    await expect(dropped.store.pets.list()).rejects.toMatchObject({ name: 'PetStoreNetworkError', mayHaveReachedServer: true });
  });

  it('an answer without the Error shape gets a code from its status', async () => {
    const cases = [
      [502, 'internal_error'],
      [503, 'service_unavailable'],
      [429, 'too_many_requests'],
      [418, 'request_refused'],
    ] as const;
    for (const [status, code] of cases) {
      const { store } = clientOn([{ status, body: '<html>Bad gateway</html>' }], { maxRetries: 0 });
      await expect(store.pets.list()).rejects.toMatchObject({ status, code, message: `HTTP ${status}, not in the API's Error shape` });
    }
    // An undocumented code is not taken at its word either.
    const { store } = clientOn([{ status: 400, body: { code: 'made_up', message: 'x', status: 400 } }]);
    await expect(store.pets.list()).rejects.toMatchObject({ code: 'request_refused' });
  });
});

describe('cancelling', () => {
  it('aborts a call waiting for its answer, with the signal’s reason', async () => {
    const { store, sent } = clientOn(['hang']);
    const controller = new AbortController();
    const call = store.pets.list({ signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(sent).toHaveLength(1);
  });

  it('aborts a call waiting between retries (the default sleep), and sends nothing more', async () => {
    const controller = new AbortController();
    const { store, sent } = clientOn([unavailable, ok()], {
      sleep: undefined,
      now: Date.now,
      onRetry: () => setTimeout(() => controller.abort(new Error('stop')), 10),
    });
    const started = Date.now();
    await expect(store.pets.list({ signal: controller.signal })).rejects.toThrow('stop');
    // Well before the second's wait Retry-After asked for would end.
    expect(Date.now() - started).toBeLessThan(900);
    expect(sent).toHaveLength(1);
  });

  it('sends nothing for a signal already aborted', async () => {
    const { store, sent } = clientOn([ok()]);
    await expect(store.pets.list({ signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(sent).toHaveLength(0);
  });
});
