/** A local server on fresh tables, with a registered key, for end-to-end tests over HTTP. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import createClient, { type Client } from 'openapi-fetch';
import { expect, inject } from 'vitest';
import { PetStore, type AllOptions, type ListOptions, type Page, type Pet, type PetStoreOptions } from '../../client/src/index';
import { generateApiKey } from '../../shared/api-keys';
import type { ApiKeysRepository } from '../../shared/api-keys-repository';
import type { TableNames } from '../../shared/tables';
import { localUsageKey } from '../../tools/local-server/usage-plans';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../tools/local-server/local-stack';
import { startLocalServer } from '../../tools/local-server/server';
import type { components, paths } from '../../generated/openapi-types';
import { functionsClient } from './database';
import { freshTableNames } from './tables';
import { ROOMY_PLANS } from '../../tools/local-server/usage-plans';

export { inParallel, linkOf } from '../../tools/requests';

/** A body of POST /pets, typed from openapi.json. */
export type NewPetBody = components['schemas']['NewPet'];

export interface LocalApi {
  readonly url: string;
  readonly key: string;
  readonly keys: ApiKeysRepository;
  readonly tables: TableNames;
  /** The audit trail, when started with `keyAudit`. */
  readonly keyAudit: LocalStack['keyAudit'];
  /** A client typed from openapi.json (openapi-fetch), sending the key. */
  readonly client: Client<paths>;
  /** The client library (client/) on this server with its key, with its default retries. */
  readonly petStore: PetStore;
  /** fetch below the base URL, with the key unless `auth: false` or other headers are given. */
  call(path: string, init?: RequestInit & { auth?: boolean }): Promise<Response>;
  close(): Promise<void>;
}

export type LocalApiOptions = NonNullable<LocalStackOptions['server']> & {
  /** The DynamoDB the server uses, when not the run's DynamoDB Local directly (e.g. a fault proxy). */
  readonly endpoint?: string;
  /** The client the server uses, when a test needs to watch or break its calls. */
  readonly client?: DynamoDBDocumentClient;
  /** The audit trail of key changes; off unless a test reads it. */
  readonly keyAudit?: LocalStackOptions['keyAudit'];
};

export { ROOMY_PLANS };

/**
 * How long a test waits for a key change to hold at the local gateway: the audit trail reads the
 * keys table's stream and drops the changed key's cached answers, within a second on a quiet
 * machine (deployed, the key-audit function's flush). A busy machine's DynamoDB Local answers those
 * reads later, and no test assumes its speed; the bound stays far below the authorizer cache's TTL
 * (300 s in these tests), so that only the flush can end a cached answer in time.
 */
export const CHANGE_HOLDS_WITHIN_MS = 30_000;

/** The local stack on the run's DynamoDB Local, on fresh tables, with a key of its own. */
export const startLocalApi = async ({
  endpoint,
  client: serverClient,
  keyAudit,
  // Plans that never shape a test's results, unless the test is about plans and names its own.
  plans = ROOMY_PLANS,
  ...server
}: LocalApiOptions = {}): Promise<LocalApi> => {
  const stack = await startLocalStack({
    dynamodbEndpoint: inject('dynamodbEndpoint'),
    tables: freshTableNames(),
    keyName: 'test',
    serverClient: serverClient ?? (endpoint ? functionsClient(endpoint) : undefined),
    server: { ...server, plans, port: 0 },
    keyAudit,
  });
  const { url, key } = stack;
  const call = (path: string, { auth = true, headers, ...init }: RequestInit & { auth?: boolean } = {}) =>
    fetch(`${url}${path}`, {
      ...init,
      headers: { ...(auth ? { Authorization: `Bearer ${key}` } : {}), ...(headers as Record<string, string>) },
    });
  const client = createClient<paths>({ baseUrl: url, headers: { Authorization: `Bearer ${key}` } });
  const petStore = new PetStore({ baseUrl: url, apiKey: key });
  return { url, key, keys: stack.keys, tables: stack.tables, keyAudit: stack.keyAudit, client, petStore, call, close: stack.stop };
};

/**
 * Registers a new key on `plan`, paired with a usage key of its own (a random value and a local
 * id, as the key tool pairs one locally), and returns the key.
 */
export const registerKeyOnPlan = async (api: LocalApi, plan: string, name = `on-${plan}`): Promise<string> => {
  const key = generateApiKey();
  await api.keys.register(key, name, {
    changedBy: 'local:test',
    plan,
    usage: localUsageKey(),
  });
  return key;
};

/** The client library on the server with another key than its own. */
export const petStoreWith = (api: LocalApi, key: string, options: Partial<PetStoreOptions> = {}) =>
  new PetStore({ baseUrl: api.url, apiKey: key, ...options });

/**
 * POST /pets through the client library (an Idempotency-Key only when given), answering
 * `{ response, body, error }` whatever the status: for tests of the answer's status and headers.
 */
export const createPetAnswer = (petStore: PetStore, pet: NewPetBody, idempotencyKey?: string) =>
  petStore.raw({ operation: 'createPet', method: 'POST', path: '/pets', body: pet, idempotencyKey });

/** GET below the base URL with another key than the server's own. */
export const getWith = (api: LocalApi, key: string, path = '/pets') => api.call(path, { headers: { Authorization: `Bearer ${key}` } });

/** A second server with the same keys whose pets table does not exist: every pet operation fails unexpectedly. */
export const startServerWithMissingPetsTable = (api: LocalApi, petsTable: string) =>
  startLocalServer({
    client: functionsClient(inject('dynamodbEndpoint')),
    port: 0,
    tables: { ...api.tables, pets: petsTable },
  });

/** POST /pets through the typed client; the test gets the answer unread (the client reads a copy). */
export const postPet = async (api: LocalApi, pet: NewPetBody): Promise<Response> => {
  let answer: Response | undefined;
  await api.client.POST('/pets', {
    body: pet,
    fetch: async (request: Request) => {
      answer = await fetch(request);
      return answer.clone();
    },
  });
  if (!answer) throw new Error('the client sent nothing');
  return answer;
};

/** POST /pets with any JSON at all, for the bodies the API must refuse. */
export const postJson = (api: LocalApi, body: unknown) =>
  api.call('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

/** Checks the Error shape whole (code, status equal to the HTTP status, a message, JSON) and returns the body. */
export const expectError = async (response: Response, status: number, code: string) => {
  const body = (await response.json()) as { code: string; message: string; status: number };
  expect({ status: response.status, body }).toEqual({ status, body: { code, status, message: expect.any(String) } });
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(body.message.length).toBeGreaterThan(0);
  return body;
};

/** The headers every answer carries, whoever sends it. */
export const expectCommonHeaders = (response: Response) => {
  // A success with no content has no type either.
  expect(response.headers.get('content-type')).toBe(response.status === 204 ? null : 'application/json');
  expect(response.headers.get('cache-control')).toBe('no-store');
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  // Like API Gateway, the local server puts the request id on every answer as x-amzn-RequestId;
  // the functions' answers (not the gateway's own) also carry it as X-Request-Id.
  const requestId = response.headers.get('x-amzn-requestid');
  expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
  const functionRequestId = response.headers.get('x-request-id');
  if (functionRequestId !== null) expect(functionRequestId).toBe(requestId);
};

/** Every page of a listing, through the client library's `next()` (Link rel="next"): each page's pets, in order. */
export const walkPages = async (api: LocalApi, query: Omit<ListOptions, 'signal'> = {}) => {
  const pages: Pet[][] = [];
  for (let page: Page | undefined = await api.petStore.pets.list(query); page; page = await page.next()) {
    pages.push(page.pets);
    if (pages.length > 1_000) throw new Error('pagination does not end');
  }
  return pages;
};

/** Every pet of a listing, through the client library's `all()`. */
export const allPets = async (api: LocalApi, options: Omit<AllOptions, 'signal'> = {}) => {
  const pets: Pet[] = [];
  for await (const pet of api.petStore.pets.all(options)) pets.push(pet);
  return pets;
};
