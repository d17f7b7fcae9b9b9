/**
 * `npm run keys -- create|list|revoke`: API key management, against the local server's DynamoDB
 * (the default), another DynamoDB endpoint, a deployed keys table by name, or a deployed stage.
 * A new key is printed once; only its hash, id, name and creation time are stored.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { parseArgs } from 'node:util';
import { generateApiKey } from '../../shared/api-keys';
import { apiKeysRepository, type ApiKeyRecord } from '../../shared/api-keys-repository';
import { apiKeysTableName } from '../../shared/config';
import { createDocumentClient, DatabaseUnavailable } from '../../shared/dynamodb';
import { stackName, stackOutputs } from '../../shared/stack';
import { DEFAULT_DYNAMODB_LOCAL_PORT } from '../dynamodb-local';

export const USAGE = `Usage:
  npm run keys -- create --name NAME [TARGET]   create a key; it is printed once
  npm run keys -- list [TARGET]                 list keys (id, name, created, revoked)
  npm run keys -- revoke KEY_ID [TARGET]        revoke a key by its id

TARGET (default: the local server's DynamoDB, $DYNAMODB_ENDPOINT or http://127.0.0.1:${DEFAULT_DYNAMODB_LOCAL_PORT}):
  --endpoint URL    a DynamoDB endpoint, such as DynamoDB Local on another port
  --table NAME      the keys table's name: on AWS, or at --endpoint when given
                    (default: $API_KEYS_TABLE_NAME or api-keys)
  --stage STAGE     a deployed stage: the keys table named by stack ${stackName('STAGE')}'s outputs
  --region REGION   the AWS region of --stage or --table (default: from the AWS environment)
`;

type Lookup = Pick<CloudFormationClient, 'send'>;

export interface KeysCommandOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly print?: (line: string) => void;
  /** CloudFormation client used for --stage; built from the region when absent. */
  readonly cloudFormation?: Lookup;
}

/** The keys table of a deployed stage, from its stack's outputs. */
export const stageKeysTable = async (stage: string, cloudFormation: Lookup): Promise<string> => {
  const { Stacks } = await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName(stage) }));
  const output = Stacks?.[0]?.Outputs?.find((candidate) => candidate.OutputKey === stackOutputs.apiKeysTableName);
  if (!output?.OutputValue) throw new Error(`Stack ${stackName(stage)} has no ${stackOutputs.apiKeysTableName} output.`);
  return output.OutputValue;
};

const describe = (record: ApiKeyRecord): string =>
  [record.keyId, record.name, record.createdAt, record.revokedAt ? `revoked ${record.revokedAt}` : 'active'].join('\t');

/** Runs one key command; returns the process exit code. */
export const runKeysCommand = async (argv: string[], options: KeysCommandOptions = {}): Promise<number> => {
  const env = options.env ?? process.env;
  const print = options.print ?? ((line: string) => console.log(line));
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      endpoint: { type: 'string' },
      stage: { type: 'string' },
      table: { type: 'string' },
      region: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const [command, argument] = positionals;
  if (values.help || !command) {
    print(USAGE);
    return values.help ? 0 : 2;
  }
  if (values.stage !== undefined && (values.endpoint !== undefined || values.table !== undefined)) {
    throw new Error('--stage finds its own table on AWS: it cannot be combined with --endpoint or --table.');
  }
  // --stage, and --table without --endpoint, mean AWS; anything else a DynamoDB endpoint.
  const onAws = values.stage !== undefined || (values.table !== undefined && values.endpoint === undefined);
  const endpoint = onAws ? undefined : (values.endpoint ?? env.DYNAMODB_ENDPOINT ?? `http://127.0.0.1:${DEFAULT_DYNAMODB_LOCAL_PORT}`);
  const tableName =
    values.table ??
    (values.stage !== undefined
      ? await stageKeysTable(values.stage, options.cloudFormation ?? new CloudFormationClient({ region: values.region }))
      : apiKeysTableName(env));
  const client = createDocumentClient({ endpoint, region: values.region });
  const keys = apiKeysRepository({ client, tableName });
  try {
    switch (command) {
      case 'create': {
        if (!values.name) throw new Error('create needs --name NAME (who or what the key is for).');
        const key = generateApiKey();
        const record = await keys.register(key, values.name);
        print(`Created key ${record.keyId} (${record.name}). It is shown only this once:`);
        print(key);
        return 0;
      }
      case 'list': {
        const records = await keys.list();
        print(['id', 'name', 'created', 'state'].join('\t'));
        for (const record of records) print(describe(record));
        return 0;
      }
      case 'revoke': {
        if (!argument) throw new Error('revoke needs a key id (see: npm run keys -- list).');
        if (!(await keys.revoke(argument))) {
          print(`No key has the id ${argument}.`);
          return 1;
        }
        print(`Revoked key ${argument}. Callers using it are refused within the authorizer cache TTL.`);
        return 0;
      }
      default:
        print(`Unknown command '${command}'.\n\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    if (!(error instanceof DatabaseUnavailable)) throw error;
    throw new Error(
      endpoint === undefined
        ? `DynamoDB did not answer (${error.reason}): check your AWS credentials, region and network.`
        : `No DynamoDB answers at ${endpoint} (${error.reason}): is the local server running (npm start)? Or name another with --endpoint.`,
    );
  } finally {
    client.destroy();
  }
};
