/**
 * Paging through `Link rel="next"` (list, next, all), the deprecation report of getPet, the raw
 * answers tools read, and the headers the client reads (Link, Retry-After, Deprecation, Sunset).
 */
import { describe, expect, it, vi } from 'vitest';
import { PetStore, PetStoreRepeatedCursorError, type DeprecationNotice, type ResponseNotice } from '../../../client/src/index';
import { instantOf, linkOf, retryAfterSeconds } from '../../../client/src/headers';
import { errorAnswer, scriptedFetch, type Scripted } from '../../support/fake-fetch';
import { keyedOperationIds, requestTo } from '../../support/operations';

const BASE_URL = 'https://api.example.test/v1';
const pet = (id: number) => ({ id, name: `pet ${id}`, categoryId: 1, status: 'sold' as const });
const page = (ids: number[], next?: string): Scripted => ({
  status: 200,
  body: ids.map(pet),
  headers: next === undefined ? {} : { link: `<${next}>; rel="next"` },
});

const storeOn = (...script: Scripted[]) => {
  const { fetch, sent } = scriptedFetch(...script);
  const deprecations: DeprecationNotice[] = [];
  const answers: ResponseNotice[] = [];
  const store = new PetStore({
    baseUrl: `${BASE_URL}/`,
    apiKey: 'petstore_unit-test-key-0123456789abcdef',
    fetch,
    onDeprecation: (notice) => deprecations.push(notice),
    onResponse: (notice) => answers.push(notice),
  });
  return { store, sent, deprecations, answers };
};

describe('paging', () => {
  it('list answers one page; next() follows Link rel="next" with its cursor; the last page has none', async () => {
    const { store, sent } = storeOn(page([1, 2], `${BASE_URL}/pets?limit=2&status=sold&cursor=c1`), page([3]));
    const first = await store.pets.list({ status: 'sold', limit: 2 });
    expect(first.pets).toEqual([pet(1), pet(2)]);
    expect(first.hasNext).toBe(true);
    const second = await first.next();
    expect(second?.pets).toEqual([pet(3)]);
    expect(second?.hasNext).toBe(false);
    expect(await second?.next()).toBeUndefined();
    expect(sent.map((request) => request.url.href)).toEqual([
      `${BASE_URL}/pets?status=sold&limit=2`,
      `${BASE_URL}/pets?limit=2&status=sold&cursor=c1`,
    ]);
  });

  it('all() yields every pet of every page once, in order', async () => {
    const { store, sent } = storeOn(
      page([1, 2], `${BASE_URL}/pets?limit=2&cursor=a`),
      page([3, 4], `${BASE_URL}/pets?limit=2&cursor=b`),
      page([5]),
    );
    const seen: number[] = [];
    for await (const { id } of store.pets.all({ pageSize: 2 })) seen.push(id);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(sent.map((request) => request.url.searchParams.get('cursor'))).toEqual([null, 'a', 'b']);
  });

  it('sends the key only to baseUrl: a next link on another host gives its query, not its host', async () => {
    const { store, sent } = storeOn(page([1], 'https://elsewhere.example/v1/pets?limit=1&cursor=z'), page([2]));
    await (await store.pets.list({ limit: 1 })).next();
    expect(sent[1]?.url.href).toBe(`${BASE_URL}/pets?limit=1&cursor=z`);
  });

  /** What all() yields, up to 20 pets (a client that never stops would go on), and how it ends. */
  const drain = async (pets: AsyncIterable<{ id: number }>) => {
    const ids: number[] = [];
    try {
      for await (const { id } of pets) if (ids.push(id) >= 20) return { ids, end: 'still paging after 20 pets' };
    } catch (error) {
      return { ids, end: error };
    }
    return { ids, end: 'done' };
  };

  it.each([
    ['the same next link again and again', [page([1], `${BASE_URL}/pets?cursor=a`), page([2], `${BASE_URL}/pets?cursor=a`)], 'a', [1, 2]],
    [
      'a circle of two cursors',
      [page([1], `${BASE_URL}/pets?cursor=a`), page([2], `${BASE_URL}/pets?cursor=b`), page([3], `${BASE_URL}/pets?cursor=a`)],
      'a',
      [1, 2, 3],
    ],
    ['a next link back to the first page (no cursor)', [page([1], `${BASE_URL}/pets?limit=1`)], null, [1]],
  ])('all() on a server that answers %s ends with a PetStoreRepeatedCursorError', async (_, script, cursor, ids) => {
    const { store, sent } = storeOn(...script);
    const { ids: yielded, end } = await drain(store.pets.all());
    expect(end).toBeInstanceOf(PetStoreRepeatedCursorError);
    expect(end).toMatchObject({ cursor, operation: 'listPets' });
    expect(yielded).toEqual(ids);
    expect(sent).toHaveLength(ids.length);
  });

  it('all() follows distinct cursors, however many', async () => {
    const script = Array.from({ length: 30 }, (_, index) => page([index], index < 29 ? `${BASE_URL}/pets?cursor=c${index}` : undefined));
    const { store } = storeOn(...script);
    const ids: number[] = [];
    for await (const { id } of store.pets.all()) ids.push(id);
    expect(ids).toEqual(script.map((_, index) => index));
  });

  it('a 200 that is not a JSON array (a stray proxy page) is an error, not pets', async () => {
    const { store } = storeOn({ status: 200, body: '<html>Welcome</html>' });
    await expect(store.pets.list()).rejects.toThrow('listPets: HTTP 200 without a JSON array');
  });

  it('an error on a later page is thrown by next()', async () => {
    const { store } = storeOn(page([1], `${BASE_URL}/pets?cursor=x`), errorAnswer(400, 'invalid_cursor'));
    const first = await store.pets.list();
    await expect(first.next()).rejects.toMatchObject({ status: 400, code: 'invalid_cursor' });
  });
});

describe('the deprecated getPet', () => {
  const deprecated = {
    Deprecation: '@1767225600',
    Sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
    Link: `<${BASE_URL}/pets>; rel="successor-version"`,
  };

  it('is reported once per client through onDeprecation, with its dates and successor, never logged', async () => {
    const log = vi.spyOn(console, 'warn');
    const { store, deprecations } = storeOn({ status: 200, body: pet(7), headers: deprecated });
    expect(await store.pets.get(7)).toEqual(pet(7));
    await store.pets.get(7);
    expect(deprecations).toEqual([
      {
        operation: 'getPet',
        deprecation: new Date('2026-01-01T00:00:00Z'),
        sunset: new Date('2030-12-05T00:00:00Z'),
        link: `${BASE_URL}/pets`,
      },
    ]);
    expect(log).not.toHaveBeenCalled();
    log.mockRestore();
  });

  it('is reported from an error answer too (they carry the headers)', async () => {
    const { store, deprecations } = storeOn({ ...errorAnswer(404, 'not_found'), headers: deprecated });
    await expect(store.pets.get(8)).rejects.toMatchObject({ code: 'not_found', operation: 'getPet' });
    expect(deprecations.map(({ operation }) => operation)).toEqual(['getPet']);
  });

  it('other operations, without the headers, report nothing', async () => {
    const { store, deprecations } = storeOn(page([1]));
    await store.pets.list();
    expect(deprecations).toEqual([]);
  });
});

describe('raw answers, for tools that check headers and statuses', () => {
  it('raw() answers any status with its headers, body and parsed error; onResponse sees every attempt', async () => {
    const { store, answers, sent } = storeOn(errorAnswer(503, 'service_unavailable', { 'Retry-After': '0' }), {
      ...errorAnswer(401, 'unauthorized'),
      headers: { 'WWW-Authenticate': 'Bearer realm="pet-store"' },
    });
    // Any operation a key reads with: raw() answers what the server said, whichever it is.
    const operation = keyedOperationIds.find((id) => requestTo[id][0] === 'GET');
    if (!operation) throw new Error('The tests need an operation a key reads with.');
    const { response, body, error } = await store.raw({ operation, path: requestTo[operation][1], auth: false });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="pet-store"');
    expect(body).toEqual({ code: 'unauthorized', message: 'refused: unauthorized', status: 401 });
    expect(error).toMatchObject({ status: 401, code: 'unauthorized', operation });
    expect(sent.map((request) => request.headers.has('authorization'))).toEqual([false, false]);
    expect(answers.map(({ attempt, response: { status } }) => [attempt, status])).toEqual([
      [1, 503],
      [2, 401],
    ]);
  });

  it('raw() and onResponse give the body as received too, for checks of the exact answer', async () => {
    const sentText = '[ {"id": 1,  "name": "x"} ]';
    const { store, answers } = storeOn({ status: 200, body: sentText }, { status: 404, body: '"not found"' });
    expect(await store.raw({ path: '/pets' })).toMatchObject({ body: [{ id: 1, name: 'x' }], text: sentText });
    // A JSON string and a text that is not JSON parse alike: only the text tells them apart.
    expect(await store.raw({ path: '/pets/2' })).toMatchObject({ body: 'not found', text: '"not found"' });
    expect(answers.map(({ text }) => text)).toEqual([sentText, '"not found"']);
  });

  it('create: onResponse shows the Location and whether the answer was a replay', async () => {
    const { store, answers } = storeOn({
      status: 201,
      body: pet(9),
      headers: { Location: `${BASE_URL}/pets/9`, 'Idempotent-Replayed': 'true' },
    });
    await store.pets.create({ name: 'pet 9', categoryId: 1, status: 'sold' }, { idempotencyKey: 'k' });
    expect(answers[0]?.response.headers.get('location')).toBe(`${BASE_URL}/pets/9`);
    expect(answers[0]?.response.headers.get('idempotent-replayed')).toBe('true');
  });
  it('onResponse gives each attempt its own time, from sending to the whole body read, waits excluded', async () => {
    // A fetch whose answers take 40 ms and then 15 ms on the client's clock, with a 1 s Retry-After between.
    let clock = 0;
    const { fetch } = scriptedFetch(errorAnswer(429, 'too_many_requests', { 'Retry-After': '1' }), page([1]));
    const durations = [40, 15];
    const answers: ResponseNotice[] = [];
    const store = new PetStore({
      baseUrl: BASE_URL,
      apiKey: 'petstore_unit-test-key-0123456789abcdef',
      fetch: async (input, init) => {
        clock += durations.shift() ?? 0;
        return fetch(input, init);
      },
      now: () => clock,
      sleep: async (ms) => void (clock += ms),
      random: () => 0,
      onResponse: (notice) => answers.push(notice),
    });
    await store.pets.list();
    expect(answers.map(({ attempt, durationMs }) => [attempt, durationMs])).toEqual([
      [1, 40],
      [2, 15],
    ]);
  });
});

describe('headers', () => {
  it('Link: the entry of a relation among several, quoted or not, or in a list of relations', () => {
    const headers = (link: string) => new Headers({ link });
    expect(linkOf(headers('<https://a/1>; rel="prev", <https://a/2>; rel="next"'), 'next')).toBe('https://a/2');
    expect(linkOf(headers('<https://a/2>;rel=next'), 'next')).toBe('https://a/2');
    expect(linkOf(headers('<https://a/2>; rel="next last"'), 'last')).toBe('https://a/2');
    expect(linkOf(headers('<https://a/2>; rel="successor-version"'), 'next')).toBeUndefined();
    expect(linkOf(new Headers(), 'next')).toBeUndefined();
  });

  it('Retry-After: seconds, or an HTTP date from now; nothing for anything else', () => {
    const now = Date.UTC(2030, 0, 1);
    expect(retryAfterSeconds('1', now)).toBe(1);
    expect(retryAfterSeconds(' 3600 ', now)).toBe(3_600);
    expect(retryAfterSeconds('Tue, 01 Jan 2030 00:00:02 GMT', now)).toBe(2);
    expect(retryAfterSeconds('Mon, 31 Dec 2029 00:00:00 GMT', now)).toBe(0);
    for (const value of [null, '', '-1', '1.5', 'soon']) expect(retryAfterSeconds(value, now)).toBeUndefined();
  });

  it('Deprecation and Sunset: @seconds or an HTTP date', () => {
    expect(instantOf('@1767225600')).toEqual(new Date('2026-01-01T00:00:00Z'));
    expect(instantOf('Thu, 05 Dec 2030 00:00:00 GMT')).toEqual(new Date('2030-12-05T00:00:00Z'));
    expect(instantOf('@soon')).toBeUndefined();
    expect(instantOf(null)).toBeUndefined();
  });
});
