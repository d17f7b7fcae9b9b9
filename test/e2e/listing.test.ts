/** GET /pets over HTTP: limits, the status filter, and cursor pagination through 250 pets. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pet } from '../../client/src/index';
import {
  allPets,
  expectCommonHeaders,
  expectError,
  inParallel,
  linkOf,
  startLocalApi,
  walkPages,
  type LocalApi,
} from '../support/local-api';

const STATUSES = ['available', 'pending', 'sold'] as const;
let api: LocalApi;
let created: Pet[] = [];

beforeAll(async () => {
  api = await startLocalApi();
  // 250 pets, statuses cycling, created 8 at a time.
  created = await inParallel(250, 8, (index) =>
    api.petStore.pets.create({ name: `pet ${index}`, categoryId: 1 + (index % 5), status: STATUSES[index % 3] }),
  );
});
afterAll(() => api.close());

const ids = (pets: Array<{ id: number }>) => pets.map((pet) => pet.id);

describe('GET /pets', () => {
  it('answers a bare array of 20 pets by default, with the common headers and a next link', async () => {
    const response = await api.call('/pets');
    expect(response.status).toBe(200);
    expectCommonHeaders(response);
    const pets = (await response.json()) as unknown[];
    expect(Array.isArray(pets)).toBe(true);
    expect(pets).toHaveLength(20);
    expect(pets[0]).toEqual({
      id: expect.any(Number),
      name: expect.any(String),
      categoryId: expect.any(Number),
      status: expect.any(String),
    });
    const next = new URL(linkOf(response, 'next') ?? '');
    expect(`${next.origin}${next.pathname}`).toBe(`${api.url}/pets`);
    expect(next.searchParams.get('limit')).toBe('20');
    expect(next.searchParams.get('cursor')).toBeTruthy();
  });

  it('answers up to the maximum limit of 100', async () => {
    const response = await api.call('/pets?limit=100');
    expect(((await response.json()) as unknown[]).length).toBe(100);
  });

  it('pages through all 250 pets exactly once, 100 at a time, ending without a next link', async () => {
    const pages = await walkPages(api, { limit: 100 });
    expect(pages.map((page) => page.length)).toEqual([100, 100, 50]);
    const seen = pages.flat().map((pet) => pet.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual(ids(created).sort());
  });

  it('pages through one status exactly once, in creation order, keeping limit and status in the link', async () => {
    const pending = created.filter((pet) => pet.status === 'pending');
    const first = await api.call('/pets?status=pending&limit=30');
    const next = new URL(linkOf(first, 'next') ?? '');
    expect(next.searchParams.get('status')).toBe('pending');
    expect(next.searchParams.get('limit')).toBe('30');

    const pages = await walkPages(api, { status: 'pending', limit: 30 });
    const seen = pages.flat();
    expect(seen.every((pet) => pet.status === 'pending')).toBe(true);
    expect(ids(seen)).toEqual(ids(pending).sort((a, b) => a - b));
    expect(pages.slice(0, -1).every((page) => page.length === 30)).toBe(true);
  });

  it('ends without a next link when the last page is exactly full', async () => {
    const sold = created.filter((pet) => pet.status === 'sold').length;
    const response = await api.call(`/pets?status=sold&limit=${sold}`);
    expect(((await response.json()) as unknown[]).length).toBe(sold);
    expect(response.headers.get('link')).toBeNull();
  });

  it('gives every status its own complete listing', async () => {
    for (const status of STATUSES) {
      const seen = await allPets(api, { status, pageSize: 50 });
      expect(seen.length).toBe(created.filter((pet) => pet.status === status).length);
    }
  });

  it.each([
    ['0', 'limit'],
    ['101', 'limit'],
    ['abc', 'limit'],
    ['1.5', 'limit'],
    ['-1', 'limit'],
    ['', 'limit'],
  ])('refuses limit=%s with 400 validation_failed naming the parameter', async (value, name) => {
    const body = await expectError(await api.call(`/pets?limit=${value}`), 400, 'validation_failed');
    expect(body.message).toContain(`'${name}'`);
  });

  it('refuses a repeated parameter, an unknown status and an unknown parameter', async () => {
    expect((await expectError(await api.call('/pets?limit=5&limit=6'), 400, 'validation_failed')).message).toContain("'limit'");
    expect((await expectError(await api.call('/pets?status=Available'), 400, 'validation_failed')).message).toContain("'status'");
    expect((await expectError(await api.call('/pets?color=red'), 400, 'validation_failed')).message).toContain("'color'");
  });

  it('refuses a malformed, a tampered and a foreign cursor with 400 invalid_cursor', async () => {
    const cursor = new URL(linkOf(await api.call('/pets?status=sold&limit=5'), 'next') ?? '').searchParams.get('cursor') ?? '';
    expect(cursor).not.toBe('');
    await expectError(await api.call('/pets?status=sold&cursor=not-a-cursor'), 400, 'invalid_cursor');
    const tampered = `${cursor.slice(0, 3)}${cursor[3] === 'A' ? 'B' : 'A'}${cursor.slice(4)}`;
    await expectError(await api.call(`/pets?status=sold&cursor=${encodeURIComponent(tampered)}`), 400, 'invalid_cursor');
    await expectError(await api.call(`/pets?status=pending&cursor=${encodeURIComponent(cursor)}`), 400, 'invalid_cursor');
    await expectError(await api.call(`/pets?cursor=${encodeURIComponent(cursor)}`), 400, 'invalid_cursor');
    expect((await api.call(`/pets?status=sold&limit=5&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
  });
});
