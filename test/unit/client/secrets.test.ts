/**
 * The API key is sent, and nowhere else: not in any error's message, fields or cause (as
 * JSON.stringify, Object.keys and util.inspect see them), not in the client's own fields, and
 * never logged: the client writes nothing to the console.
 */
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PetStore, PetStoreNetworkError } from '../../../client/src/index';
import { errorAnswer, fakeTime, scriptedFetch, type Scripted } from '../../support/fake-fetch';

const API_KEY = 'petstore_Sh0uldNeverBeSeen-anywhere_0123456789';
const SECRET_PART = 'Sh0uldNeverBeSeen';

/** Every way a value could be looked at: its JSON, its own keys and values, and util.inspect at any depth. */
const views = (value: unknown): string[] => [
  JSON.stringify(value) ?? '',
  JSON.stringify(Object.entries(value as object)),
  inspect(value, { depth: Infinity, showHidden: true, getters: true }),
  String(value),
];

const consoleSpies = () => (['log', 'info', 'warn', 'error', 'debug', 'trace'] as const).map((method) => vi.spyOn(console, method));
afterEach(() => {
  vi.restoreAllMocks();
});

const failureOf = async (script: Scripted[], call: (store: PetStore) => Promise<unknown>) => {
  const { fetch, sent } = scriptedFetch(...script);
  const time = fakeTime();
  const store = new PetStore({
    baseUrl: 'https://api.example.test/v1',
    apiKey: API_KEY,
    fetch,
    sleep: time.sleep,
    now: time.now,
    timeoutMs: 20,
  });
  const error = await call(store).catch((caught: unknown) => caught);
  return { store, error, sent };
};

describe('the API key', () => {
  it('is sent as a bearer token, on every attempt', async () => {
    const { sent } = await failureOf([errorAnswer(503, 'service_unavailable'), { status: 200, body: [] }], (store) => store.pets.list());
    expect(sent.map((request) => request.headers.get('authorization'))).toEqual([`Bearer ${API_KEY}`, `Bearer ${API_KEY}`]);
  });

  it.each<[string, Scripted[], (store: PetStore) => Promise<unknown>]>([
    ['an error answer', [errorAnswer(401, 'unauthorized')], (store) => store.pets.list()],
    [
      'quota_exceeded',
      [errorAnswer(429, 'quota_exceeded', { 'Retry-After': '3600' })],
      (store) => store.pets.create({ name: 'Rex', categoryId: 1 }),
    ],
    ['a dropped connection', ['drop'], (store) => store.pets.get(1)],
    ['a timeout', ['hang'], (store) => store.pets.list()],
    ['an answer that is not JSON', [{ status: 502, body: 'Bad gateway' }], (store) => store.pets.list()],
  ])('is in no part of the error for %s, and nothing is logged', async (_, script, call) => {
    const spies = consoleSpies();
    const { store, error } = await failureOf(script, call);
    expect(error).toBeInstanceOf(Error);
    for (const view of [...views(error), ...views(store)]) expect(view).not.toContain(SECRET_PART);
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  it('is in no part of a real fetch failure (a refused connection), cause included', async () => {
    // A port just freed: nothing listens on it.
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    server.close();
    await once(server, 'close');
    const store = new PetStore({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: API_KEY, maxRetries: 0 });
    const error = await store.pets.list().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PetStoreNetworkError);
    expect(error).toMatchObject({ mayHaveReachedServer: false });
    for (const view of views(error)) expect(view).not.toContain(SECRET_PART);
  });

  it("is not among the client's fields, enumerable or not", () => {
    const store = new PetStore({ baseUrl: 'https://api.example.test/v1', apiKey: API_KEY });
    // Whatever groups of operations it has: no field is hidden, and none holds the key (the views below).
    expect(Object.getOwnPropertyNames(store)).toEqual(Object.keys(store));
    expect(Object.keys(store).filter((field) => /key|secret|token|auth/i.test(field))).toEqual([]);
    for (const view of views(store)) expect(view).not.toContain(SECRET_PART);
  });

  it('is refused without being quoted when it could not be sent as a bearer token', () => {
    const bad = `${API_KEY}\n`;
    expect(() => new PetStore({ baseUrl: 'https://api.example.test/v1', apiKey: bad })).toThrow(
      'PetStore: apiKey is missing or not a bearer token',
    );
  });
});
