/**
 * `npm run keys -- create|list|revoke`: API key management, against the local server's DynamoDB
 * (the default), another DynamoDB endpoint, a deployed keys table by name, or a deployed stage.
 * A new key is printed once; only its hash, id, name, scopes and creation time are stored.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { API_KEY_PATTERN, generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import { apiKeysRepository, type ApiKeyRecord } from '../../shared/api-keys-repository';
import { apiKeysTableName } from '../../shared/config';
import { createDocumentClient, DatabaseUnavailable } from '../../shared/dynamodb';
import { isScope, SCOPES, type Scope } from '../../shared/scopes';
import { stackName, stackOutputs } from '../../shared/stack';
import { parseCommandLine, UsageError } from '../cli';
import { DEFAULT_DYNAMODB_LOCAL_PORT, dynamoDBLocalEndpoint } from '../dynamodb-local';
import { AUDIT_USAGE, runAuditCommand } from './audit';

export const USAGE = `Usage:
  npm run keys -- create --name NAME [--scopes S,…] [--json] [TARGET]
                                                create a key; it is printed once
  npm run keys -- list [--json] [TARGET]        list keys (id, name, scopes, created, revoked)
  npm run keys -- revoke KEY_ID [TARGET]        revoke a key by its id
${AUDIT_USAGE}

  --scopes S,…      what the new key may do, comma-separated (default: all of them):
                    ${SCOPES.join(', ')}
  --json            one JSON object per key (id, name, scopes, createdAt, revokedAt;
                    for create also key, shown only that once)

TARGET (default: the local server's DynamoDB: $DYNAMODB_ENDPOINT, else DynamoDB Local on
$DYNAMODB_LOCAL_PORT, else on port ${DEFAULT_DYNAMODB_LOCAL_PORT}, as npm start uses them):
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

const HELP = 'npm run keys -- --help';
const COMMANDS: readonly string[] = ['create', 'list', 'revoke', 'audit'];

/** What a key id looks like (see keyIdOf): anything else is not echoed, since it may be a key. */
const KEY_ID_PATTERN = /^[0-9a-f]{12}$/;

/** The port of the local server's DynamoDB Local, from the same setting npm start reads. */
const localPort = (env: Readonly<Record<string, string | undefined>>): number => {
  const value = env.DYNAMODB_LOCAL_PORT;
  if (value === undefined || value === '') return DEFAULT_DYNAMODB_LOCAL_PORT;
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!(port >= 1 && port <= 65_535)) {
    throw new UsageError(`DYNAMODB_LOCAL_PORT must be the port npm start printed for DynamoDB Local, from 1 to 65535: see ${HELP}`);
  }
  return port;
};

/** The id to revoke; a key given in its place is refused without being printed. */
const keyIdArgument = (argument: string | undefined): string => {
  if (!argument) throw new UsageError('revoke needs a key id (see: npm run keys -- list).');
  if (KEY_ID_PATTERN.test(argument)) return argument;
  if (API_KEY_PATTERN.test(argument)) {
    const keyId = keyIdOf(hashApiKey(argument));
    throw new UsageError(
      `revoke takes a key id, not the key itself (not shown here): that key's id is ${keyId} (npm run keys -- revoke ${keyId}).`,
    );
  }
  throw new UsageError(`revoke takes a key id, 12 hexadecimal digits as npm run keys -- list shows them.`);
};

/** The scopes of --scopes: at least one, each a scope the API knows. */
const scopesArgument = (value: string): Scope[] => {
  const names = value.split(',').map((name) => name.trim());
  const valid = `the scopes are ${SCOPES.join(', ')}`;
  if (names.some((name) => name === '')) throw new UsageError(`--scopes needs one or more scopes separated by commas: ${valid}.`);
  const unknown = names.find((name) => !isScope(name));
  if (unknown !== undefined) throw new UsageError(`unknown scope '${unknown}' in --scopes: ${valid}.`);
  return names.filter(isScope);
};

const describe = (record: ApiKeyRecord): string =>
  [
    record.keyId,
    record.name,
    record.scopes.join(',') || '(none)',
    record.createdAt,
    record.revokedAt ? `revoked ${record.revokedAt}` : 'active',
  ].join('\t');

/** A key as --json prints it: one object a line. */
const json = (record: ApiKeyRecord, key?: string): string =>
  JSON.stringify({
    id: record.keyId,
    name: record.name,
    scopes: record.scopes,
    createdAt: record.createdAt,
    revokedAt: record.revokedAt ?? null,
    ...(key === undefined ? {} : { key }),
  });

/** Runs one key command; returns the process exit code. */
export const runKeysCommand = async (argv: string[], options: KeysCommandOptions = {}): Promise<number> => {
  const env = options.env ?? process.env;
  const print = options.print ?? ((line: string) => console.log(line));
  const { values, positionals } = parseCommandLine(
    {
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        scopes: { type: 'string' },
        json: { type: 'boolean' },
        endpoint: { type: 'string' },
        stage: { type: 'string' },
        table: { type: 'string' },
        region: { type: 'string' },
        help: { type: 'boolean' },
      },
    },
    HELP,
  );
  const [command, argument] = positionals;
  if (values.help || !command) {
    print(USAGE);
    return values.help ? 0 : 2;
  }
  if (!COMMANDS.includes(command)) throw new UsageError(`unknown command '${command}': use ${COMMANDS.join(', ')} (see ${HELP}).`);
  if (values.scopes !== undefined && command !== 'create') throw new UsageError(`--scopes is for create only (see ${HELP}).`);
  if (values.json && command === 'revoke') throw new UsageError(`--json is for create, list and audit only (see ${HELP}).`);
  // Checked before any database is reached: a wrong scope registers nothing.
  const scopes = values.scopes === undefined ? [...SCOPES] : scopesArgument(values.scopes);
  if (values.stage !== undefined && (values.endpoint !== undefined || values.table !== undefined)) {
    throw new UsageError('--stage finds its own table on AWS: it cannot be combined with --endpoint or --table.');
  }
  // --stage, and --table without --endpoint, mean AWS; anything else a DynamoDB endpoint.
  const onAws = values.stage !== undefined || (values.table !== undefined && values.endpoint === undefined);
  const endpoint = onAws ? undefined : (values.endpoint ?? env.DYNAMODB_ENDPOINT ?? dynamoDBLocalEndpoint(localPort(env)));
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
        if (!values.name) throw new UsageError('create needs --name NAME (who or what the key is for).');
        const key = generateApiKey();
        const record = await keys.register(key, values.name, { scopes });
        if (values.json) {
          print(json(record, key));
          return 0;
        }
        print(`Created key ${record.keyId} (${record.name}, scopes ${record.scopes.join(',')}). It is shown only this once:`);
        print(key);
        return 0;
      }
      case 'list': {
        const records = await keys.list();
        if (values.json) {
          for (const record of records) print(json(record));
          return 0;
        }
        print(['id', 'name', 'scopes', 'created', 'state'].join('\t'));
        for (const record of records) print(describe(record));
        return 0;
      }
      case 'revoke': {
        const keyId = keyIdArgument(argument);
        if (!(await keys.revoke(keyId))) {
          print(`No key has the id ${keyId}.`);
          return 1;
        }
        print(`Revoked key ${keyId}. Callers using it are refused within the authorizer cache TTL.`);
        return 0;
      }
      case 'audit':
        return await runAuditCommand(argument, { json: values.json === true, tableName, endpoint, region: values.region, client, print });
      default:
        throw new UsageError(`unknown command '${command}' (see ${HELP}).`);
    }
  } catch (error) {
    if (!(error instanceof DatabaseUnavailable)) throw error;
    throw new Error(
      endpoint === undefined
        ? `DynamoDB did not answer (${error.reason}): check your AWS credentials, region and network.`
        : `No DynamoDB answers at ${endpoint} (${error.reason}): is the local server running (npm start)? ` +
            'Its banner prints the keys command that reaches its DynamoDB.',
    );
  } finally {
    client.destroy();
  }
};
