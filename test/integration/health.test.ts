/**
 * GET /health on DynamoDB Local: 200 `{"status":"ok"}` while both tables answer, and a 503 in the
 * Error shape with Retry-After when either cannot be read, which says nothing of why.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../functions/health';
import { databaseHealth, PROBE_KEYS } from '../../shared/database-health';
import { errorCatalogue } from '../../shared/errors';
import { operationEvent, context } from '../support/events';
import { createTestTables, type TestTables } from '../support/tables';

let tables: TestTables;
beforeAll(async () => {
  tables = await createTestTables();
});

const healthOn = (names: Pick<TestTables, 'pets' | 'apiKeys'>) =>
  createHandler({ health: databaseHealth({ client: tables.client, tables: names }) })(operationEvent('getHealth'), context);

describe('GET /health', () => {
  it('answers 200 {"status":"ok"} and nothing more while both tables can be read', async () => {
    const response = await healthOn(tables);
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('{"status":"ok"}');
    expect(response.headers).toMatchObject({ 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  });

  it('reads nothing of an item even if one had its probe key: the answer is the same', async () => {
    await tables.client.send(new PutCommand({ TableName: tables.pets, Item: { ...PROBE_KEYS.pets, name: 'not-a-pet' } }));
    expect((await healthOn(tables)).body).toBe('{"status":"ok"}');
  });

  it.each([
    ['the pets table', (names: TestTables) => ({ pets: `${names.pets}-missing`, apiKeys: names.apiKeys })],
    ['the keys table', (names: TestTables) => ({ pets: names.pets, apiKeys: `${names.apiKeys}-missing` })],
  ])('answers 503 with Retry-After, naming no table, when %s cannot be read', async (_which, broken) => {
    const names = broken(tables);
    const response = await healthOn(names);
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['Retry-After']).toBe(errorCatalogue.service_unavailable.headers['Retry-After']);
    expect(JSON.parse(response.body)).toEqual({
      code: 'service_unavailable',
      message: errorCatalogue.service_unavailable.message,
      status: 503,
    });
    for (const name of [names.pets, names.apiKeys, 'ResourceNotFound']) expect(response.body).not.toContain(name);
  });
});
