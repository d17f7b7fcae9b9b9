/**
 * Every operation, its answers and its errors, called through a client typed from openapi.json
 * (openapi-typescript + openapi-fetch), as a client team would: a breaking change to the models
 * or the document stops this file from compiling.
 */
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components, paths } from '../../generated/openapi-types';
import { startLocalApi, type LocalApi } from '../support/local-api';

type Pet = components['schemas']['Pet'];
type ApiError = components['schemas']['Error'];

let api: LocalApi;

beforeAll(async () => {
  api = await startLocalApi();
});
afterAll(() => api.close());

describe('the typed client', () => {
  it('createPet answers 201 with the stored pet and its Location', async () => {
    const { data, error, response } = await api.client.POST('/pets', { body: { name: 'Typed Rex', categoryId: 4 } });
    expect(error).toBeUndefined();
    const pet: Pet | undefined = data;
    expect(pet).toMatchObject({ name: 'Typed Rex', categoryId: 4, status: 'available', id: expect.any(Number) });
    expect(response.status).toBe(201);
    expect(response.headers.get('location')).toBe(`${api.url}/pets/${pet?.id}`);
  });

  it('listPets pages with limit, status and the cursor from the Link header', async () => {
    for (let index = 0; index < 3; index += 1) {
      await api.client.POST('/pets', { body: { name: `sold ${index}`, categoryId: 1, status: 'sold' } });
    }
    const first = await api.client.GET('/pets', { params: { query: { status: 'sold', limit: 2 } } });
    expect(first.data).toHaveLength(2);
    const next = /<([^>]+)>; rel="next"/.exec(first.response.headers.get('link') ?? '')?.[1];
    const cursor = new URL(next ?? 'http://x').searchParams.get('cursor') ?? undefined;
    const second = await api.client.GET('/pets', { params: { query: { status: 'sold', limit: 2, cursor } } });
    expect(second.data?.map((pet) => pet.status)).toEqual(['sold']);
  });

  it('getPet answers the pet, with its deprecation headers', async () => {
    const created = await api.client.POST('/pets', { body: { name: 'Fetched', categoryId: 2, status: 'pending' } });
    const id = created.data?.id ?? 0;
    const { data, response } = await api.client.GET('/pets/{petId}', { params: { path: { petId: id } } });
    expect(data).toEqual({ id, name: 'Fetched', categoryId: 2, status: 'pending' });
    expect(response.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
  });

  it('types every error as the Error shape with a documented code', async () => {
    const cases: Array<Promise<{ error?: ApiError; response: Response }>> = [
      api.client.GET('/pets', { params: { query: { limit: 0 } } }),
      api.client.GET('/pets', { params: { query: { cursor: 'edited' } } }),
      api.client.GET('/pets/{petId}', { params: { path: { petId: 987654321 } } }),
      api.client.GET('/store/orders'),
      createClient<paths>({ baseUrl: api.url }).GET('/pets'),
    ];
    const answers = await Promise.all(cases);
    expect(answers.map(({ error, response }) => [response.status, error?.code])).toEqual([
      [400, 'validation_failed'],
      [400, 'invalid_cursor'],
      [404, 'not_found'],
      [501, 'not_implemented'],
      [401, 'unauthorized'],
    ]);
  });
});
