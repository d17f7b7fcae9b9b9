/**
 * The API standing up locally, the one way every local tool does it: DynamoDB Local (started
 * here, unless a DynamoDB is named), the three tables, a registered API key, the local server,
 * and (when asked) the audit trail of key changes. `npm start`, `npm run load`, the benchmarks
 * and the end-to-end tests all start it here.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { generateApiKey } from '../../shared/api-keys';
import { apiKeysRepository, type ApiKeysRepository } from '../../shared/api-keys-repository';
import { dynamoDBTimeouts, tableNames } from '../../shared/config';
import { createDocumentClient } from '../../shared/dynamodb';
import type { TableNames } from '../../shared/tables';
import { DEFAULT_PLAN, meteringOf } from '../../shared/plan-policy';
import { localActor } from '../keys/caller';
import { localUsageKey } from './usage-plans';
import { startLocalUsageLog } from './usage-log';
import {
  ensureApiTables,
  LOCAL_TOOL_REQUEST_TIMEOUT_MS,
  startDynamoDBLocal,
  type DynamoDBLocal,
  type DynamoDBLocalOptions,
} from '../dynamodb-local';
import { stageAuthorizerCacheFlush } from '../../shared/authorizer-cache';
import { LOCAL_STAGE_ENV, localApiGateway } from './api-gateway';
import { startLocalKeyAudit, type LocalKeyAudit, type LocalKeyAuditOptions } from './key-audit-stream';
import { startLocalServer, type LocalServer, type LocalServerOptions } from './server';

export interface LocalStackOptions {
  /** A DynamoDB already running; without it, DynamoDB Local is started here, and stopped with the stack. */
  readonly dynamodbEndpoint?: string;
  /** The DynamoDB Local started here: its port (0 picks a free one; default 8000) and where it keeps data. */
  readonly dynamodbLocal?: Pick<DynamoDBLocalOptions, 'port' | 'persistDir'>;
  /** The tables, created where they do not exist yet; by default the configured names (PETS_TABLE_NAME, …). */
  readonly tables?: TableNames;
  /** The API key to register; by default a new one. */
  readonly apiKey?: string;
  /** The name the key is registered under. */
  readonly keyName: string;
  /** Revoke every other active key of that name: one such key works at a time (a persistent local database). */
  readonly revokeOtherKeysOfItsName?: boolean;
  /** The functions' client, when a caller watches or breaks their calls; by default the API's own settings on this DynamoDB. */
  readonly serverClient?: DynamoDBDocumentClient;
  /** The local server's settings (port 0 picks a free one). */
  readonly server?: Omit<LocalServerOptions, 'client' | 'tables' | 'usageLog' | 'dropChangedKeys'>;
  /** Run the audit trail of key changes (the keys table's stream, the expiry sweep); off by default. */
  readonly keyAudit?: boolean | LocalKeyAuditOptions;
  /**
   * The region this stack stands for: its writes of keys stamp it (`changedInRegion`), and its
   * audit trail records the changes stamped with it. By default its client's (AWS_REGION, else us-east-1).
   */
  readonly region?: string;
  /**
   * The home region of the stage it stands for, when that stage runs in several (each one a local
   * stack): the one whose trail records the changes no region stamped. None: a stage in one region.
   */
  readonly homeRegion?: string;
  /**
   * The regions of that stage, the home region first: its audit trail records a change stamped
   * with none of them in the home region, as deployed. None: a stage in one region.
   */
  readonly stageRegions?: readonly string[];
}

export interface LocalStack {
  /** Base URL of the API, ending in /v1. */
  readonly url: string;
  readonly port: number;
  readonly key: string;
  readonly keyId: string;
  /**
   * The plan the key is metered on: `default` for a new key; a kept one (`--persist`) may be on
   * another, or on none when its item was changed by hand (the authorizer then refuses it).
   */
  readonly keyPlan: string | undefined;
  /** Ids of the keys of the same name this start revoked (`revokeOtherKeysOfItsName`). */
  readonly replacedKeyIds: readonly string[];
  readonly keys: ApiKeysRepository;
  readonly tables: TableNames;
  /** The stack's own client on its DynamoDB (patient with DynamoDB Local), not the functions'. */
  readonly client: DynamoDBDocumentClient;
  readonly dynamodbEndpoint: string;
  /** The DynamoDB Local started here; undefined when `dynamodbEndpoint` was given. */
  readonly dynamodbLocal: DynamoDBLocal | undefined;
  /** The audit trail, when `keyAudit` asked for it. */
  readonly keyAudit: LocalKeyAudit | undefined;
  /** Stops the server, and the DynamoDB Local started here. */
  stop(): Promise<void>;
}

/** The key to register has been revoked in this database: it would never work. */
export class RevokedKeyError extends Error {
  constructor() {
    super('The API key to register has been revoked in this database: choose another.');
  }
}

export const startLocalStack = async ({
  dynamodbEndpoint,
  dynamodbLocal: localOptions,
  tables = tableNames(),
  apiKey = generateApiKey(),
  keyName,
  revokeOtherKeysOfItsName = false,
  serverClient,
  server: serverOptions = {},
  keyAudit: keyAuditOptions = false,
  region,
  homeRegion,
  stageRegions,
}: LocalStackOptions): Promise<LocalStack> => {
  const dynamodbLocal = dynamodbEndpoint === undefined ? await startDynamoDBLocal(localOptions) : undefined;
  const endpoint = dynamodbEndpoint ?? dynamodbLocal?.endpoint ?? '';
  // The stack's own calls wait for a busy DynamoDB Local; the functions keep the API's timeouts and
  // retry, or the timeout DYNAMODB_TIMEOUT_MS gives them, as it would a deployed function.
  const client = createDocumentClient({ endpoint, requestTimeout: LOCAL_TOOL_REQUEST_TIMEOUT_MS });
  const functionsClient = serverClient ?? createDocumentClient({ endpoint, ...dynamoDBTimeouts() });
  let server: LocalServer | undefined;
  let keyAudit: LocalKeyAudit | undefined;
  const stop = async () => {
    await server?.close();
    await keyAudit?.stop();
    client.destroy();
    if (functionsClient !== serverClient) functionsClient.destroy();
    await dynamodbLocal?.stop();
  };
  try {
    await ensureApiTables(client, tables);
    const keys = apiKeysRepository({ client, tables, ...(region === undefined ? {} : { region }) });
    if (keyAuditOptions !== false) {
      // The key-audit function's own flush of its stage (shared/authorizer-cache.ts), on the local
      // gateway's stand-in for API Gateway: nothing is cached before the server starts.
      const flushAuthorizerCache = stageAuthorizerCacheFlush(LOCAL_STAGE_ENV, () => localApiGateway(() => server?.flushAuthorizerCache()));
      keyAudit = await startLocalKeyAudit(
        { client, keysTableName: tables.apiKeys, keys, region, homeRegion, stageRegions, flushAuthorizerCache },
        keyAuditOptions === true ? {} : keyAuditOptions,
      );
    }
    const changedBy = localActor();
    // A key registered before (a persistent database) finds its record again: reused, not registered twice.
    // A new key is on the default plan with a usage key of its own, as the key tool makes one.
    const record = await keys.register(apiKey, keyName, { changedBy, plan: DEFAULT_PLAN, usage: localUsageKey() });
    if (record.revokedAt) throw new RevokedKeyError();
    const replacedKeyIds = revokeOtherKeysOfItsName ? await keys.revokeOthersNamed(keyName, record.keyId, changedBy) : [];
    // Each key's use per day, for npm run keys -- usage: written with the stack's own client, which no test breaks.
    const usageLog = await startLocalUsageLog(client, tables.apiKeys);
    server = await startLocalServer({
      ...serverOptions,
      client: functionsClient,
      tables,
      usageLog,
      // One region of several: deployed, a region's cached answers go only when its key-audit
      // function, reading its replica's stream, flushes the stage (functions/key-audit.ts); the
      // key tool's flush can come before the change has replicated there. The gateway's own drop
      // per key would refuse a revoked key whatever the audit does, and so hide a fault of that
      // path: here the audit's flush alone drops answers (and with no audit trail, nothing does
      // before the TTL, as deployed with no audit function). One region: the drop per key stays,
      // within a quarter of a second, quicker than the audit's read each second.
      dropChangedKeys: homeRegion === undefined,
    });
    const metering = meteringOf(record);
    return {
      url: server.url,
      port: server.port,
      key: apiKey,
      keyId: record.keyId,
      keyPlan: 'plan' in metering ? metering.plan : undefined,
      replacedKeyIds,
      keys,
      tables,
      client,
      dynamodbEndpoint: endpoint,
      dynamodbLocal,
      keyAudit,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
};
