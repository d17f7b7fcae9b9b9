/**
 * A stage in several regions, locally: one local server per region of the `global` stage, each
 * `npm start` in a process of its own with the environment a region's functions get (AWS_REGION,
 * REGION_INDEX, HOME_REGION, STAGE_REGIONS), each on its own copies of the eventually consistent tables (pets,
 * api-keys, api-key-last-use) in the run's DynamoDB Local, reached through a fault proxy of its
 * own so that a test can take one region's database down. The idempotency table is one table for
 * all of them: it stands for the strongly consistent (MRSC) global table, which every region reads
 * at once. The stream replication fixture (replication.ts) copies the other tables between regions.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import packageJson from '../../package.json' with { type: 'json' };
import { STRONGLY_CONSISTENT_TABLES } from '../../infra/constructs/tables';
import { stages } from '../../infra/stages';
import { generateApiKey } from '../../shared/api-keys';
import { apiKeysRepository } from '../../shared/api-keys-repository';
import { REGION_INDEX_VARIABLE } from '../../shared/ids';
import { DEFAULT_PLAN, PLANS_FILE_VARIABLE } from '../../shared/plans';
import { projectRoot } from '../../shared/project-root';
import { TABLE_KEYS, createTableInput, tableDefinitions, tableNamesOf, type TableNames } from '../../shared/tables';
import { ensureTables, LOCAL_TOOL_REQUEST_TIMEOUT_MS } from '../../tools/dynamodb-local';
import { readLocalAuditTrail } from '../../tools/local-server/key-audit-log';
import { localUsageKey, ROOMY_PLANS } from '../../tools/local-server/usage-plans';
import { CreateTableCommand, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import { startFaultProxy, type FaultProxy } from './fault-proxy';
import { writePlansFile } from './plans-file';
import { startReplication, type Replication } from './replication';
import { databaseClient } from './database';

/** The regions of the stage that runs in several, in its order: the first is its home. */
export const STAGE_REGIONS: readonly string[] = stages.global?.regions ?? [];

/** The tables each region has a copy of (MREC); the strongly consistent ones are one table for every region. */
const REGIONAL_TABLES = TABLE_KEYS.filter((table) => !STRONGLY_CONSISTENT_TABLES.has(table));

export interface LocalRegion {
  /** The AWS region it stands for. */
  readonly name: string;
  /** Its position in the stage's regions: the REGION_INDEX its pet ids carry. */
  readonly index: number;
  /** Base URL of its API, ending in /v1. */
  readonly url: string;
  readonly tables: TableNames;
  /** Between its server and the database: `inject` a fault to take its database down. */
  readonly proxy: FaultProxy;
  /** fetch below its base URL, with `key` as the bearer key (the regions' shared key by default; null: none). */
  call(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  /** Its audit trail of key changes (the local audit log), one key's lines when `keyId` is given. */
  auditTrail(keyId?: string): ReturnType<typeof readLocalAuditTrail>;
}

export interface LocalRegions {
  readonly regions: readonly LocalRegion[];
  /** The home region, where keys are written. */
  readonly home: LocalRegion;
  /** A key registered in the home region before the servers started, replicated to every region. */
  readonly key: string;
  readonly replication: Replication;
  /** A client on the DynamoDB Local holding every region's tables. */
  readonly client: DynamoDBDocumentClient;
  readonly endpoint: string;
  stop(): Promise<void>;
}

export interface LocalRegionsOptions {
  /** Milliseconds a change takes to reach the other regions' copies (after it is read from its stream). */
  readonly replicationDelayMs: number;
}

/** The tables of one region: its own copies, and the one table of each strongly consistent one. */
const regionTables = (suffix: string, region: string): TableNames =>
  tableNamesOf(({ defaultName }, table) =>
    STRONGLY_CONSISTENT_TABLES.has(table) ? `${defaultName}-${suffix}` : `${defaultName}-${suffix}-${region}`,
  );

/** A region's copies with their streams on, as a global table's replicas have them, for the replication fixture to read. */
const createRegionalCopies = async (client: DynamoDBDocumentClient, tables: TableNames) => {
  for (const table of REGIONAL_TABLES) {
    await client.send(
      new CreateTableCommand({
        ...createTableInput(tableDefinitions[table], tables[table]),
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
      }),
    );
    await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: tables[table] });
  }
};

/** The start script without npm: `node <flags> tools/local-server/main.ts`. */
const [, ...startNodeArgs] = (packageJson.scripts.start as string).split(' ');
const STARTED = /^Pet store API: (\S+)$/m;
const START_TIMEOUT_MS = 60_000;

/** `npm start` with `env`; resolves with the URL its banner prints. */
const startServer = async (env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> => {
  const child = spawn(process.execPath, startNodeArgs, {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`npm start did not serve within ${START_TIMEOUT_MS} ms:\n${output}`)),
      START_TIMEOUT_MS,
    );
    const check = () => {
      const found = STARTED.exec(output)?.[1];
      if (found === undefined) return;
      clearTimeout(timer);
      child.stdout.off('data', check);
      resolve(found);
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start ended (${code}) before serving:\n${output}`));
    });
  });
  // Its lines are not read any more: keep the pipes from filling.
  child.stdout.resume();
  child.stderr.resume();
  return { child, url };
};

const stopServer = async (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
};

export const startLocalRegions = async ({ replicationDelayMs }: LocalRegionsOptions): Promise<LocalRegions> => {
  const endpoint = inject('dynamodbEndpoint');
  const client = databaseClient({ endpoint, requestTimeout: LOCAL_TOOL_REQUEST_TIMEOUT_MS });
  const suffix = randomUUID().slice(0, 8);
  const [homeName] = STAGE_REGIONS;
  if (homeName === undefined || STAGE_REGIONS.length < 2) throw new Error('The global stage lists no regions (infra/stages.ts).');
  const tablesOf = new Map(STAGE_REGIONS.map((name) => [name, regionTables(suffix, name)]));
  const plansFile = writePlansFile(ROOMY_PLANS);
  const proxies: FaultProxy[] = [];
  const children: ChildProcess[] = [];
  let replication: Replication | undefined;
  const stop = async () => {
    await Promise.all(children.map(stopServer));
    await replication?.stop();
    await Promise.all(proxies.map((proxy) => proxy.close()));
    plansFile.remove();
    client.destroy();
  };
  try {
    // The strongly consistent tables: one of each, every region's (any region's names hold them).
    const shared = tablesOf.get(homeName) as TableNames;
    await ensureTables(
      client,
      [...STRONGLY_CONSISTENT_TABLES].map((table) => ({ definition: tableDefinitions[table], name: shared[table] })),
    );
    await Promise.all([...tablesOf.values()].map((tables) => createRegionalCopies(client, tables)));
    replication = await startReplication({
      client,
      tables: REGIONAL_TABLES.map((table) => Object.fromEntries([...tablesOf].map(([name, tables]) => [name, tables[table]]))),
      delayMs: replicationDelayMs,
    });

    // The servers' key is written in the home region only, and reaches the others as any key does.
    const key = generateApiKey();
    const homeTables = tablesOf.get(homeName) as TableNames;
    await apiKeysRepository({ client, tables: homeTables }).register(key, 'local', {
      changedBy: 'local:test',
      plan: DEFAULT_PLAN,
      usage: localUsageKey(),
    });
    await replication.settled();

    const regions = await Promise.all(
      STAGE_REGIONS.map(async (name, index): Promise<LocalRegion> => {
        const tables = tablesOf.get(name) as TableNames;
        const proxy = await startFaultProxy(endpoint);
        proxies.push(proxy);
        const { child, url } = await startServer({
          PORT: '0',
          DYNAMODB_ENDPOINT: proxy.endpoint,
          AWS_REGION: name,
          HOME_REGION: homeName,
          // A change stamped with none of these (an edit by hand) is the home region's to record.
          STAGE_REGIONS: STAGE_REGIONS.join(','),
          [REGION_INDEX_VARIABLE]: String(index),
          API_KEY: key,
          // Each health request reads the tables: a test sees a region's database go down, and come back, at once.
          HEALTH_REUSE_SECONDS: '0',
          [PLANS_FILE_VARIABLE]: plansFile.path,
          ...Object.fromEntries(
            Object.entries(tableDefinitions).map(([table, definition]) => [definition.nameVariable, tables[table as keyof TableNames]]),
          ),
        }).then((started) => {
          children.push(started.child);
          return started;
        });
        return {
          name,
          index,
          url,
          tables,
          proxy,
          call: (path, { key: bearer = key, headers, ...init } = {}) =>
            fetch(`${url}${path}`, {
              ...init,
              headers: { ...(bearer === null ? {} : { Authorization: `Bearer ${bearer}` }), ...(headers as Record<string, string>) },
            }),
          auditTrail: (keyId) => readLocalAuditTrail(client, tables.apiKeys, keyId),
        };
      }),
    );
    return { regions, home: regions[0] as LocalRegion, key, replication, client, endpoint, stop };
  } catch (error) {
    await stop();
    throw error;
  }
};
