/**
 * CORS on the functions' own answers: a stage with allowed origins tells the functions through
 * CORS_ALLOWED_ORIGINS, and only those origins get Access-Control-Allow-Origin, errors included.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler as createListPets } from '../../functions/list-pets';
import { petsRepository, type PetsRepository } from '../../shared/pets-repository';
import { apiEvent, context } from '../support/events';
import { createTestTables } from '../support/tables';

const ORIGINS = 'https://app.example.com, https://admin.example.com';
let pets: PetsRepository;

beforeAll(async () => {
  const tables = await createTestTables();
  pets = petsRepository({ client: tables.client, tableName: tables.pets });
});
afterEach(() => {
  vi.unstubAllEnvs();
});

const listPets = (origin: string | undefined, query: Record<string, string> = {}) =>
  createListPets({ pets })(apiEvent({ query, headers: origin ? { Origin: origin } : {} }), context);

describe('CORS on function answers', () => {
  it('allows a listed origin, on success and on error, and exposes the paging and retry headers', async () => {
    vi.stubEnv('CORS_ALLOWED_ORIGINS', ORIGINS);
    const queries: Array<Record<string, string>> = [{}, { limit: '0' }];
    for (const query of queries) {
      const response = await listPets('https://admin.example.com', query);
      expect(response.headers).toMatchObject({
        'Access-Control-Allow-Origin': 'https://admin.example.com',
        Vary: 'Origin',
        'Access-Control-Expose-Headers': expect.stringMatching(/Link.*Location.*Retry-After.*X-Request-Id/),
      });
    }
  });

  it('says nothing to an origin that is not listed', async () => {
    vi.stubEnv('CORS_ALLOWED_ORIGINS', ORIGINS);
    const response = await listPets('https://evil.example.com');
    expect(response.statusCode).toBe(200);
    expect(response.headers).not.toHaveProperty('Access-Control-Allow-Origin');
  });

  it('adds no CORS header at all when the stage allows no origin (the default)', async () => {
    const response = await listPets('https://app.example.com');
    expect(Object.keys(response.headers ?? {}).filter((name) => name.startsWith('Access-Control'))).toEqual([]);
  });
});
