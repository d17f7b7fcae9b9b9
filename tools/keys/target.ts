/**
 * Where the key tool works: the local server's DynamoDB (the default), another DynamoDB endpoint,
 * a keys table on AWS by name, or a deployed stage's keys table. Every command of `npm run keys`
 * resolves its target here, from the same options.
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { apiKeyLastUseTableName, apiKeysTableName } from '../../shared/config';
import { createDocumentClient, DatabaseUnavailable } from '../../shared/dynamodb';
import { stackName, stackOutputs } from '../../shared/stack';
import { UsageError } from '../cli';
import { DEFAULT_DYNAMODB_LOCAL_PORT, dynamoDBLocalEndpoint } from '../dynamodb-local';
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
  --region REGION   the AWS region of --stage or --table (default: from the AWS environment)`;

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
  /** The outputs of the stage's stack, by name, when --stage is given. */
  readonly stackOutputs?: Readonly<Record<string, string>>;
}

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

/** The target the options name; `cloudFormation` finds a stage's table (built from --region when absent). */
export const resolveKeysTarget = async (
  options: TargetOptions,
  env: Readonly<Record<string, string | undefined>>,
  cloudFormation?: CloudFormationLookup,
): Promise<KeysTarget> => {
  const { endpoint: endpointOption, stage, table, region } = options;
  if (stage !== undefined && (endpointOption !== undefined || table !== undefined)) {
    throw new UsageError('--stage finds its own table on AWS: it cannot be combined with --endpoint or --table.');
  }
  // --stage, and --table without --endpoint, mean AWS; anything else a DynamoDB endpoint.
  const onAws = stage !== undefined || (table !== undefined && endpointOption === undefined);
  const endpoint = onAws ? undefined : (endpointOption ?? env.DYNAMODB_ENDPOINT ?? dynamoDBLocalEndpoint(localPort(env)));
  const outputs = stage === undefined ? undefined : await stageOutputs(stage, cloudFormation ?? new CloudFormationClient({ region }));
  const ofStage = stage !== undefined && outputs !== undefined;
  const tableName = table ?? (ofStage ? keysTableOf(stage, outputs) : apiKeysTableName(env));
  const lastUseTableName = ofStage ? tableOutputOf(stage, outputs, stackOutputs.apiKeyLastUseTableName) : apiKeyLastUseTableName(env);
  const client = createDocumentClient({ endpoint, region });
  return { client, tableName, lastUseTableName, onAws, endpoint, region, stage, stackOutputs: outputs };
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
