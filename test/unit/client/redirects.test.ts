/**
 * Redirects are not followed: the API never sends one, so a 3xx (a stray proxy's, a hijacked
 * address's) is answered as an error, and neither the key nor the body goes to its Location. Real
 * servers on this machine, with the global fetch: what a client of the package gets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PetStore, PetStoreError } from '../../../client/src/index';
import { startStrayServer as serve, stopStrayServers } from '../../support/stray-servers';

const API_KEY = 'petstore_unit-test-key-0123456789abcdef';

afterEach(stopStrayServers);

/** The API's address answering every request `status` with a Location on `target`, same origin or not. */
const redirecting = async (status: number, target: (origin: string) => string) => {
  const other = await serve(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: '[]' }));
  const api = await serve((request) => ({
    status,
    headers: { location: `${target(other.origin)}${request.url}`, 'content-type': 'text/plain' },
    body: 'Moved',
  }));
  // A same-origin redirect goes to a path of the API's own server: count what reaches it there.
  return { store: new PetStore({ baseUrl: `${api.origin}/v1`, apiKey: API_KEY, maxRetries: 0 }), api, other };
};

describe('a redirect', () => {
  it.each([301, 302, 307, 308])('%i to another host is answered as it is, never followed', async (status) => {
    const { store, api, other } = await redirecting(status, (origin) => origin);

    const { response, error, text } = await store.raw({ path: '/pets' });

    expect(response.status).toBe(status);
    expect(response.headers.get('location')).toBe(`${other.origin}/v1/pets`);
    expect(text).toBe('Moved');
    expect(error).toBeInstanceOf(PetStoreError);
    expect(error).toMatchObject({ status, code: 'request_refused' });
    expect(api.received).toHaveLength(1);
    expect(other.received).toEqual([]);
  });

  it('of a create is an error, and the pet and key go nowhere else, not even to the same host', async () => {
    const { store, api } = await redirecting(307, () => '/elsewhere');

    await expect(store.pets.create({ name: 'Rex', categoryId: 1 })).rejects.toMatchObject({ status: 307, operation: 'createPet' });

    expect(api.received.map(({ method, url }) => `${method} ${url}`)).toEqual(['POST /v1/pets']);
  });

  it('of a listing is an error, not an empty page', async () => {
    const { store, other } = await redirecting(302, (origin) => origin);

    await expect(store.pets.list()).rejects.toMatchObject({ status: 302, operation: 'listPets' });
    expect(other.received).toEqual([]);
  });
});
