/** DynamoDB Local as the project starts it: in memory or persisted, without telemetry, and stopped cleanly. */
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { apiKeysTable, petsTable } from '../../shared/tables';
import { ensureTables, freePort, isListening, startDynamoDBLocal } from '../../tools/dynamodb-local';
import { databaseClient } from '../support/database';

describe('startDynamoDBLocal', { timeout: 90_000 }, () => {
  it('runs without telemetry, answers, creates the tables once, and stops', async () => {
    const database = await startDynamoDBLocal({ port: 0 });
    const port = Number(new URL(database.endpoint).port);
    try {
      const commandLine = readFileSync(`/proc/${database.pid}/cmdline`, 'utf8').split('\0');
      expect(commandLine).toEqual(expect.arrayContaining(['-disableTelemetry', '-inMemory', '-sharedDb']));
      const client = databaseClient({ endpoint: database.endpoint });
      const tables = [
        { definition: petsTable, name: 'pets' },
        { definition: apiKeysTable, name: 'api-keys' },
      ];
      await ensureTables(client, tables);
      await ensureTables(client, tables); // a second time finds them and changes nothing
      expect((await client.send(new ListTablesCommand({}))).TableNames?.sort()).toEqual(['api-keys', 'pets']);
    } finally {
      await database.stop();
    }
    expect(await isListening(port)).toBe(false);
  });

  it('keeps its data in the --persist folder', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'ddb-local-'));
    try {
      const database = await startDynamoDBLocal({ port: 0, persistDir: folder });
      try {
        await ensureTables(databaseClient({ endpoint: database.endpoint }), [{ definition: petsTable, name: 'pets' }]);
      } finally {
        await database.stop();
      }
      expect(readdirSync(folder).some((name) => name.endsWith('.db'))).toBe(true);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('says in one line that it needs Java when there is none on the PATH, and leaves nothing running', async () => {
    const path = process.env.PATH;
    const port = await freePort();
    process.env.PATH = mkdtempSync(join(tmpdir(), 'no-java-'));
    try {
      await expect(startDynamoDBLocal({ port })).rejects.toThrow(/^DynamoDB Local needs Java 17 or newer on the PATH/);
    } finally {
      process.env.PATH = path;
    }
    expect(await isListening(port)).toBe(false);
  });

  it('says clearly when its port is taken', async () => {
    // Taken by the run's own DynamoDB Local: a second start here is what is under test, not the first.
    const port = Number(new URL(inject('dynamodbEndpoint')).port);
    await expect(startDynamoDBLocal({ port })).rejects.toThrow(`could not listen on port ${port}: it is in use`);
    expect(await isListening(port)).toBe(true);
  });
});
