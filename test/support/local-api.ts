/** A local server on fresh tables, with a registered key, for end-to-end tests over HTTP. */
import { expect } from 'vitest';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { generateApiKey } from '../../shared/api-keys';
import { apiKeysRepository, type ApiKeysRepository } from '../../shared/api-keys-repository';
import { createDocumentClient } from '../../shared/dynamodb';
import { startLocalServer, type LocalServerOptions } from '../../tools/local-server/server';
import { createTestTables } from './tables';

export interface LocalApi {
  readonly url: string;
  readonly key: string;
  readonly keys: ApiKeysRepository;
  readonly tables: { readonly pets: string; readonly apiKeys: string };
  /** fetch below the base URL, with the key unless `auth: false` or other headers are given. */
  call(path: string, init?: RequestInit & { auth?: boolean }): Promise<Response>;
  close(): Promise<void>;
}

export type LocalApiOptions = Omit<LocalServerOptions, 'client' | 'petsTable' | 'apiKeysTable' | 'port'> & {
  /** The DynamoDB the handlers use, when not the run's DynamoDB Local (e.g. a fault proxy). */
  readonly endpoint?: string;
  readonly client?: DynamoDBDocumentClient;
};

export const startLocalApi = async (options: LocalApiOptions = {}): Promise<LocalApi> => {
  const tables = await createTestTables();
  const key = generateApiKey();
  const keys = apiKeysRepository({ client: tables.client, tableName: tables.apiKeys });
  await keys.register(key, 'test');
  const client = options.client ?? (options.endpoint ? createDocumentClient({ endpoint: options.endpoint }) : tables.client);
  const server = await startLocalServer({
    ...options,
    client,
    port: 0,
    petsTable: tables.pets,
    apiKeysTable: tables.apiKeys,
  });
  const call = (path: string, { auth = true, headers, ...init }: RequestInit & { auth?: boolean } = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: { ...(auth ? { Authorization: `Bearer ${key}` } : {}), ...(headers as Record<string, string>) },
    });
  return { url: server.url, key, keys, tables: { pets: tables.pets, apiKeys: tables.apiKeys }, call, close: server.close };
};

export const postPet = (api: LocalApi, pet: unknown) =>
  api.call('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(pet) });

/** Checks the Error shape whole (code, status equal to the HTTP status, a message, JSON) and returns the body. */
export const expectError = async (response: Response, status: number, code: string) => {
  const body = (await response.json()) as { code: string; message: string; status: number };
  expect({ status: response.status, body }).toEqual({ status, body: { code, status, message: expect.any(String) } });
  expect(response.headers.get('content-type')).toBe('application/json');
  expect(body.message.length).toBeGreaterThan(0);
  return body;
};
