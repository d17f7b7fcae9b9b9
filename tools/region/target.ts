/**
 * Where `npm run region` reads and writes the switches: a deployed stage in several regions (its
 * idempotency table on AWS, in the region the call goes through), or a DynamoDB endpoint (the local
 * server's by default). A stage's table name comes from the stage (shared/stack.ts), not from its
 * stack's outputs: CloudFormation is a control plane, and the region being drained may have lost it.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isMultiRegion, parseStageName, stageSettings } from '../../infra/stages';
import { idempotencyTableName } from '../../shared/config';
import { createDocumentClient, DatabaseUnavailable } from '../../shared/dynamodb';
import { REGION_NAME_PATTERN } from '../../shared/region-switch';
import { deployedTableName } from '../../shared/stack';
import { idempotencyTable } from '../../shared/tables';
import { UsageError } from '../cli';
import { DEFAULT_DYNAMODB_LOCAL_PORT, dynamoDBLocalEndpoint, operatorToolTimeouts } from '../dynamodb-local';
import { ACCESS_DENIED, awsErrorName } from '../stack-outputs';

export const REGION_HELP = 'npm run region -- --help';

/** The target options, as parseArgs declares them; every command accepts them. */
export const TARGET_OPTIONS = {
  stage: { type: 'string' },
  via: { type: 'string' },
  endpoint: { type: 'string' },
  table: { type: 'string' },
} as const;

export const TARGET_USAGE = `TARGET (default: the local server's DynamoDB: $DYNAMODB_ENDPOINT, else DynamoDB Local on
$DYNAMODB_LOCAL_PORT, else on port ${DEFAULT_DYNAMODB_LOCAL_PORT}, as npm start uses them):
  --stage STAGE    a deployed stage in several regions (infra/stages.ts): its idempotency table,
                   ${deployedTableName('STAGE', idempotencyTable)}, through the DynamoDB endpoint of one of its
                   regions (no CloudFormation, Route 53 or IAM call; who you are is asked of that
                   region's STS), with the AWS credentials of the environment
  --via REGION     with --stage: the region whose DynamoDB takes the call, any region of the stage
                   (default: REGION's own; status without REGION: each region's own). Use another
                   region when REGION's own DynamoDB does not answer: the switch is the same item
                   in every region
  --endpoint URL   a DynamoDB endpoint, such as DynamoDB Local on another port
  --table NAME     the idempotency table at --endpoint (default: $${idempotencyTable.nameVariable} or ${idempotencyTable.defaultName})`;

export interface TargetOptions {
  readonly stage?: string;
  readonly via?: string;
  readonly endpoint?: string;
  readonly table?: string;
}

/** How the tool reaches DynamoDB through one region (the SDK's client of that region when absent); a test points it elsewhere. */
export type DynamoDBIn = (region: string) => DynamoDBDocumentClient;

export interface RegionTarget {
  /** --stage: the stage and its regions, in its order. None: a DynamoDB endpoint, whose regions the tool cannot know. */
  readonly stage?: { readonly name: string; readonly regions: readonly string[] };
  readonly tableName: string;
  /** The DynamoDB endpoint when not on AWS. */
  readonly endpoint?: string;
  /** The region whose DynamoDB takes the calls about `region`'s switch: --via, else its own (on AWS); none locally. */
  viaFor(region: string): string | undefined;
  /** A client on the DynamoDB that takes the calls about `region`'s switch. */
  clientFor(region: string): DynamoDBDocumentClient;
  /** Checks that `region` is one the target has a switch for: a region of the stage, or a region's name. */
  checkRegion(region: string): void;
  close(): void;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The port of the local server's DynamoDB Local, from the same setting npm start reads. */
const localPort = (env: Env): number => {
  const value = env.DYNAMODB_LOCAL_PORT;
  if (value === undefined || value === '') return DEFAULT_DYNAMODB_LOCAL_PORT;
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!(port >= 1 && port <= 65_535)) {
    throw new UsageError(`DYNAMODB_LOCAL_PORT must be the port npm start printed for DynamoDB Local, from 1 to 65535: see ${REGION_HELP}`);
  }
  return port;
};

/** The stage of --stage, in several regions: its name and regions. */
const stageOf = (value: string): { readonly name: string; readonly regions: readonly string[] } => {
  let name: string;
  try {
    name = parseStageName(value);
  } catch (error) {
    throw new UsageError(`--stage: ${(error as Error).message}`);
  }
  const settings = stageSettings(name);
  if (!isMultiRegion(settings)) {
    throw new UsageError(
      `Stage ${name} runs in one region: there is no other region to take its traffic, so it has no regional switch (infra/stages.ts lists the stages in several).`,
    );
  }
  return { name, regions: settings.regions ?? [] };
};

/** Checks `region` against the stage's regions, naming the option it came from. */
const checkStageRegion = (stage: { readonly name: string; readonly regions: readonly string[] }, region: string, what: string) => {
  if (!stage.regions.includes(region)) {
    throw new UsageError(`Stage ${stage.name} runs in ${stage.regions.join(', ')}: ${what} ${region} is not one of them.`);
  }
};

/** The target the options name; `dynamoDBIn` reaches AWS through one region (a test's stand-in). */
export const resolveRegionTarget = (options: TargetOptions, env: Env, dynamoDBIn?: DynamoDBIn): RegionTarget => {
  const clients = new Map<string, DynamoDBDocumentClient>();
  const cached = (key: string, make: () => DynamoDBDocumentClient) => {
    const made = clients.get(key) ?? make();
    clients.set(key, made);
    return made;
  };
  const close = () => {
    for (const client of clients.values()) client.destroy();
  };

  if (options.stage !== undefined) {
    if (options.endpoint !== undefined || options.table !== undefined) {
      throw new UsageError('--stage finds its own table on AWS: it cannot be combined with --endpoint or --table.');
    }
    const stage = stageOf(options.stage);
    const { via } = options;
    if (via !== undefined) checkStageRegion(stage, via, '--via');
    const viaFor = (region: string) => via ?? region;
    const reach: DynamoDBIn = dynamoDBIn ?? ((region) => createDocumentClient({ region, ...operatorToolTimeouts(env) }));
    return {
      stage,
      tableName: deployedTableName(stage.name, idempotencyTable),
      viaFor,
      clientFor: (region) => cached(viaFor(region), () => reach(viaFor(region))),
      checkRegion: (region) => checkStageRegion(stage, region, 'region'),
      close,
    };
  }

  if (options.via !== undefined) {
    throw new UsageError(
      '--via picks the region of --stage whose DynamoDB takes the call: it needs --stage (locally there is one DynamoDB).',
    );
  }
  const endpoint = options.endpoint ?? env.DYNAMODB_ENDPOINT ?? dynamoDBLocalEndpoint(localPort(env));
  return {
    tableName: options.table ?? idempotencyTableName(env),
    endpoint,
    viaFor: () => undefined,
    clientFor: () => cached(endpoint, () => createDocumentClient({ endpoint, ...operatorToolTimeouts(env) })),
    checkRegion: (region) => {
      if (!REGION_NAME_PATTERN.test(region)) {
        throw new UsageError(
          `'${region}' is not an AWS region's name, such as us-east-2: the region the local server stands for (its AWS_REGION).`,
        );
      }
    },
    close,
  };
};

/**
 * The one line for a failure of the target's DynamoDB about `region`'s switch: unreachable (with
 * where else to go), no such table (bad input, exit 2), access refused, or any other refusal, by
 * the error's name only (never the SDK's text, which may quote ARNs). Anything else is returned as it is.
 */
export const targetFailure = (target: RegionTarget, region: string, error: unknown): unknown => {
  const via = target.viaFor(region);
  const where = target.endpoint === undefined ? `DynamoDB in ${via}` : `the DynamoDB at ${target.endpoint}`;
  const table = `idempotency table ${target.tableName}`;
  if (error instanceof DatabaseUnavailable) {
    if (target.stage === undefined) {
      return new Error(`No DynamoDB answers at ${target.endpoint} (${error.reason}): is the local server running (npm start)?`);
    }
    const others = target.stage.regions.filter((other) => other !== via);
    return new Error(
      `${where} did not answer (${error.reason}): nothing was changed; go through another region of the stage with --via ${others.join(' or --via ')}.`,
    );
  }
  const kind = awsErrorName(error);
  if (kind === undefined) return error;
  if (kind === 'ResourceNotFoundException') {
    return new UsageError(
      target.stage === undefined
        ? `No ${table} at ${target.endpoint}: check --table (or ${idempotencyTable.nameVariable}), or start the local server (npm start).`
        : `No ${table} in ${via}: is stage ${target.stage.name} deployed there?`,
    );
  }
  if (ACCESS_DENIED.test(kind)) {
    return new Error(`AWS refused access to the ${table} in ${via} (${kind}): check your AWS credentials, and that they may use it.`);
  }
  return new Error(`${where} refused the call on the ${table} (${kind}).`);
};
