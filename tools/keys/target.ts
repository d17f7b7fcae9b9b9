/**
 * Where the key tool works: the local server's DynamoDB (the default), another DynamoDB endpoint,
 * a keys table on AWS by name, or a deployed stage's keys table. Every command of `npm run keys`
 * resolves its target here, from the same options.
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { homeRegionOf, stageSettings } from '../../infra/stages';
import { apiKeyLastUseTableName, apiKeysTableName } from '../../shared/config';
import { createDocumentClient, DatabaseUnavailable } from '../../shared/dynamodb';
import { stackName, stackOutputs } from '../../shared/stack';
import { UsageError } from '../cli';
import { DEFAULT_DYNAMODB_LOCAL_PORT, dynamoDBLocalEndpoint, operatorToolTimeouts } from '../dynamodb-local';
import { ACCESS_DENIED, awsErrorName, stageOutputs, type CloudFormationLookup } from '../stack-outputs';

export const KEYS_HELP = 'npm run keys -- --help';

/** The target options, as parseArgs declares them; every command accepts them. */
export const TARGET_OPTIONS = {
  endpoint: { type: 'string' },
  stage: { type: 'string' },
  table: { type: 'string' },
  region: { type: 'string' },
} as const;

export const TARGET_USAGE = `TARGET (default: the local server's DynamoDB: $DYNAMODB_ENDPOINT, else DynamoDB Local on
$DYNAMODB_LOCAL_PORT, else on port ${DEFAULT_DYNAMODB_LOCAL_PORT}, as npm start uses them):
  --endpoint URL    a DynamoDB endpoint, such as DynamoDB Local on another port
  --table NAME      the keys table's name: on AWS, or at --endpoint when given
                    (default: $API_KEYS_TABLE_NAME or api-keys); the keys' last use is read
                    from $API_KEY_LAST_USE_TABLE_NAME (default: api-key-last-use)
  --stage STAGE     a deployed stage: the keys and last-use tables and usage plans named by stack
                    ${stackName('STAGE')}'s outputs (plans on AWS need it)
  --region REGION   the AWS region of --stage or --table (default: from the AWS environment); a stage
                    in several regions (infra/stages.ts) is written in its home region, its
                    first, and reached in every region (its stack ${stackName('STAGE')} in each)`;

export interface TargetOptions {
  readonly endpoint?: string;
  readonly stage?: string;
  readonly table?: string;
  readonly region?: string;
}

export interface KeysTarget {
  /** A client on the target's DynamoDB; the caller destroys it when done. */
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** The keys' last-use table there (shared/tables.ts apiKeyLastUseTable). */
  readonly lastUseTableName: string;
  /** On AWS (--stage, or --table without --endpoint), with the AWS credentials of the environment. */
  readonly onAws: boolean;
  /** The DynamoDB endpoint when not on AWS. */
  readonly endpoint?: string;
  /** --region, when given. */
  readonly region?: string;
  /** --stage, when given. */
  readonly stage?: string;
  /** The outputs of the stage's stack, by name, when --stage is given (in --region, for a stage in several regions). */
  readonly stackOutputs?: Readonly<Record<string, string>>;
  /**
   * A stage in several regions: each of its regions, the home region first, where the keys are
   * written. Undefined for a stage in one region, and off a stage.
   */
  readonly stageRegions?: readonly StageRegion[];
}

/** One region of a stage in several regions, and its stack's outputs there, read when first asked. */
export interface StageRegion {
  readonly region: string;
  /** Its stack's outputs (one line, naming the region, when they cannot be read). */
  outputs(): Promise<Readonly<Record<string, string>>>;
}

/** How the tool reaches a region's CloudFormation; the SDK's own client of that region when absent. */
export type CloudFormationIn = (region: string) => CloudFormationLookup;

/** The other regions' outputs are read when a command needs them, once, each failure in one line that names its region. */
const stageRegionsOf = (
  stage: string,
  regions: readonly string[],
  known: { readonly region: string; readonly outputs: Readonly<Record<string, string>> },
  cloudFormationIn: CloudFormationIn,
): StageRegion[] =>
  regions.map((region) => {
    let read: Promise<Record<string, string>> | undefined;
    return {
      region,
      outputs: () =>
        region === known.region
          ? Promise.resolve(known.outputs)
          : (read ??= stageOutputs(stage, cloudFormationIn(region)).catch((error: unknown) => {
              throw new Error(`In ${region}: ${error instanceof Error ? error.message : String(error)}`);
            })),
    };
  });

/**
 * The region a stage in several regions is reached in: its home region for a command that writes
 * (the keys are written there only; a write in a replica could be overwritten by one made at
 * home), and for a read the region asked, whose replica it reads.
 */
const regionOfStage = (stage: string, regions: readonly string[], home: string, asked: string | undefined, writes: boolean): string => {
  if (asked === undefined) return home;
  if (!regions.includes(asked)) {
    throw new UsageError(`Stage ${stage} runs in ${regions.join(', ')}, not in ${asked}: leave out --region (its home region is ${home}).`);
  }
  if (writes && asked !== home) {
    throw new UsageError(
      `Stage ${stage} writes its keys in its home region, ${home}, not in ${asked}: leave out --region (or give --region ${home}).`,
    );
  }
  return asked;
};

const tableOutputOf = (stage: string, outputs: Readonly<Record<string, string>>, output: string): string => {
  const table = outputs[output];
  if (table === undefined) throw new Error(`Stack ${stackName(stage)} has no ${output} output.`);
  return table;
};
const keysTableOf = (stage: string, outputs: Readonly<Record<string, string>>): string =>
  tableOutputOf(stage, outputs, stackOutputs.apiKeysTableName);

/** The keys table of a deployed stage, from its stack's outputs. */
export const stageKeysTable = async (stage: string, cloudFormation: CloudFormationLookup): Promise<string> =>
  keysTableOf(stage, await stageOutputs(stage, cloudFormation));

/** The port of the local server's DynamoDB Local, from the same setting npm start reads. */
const localPort = (env: Readonly<Record<string, string | undefined>>): number => {
  const value = env.DYNAMODB_LOCAL_PORT;
  if (value === undefined || value === '') return DEFAULT_DYNAMODB_LOCAL_PORT;
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!(port >= 1 && port <= 65_535)) {
    throw new UsageError(`DYNAMODB_LOCAL_PORT must be the port npm start printed for DynamoDB Local, from 1 to 65535: see ${KEYS_HELP}`);
  }
  return port;
};

/** How a command reaches AWS: for a stage in one region, `cloudFormation`; in several, `cloudFormationIn` each region. */
export interface TargetClients {
  /** Finds a stage's table (built from --region when absent). */
  readonly cloudFormation?: CloudFormationLookup;
  /** A stage in several regions: each region's CloudFormation (the SDK's client of that region when absent). */
  readonly cloudFormationIn?: CloudFormationIn;
  /** Whether the command writes the keys table (a stage in several regions is then reached in its home region only). */
  readonly writes?: boolean;
}

/** The target the options name; `clients` find a stage's table. */
export const resolveKeysTarget = async (
  options: TargetOptions,
  env: Readonly<Record<string, string | undefined>>,
  clients: TargetClients = {},
): Promise<KeysTarget> => {
  const { endpoint: endpointOption, stage, table } = options;
  if (stage !== undefined && (endpointOption !== undefined || table !== undefined)) {
    throw new UsageError('--stage finds its own table on AWS: it cannot be combined with --endpoint or --table.');
  }
  const settings = stage === undefined ? undefined : stageSettings(stage);
  const home = settings && homeRegionOf(settings);
  const regions = settings?.regions ?? [];
  const region =
    stage !== undefined && home !== undefined
      ? regionOfStage(stage, regions, home, options.region, clients.writes ?? false)
      : options.region;
  const cloudFormationIn: CloudFormationIn = clients.cloudFormationIn ?? ((other) => new CloudFormationClient({ region: other }));
  const cloudFormation = home === undefined ? clients.cloudFormation : cloudFormationIn(region ?? home);
  // --stage, and --table without --endpoint, mean AWS; anything else a DynamoDB endpoint.
  const onAws = stage !== undefined || (table !== undefined && endpointOption === undefined);
  const endpoint = onAws ? undefined : (endpointOption ?? env.DYNAMODB_ENDPOINT ?? dynamoDBLocalEndpoint(localPort(env)));
  const outputs = stage === undefined ? undefined : await stageOutputs(stage, cloudFormation ?? new CloudFormationClient({ region }));
  const stageRegions =
    stage === undefined || outputs === undefined || home === undefined
      ? undefined
      : stageRegionsOf(stage, regions, { region: region ?? home, outputs }, cloudFormationIn);
  const ofStage = stage !== undefined && outputs !== undefined;
  const tableName = table ?? (ofStage ? keysTableOf(stage, outputs) : apiKeysTableName(env));
  const lastUseTableName = ofStage ? tableOutputOf(stage, outputs, stackOutputs.apiKeyLastUseTableName) : apiKeyLastUseTableName(env);
  const client = createDocumentClient({ endpoint, region, ...operatorToolTimeouts(env) });
  return { client, tableName, lastUseTableName, onAws, endpoint, region, stage, stackOutputs: outputs, stageRegions };
};

/** The one line for a target whose DynamoDB did not answer. */
const unreachableTarget = (target: KeysTarget, error: DatabaseUnavailable): Error =>
  new Error(
    target.endpoint === undefined
      ? `DynamoDB did not answer (${error.reason}): check your AWS credentials, region and network.`
      : `No DynamoDB answers at ${target.endpoint} (${error.reason}): is the local server running (npm start)? ` +
          'Its banner prints the keys command that reaches its DynamoDB.',
  );

/**
 * The one line for a failure of the target's DynamoDB: unreachable, no such table (bad input,
 * exit 2), access refused, or any other refusal, by the error's name only (never the SDK's text,
 * which may quote ARNs). Anything that is no AWS error is returned as it is.
 */
export const targetFailure = (target: KeysTarget, error: unknown): unknown => {
  if (error instanceof DatabaseUnavailable) return unreachableTarget(target, error);
  const kind = awsErrorName(error);
  if (kind === undefined) return error;
  const table = `keys table ${target.tableName}`;
  if (kind === 'ResourceNotFoundException') {
    return new UsageError(
      target.onAws
        ? `No ${table} in this region${target.stage === undefined ? '' : ` (--stage ${target.stage})`}: check --table, --stage and --region.`
        : `No ${table} at ${target.endpoint}: check --table (or API_KEYS_TABLE_NAME), or start the local server (npm start).`,
    );
  }
  if (ACCESS_DENIED.test(kind))
    return new Error(`AWS refused access to the ${table} (${kind}): check your AWS credentials, and that they may use it.`);
  return new Error(`DynamoDB refused the call on the ${table} (${kind}).`);
};
