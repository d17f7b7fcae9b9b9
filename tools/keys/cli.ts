/**
 * `npm run keys -- create|list|show|roll|set-plan|revoke|audit`: API key management, against the local server's
 * DynamoDB (the default), another DynamoDB endpoint, a deployed keys table by name, or a deployed
 * stage (tools/keys/target.ts). A new key is printed once; only its hash is stored. Every input is
 * checked before any database is reached: a refused command writes nothing.
 */
import { API_KEY_PATTERN, hashApiKey, keyIdOf } from '../../shared/api-keys';
import { apiKeysRepository } from '../../shared/api-keys-repository';
import { DatabaseUnavailable } from '../../shared/dynamodb';
import { DEFAULT_PLAN, PLANS_FILE_VARIABLE } from '../../shared/plans';
import { isScope, SCOPES, type Scope } from '../../shared/scopes';
import { stackOutputs } from '../../shared/stack';
import { parseCommandLine, UsageError } from '../cli';
import { AUDIT_USAGE, runAuditCommand } from './audit';
import { callerOf, type CallerLookup } from './caller';
import { createKey, listKeys, revokeKey, rollKey, setKeyPlan, showKey, type CommandContext } from './commands';
import { expiryOption, parseDuration } from './durations';
import { KEYS_HELP, resolveKeysTarget, TARGET_OPTIONS, TARGET_USAGE, unreachableTarget, type CloudFormationLookup } from './target';
import { usageKeysFor, type ApiGatewayCalls } from './usage-keys';

export { stageKeysTable } from './target';

export const USAGE = `Usage:
  npm run keys -- create --name NAME [--scopes S,…] [--plan PLAN] [EXPIRY] [--json] [TARGET]
                                            create a key; it is printed once
  npm run keys -- list [--unused DURATION] [--json] [TARGET]
                                            list keys (id, name, scopes, created, expires,
                                            last used, state: active, expired or revoked, plan)
  npm run keys -- show KEY_ID [--json] [TARGET]
                                            one key with every attribute
  npm run keys -- roll KEY_ID [--grace DURATION] [EXPIRY] [--json] [TARGET]
                                            a new key with the same name, scopes and plan (and
                                            quota used), printed once; the old one works on for
                                            the grace
  npm run keys -- set-plan KEY_ID PLAN [--json] [TARGET]
                                            put a key on another usage plan
  npm run keys -- revoke KEY_ID [--json] [TARGET]
                                            revoke a key by its id (and disable its API
                                            Gateway API key, unless a rolled key shares it)
${AUDIT_USAGE}

  --scopes S,…          what the new key may do, comma-separated (default: all of them):
                        ${SCOPES.join(', ')}
  --plan PLAN           the usage plan that meters the new key (default: ${DEFAULT_PLAN}); locally
                        a plan of shared/plans.ts or of $${PLANS_FILE_VARIABLE}, on AWS one of the
                        stage's (its stack's ${stackOutputs.usagePlanIds} output; needs --stage)
  EXPIRY (the new key's; default none):
  --expires-in DURATION the key is refused from this long after now
  --expires-at TIME     the key is refused from TIME, ISO 8601 (2030-01-31, 2030-01-31T12:00:00Z)
  --grace DURATION      how long the old key of a roll keeps working (default 24h; 0 ends it now)
  --unused DURATION     only the active keys not used (never used: not created) for that long;
                        last use is recorded at most once an hour
  --json                one JSON object per key (id, name, scopes, createdAt, expiresAt,
                        revokedAt, lastUsedAt, plan; for create and roll also key, shown only
                        that once; roll prints the new key, then the old one)

  DURATION is a whole number and a unit: s, m, h or d (45s, 90m, 24h, 30d).

${TARGET_USAGE}
`;

type Env = Readonly<Record<string, string | undefined>>;

export interface KeysCommandOptions {
  readonly env?: Env;
  readonly print?: (line: string) => void;
  /** CloudFormation client used for --stage; built from the region when absent. */
  readonly cloudFormation?: CloudFormationLookup;
  /** STS client that names the caller on AWS; built from the region when absent. */
  readonly sts?: CallerLookup;
  /** API Gateway client for the keys' API keys on AWS; built from the region when absent. */
  readonly apiGateway?: ApiGatewayCalls;
}

/** Each command's own options (every command also takes the target's and --help). */
const COMMAND_OPTIONS = {
  create: ['name', 'scopes', 'plan', 'expires-in', 'expires-at', 'json'],
  list: ['unused', 'json'],
  show: ['json'],
  roll: ['grace', 'expires-in', 'expires-at', 'json'],
  'set-plan': ['json'],
  revoke: ['json'],
  audit: ['json'],
} as const;
type Command = keyof typeof COMMAND_OPTIONS;
const COMMANDS = Object.keys(COMMAND_OPTIONS) as Command[];
const isCommand = (name: string): name is Command => Object.hasOwn(COMMAND_OPTIONS, name);

/** The commands that take a key id; `audit` takes one or none; `set-plan` a plan after it. */
const WITH_ID: ReadonlySet<Command> = new Set(['show', 'roll', 'set-plan', 'revoke']);
const WITH_OPTIONAL_ID: ReadonlySet<Command> = new Set(['audit']);

/** What a key id looks like (see keyIdOf): anything else is not echoed, since it may be a key. */
const KEY_ID_PATTERN = /^[0-9a-f]{12}$/;

const DEFAULT_GRACE = '24h';

/** The id a command acts on; a key given in its place is refused without being printed. */
const keyIdArgument = (command: Command, argument: string | undefined): string => {
  if (!argument) throw new UsageError(`${command} needs a key id (see: npm run keys -- list).`);
  if (KEY_ID_PATTERN.test(argument)) return argument;
  if (API_KEY_PATTERN.test(argument)) {
    const keyId = keyIdOf(hashApiKey(argument));
    throw new UsageError(
      `${command} takes a key id, not the key itself (not shown here): that key's id is ${keyId} (npm run keys -- ${command} ${keyId}).`,
    );
  }
  throw new UsageError(`${command} takes a key id, 12 hexadecimal digits as npm run keys -- list shows them.`);
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

/** Refuses an option the command does not take, and arguments it does not take (not echoed: one may be a key). */
const checkCommandLine = (command: Command, given: Record<string, unknown>, positionals: readonly string[]): void => {
  const own: readonly string[] = COMMAND_OPTIONS[command];
  const foreign = Object.keys(given).find((option) => given[option] !== undefined && !own.includes(option) && !(option in TARGET_OPTIONS));
  if (foreign !== undefined) {
    const options = own.map((option) => `--${option}`).join(', ');
    throw new UsageError(`${command} does not take --${foreign}: its options are ${options} and the target's (see ${KEYS_HELP}).`);
  }
  const expected = command === 'set-plan' ? 2 : WITH_ID.has(command) || WITH_OPTIONAL_ID.has(command) ? 1 : 0;
  if (positionals.length > expected) {
    const takes =
      command === 'set-plan'
        ? 'a key id and a plan'
        : WITH_OPTIONAL_ID.has(command)
          ? 'at most one key id'
          : expected === 1
            ? 'one key id'
            : 'no argument';
    throw new UsageError(`${command} takes ${takes} besides its options (see ${KEYS_HELP}).`);
  }
};

/** Runs one key command; returns the process exit code. A refusal is thrown: UsageError (exit 2) or another Error (exit 1). */
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
        plan: { type: 'string' },
        'expires-in': { type: 'string' },
        'expires-at': { type: 'string' },
        grace: { type: 'string' },
        unused: { type: 'string' },
        json: { type: 'boolean' },
        ...TARGET_OPTIONS,
        help: { type: 'boolean' },
      },
    },
    KEYS_HELP,
  );
  const [command, argument, planArgument] = positionals;
  const { help, ...given } = values;
  if (help || !command) {
    print(USAGE);
    return help ? 0 : 2;
  }
  if (!isCommand(command)) throw new UsageError(`unknown command '${command}': use ${COMMANDS.join(', ')} (see ${KEYS_HELP}).`);
  checkCommandLine(command, given, positionals.slice(1));

  // Every input is checked here, before any database is reached: a refused command writes nothing.
  const now = new Date();
  const keyId = WITH_ID.has(command) ? keyIdArgument(command, argument) : '';
  const scopes = values.scopes === undefined ? [...SCOPES] : scopesArgument(values.scopes);
  const expiresAt = expiryOption(values, now);
  const graceMs = parseDuration(values.grace ?? DEFAULT_GRACE, '--grace');
  const unusedMs = values.unused === undefined ? undefined : parseDuration(values.unused, '--unused');
  if (command === 'create' && !values.name) throw new UsageError('create needs --name NAME (who or what the key is for).');
  if (command === 'set-plan' && !planArgument) throw new UsageError(`set-plan needs a plan after the key id (see ${KEYS_HELP}).`);

  const target = await resolveKeysTarget(values, env, options.cloudFormation);
  const usageKeys = usageKeysFor(target, env, options.apiGateway);
  const context: CommandContext = {
    keys: apiKeysRepository({ client: target.client, tableName: target.tableName }),
    usageKeys,
    print,
    json: values.json === true,
    caller: () => callerOf(target, env, options.sts),
  };
  try {
    // A plan is checked against the plans in force (locally) or the stage's (on AWS), before any write.
    if (command === 'set-plan') usageKeys.checkPlan(planArgument ?? '');
    if (command === 'create' && (values.plan !== undefined || usageKeys.pairs)) usageKeys.checkPlan(values.plan ?? DEFAULT_PLAN);
    switch (command) {
      case 'create':
        return await createKey(context, { name: values.name ?? '', scopes, expiresAt, plan: values.plan });
      case 'list':
        return await listKeys(context, { unusedMs });
      case 'show':
        return await showKey(context, keyId);
      case 'roll':
        return await rollKey(context, keyId, { graceMs, expiresAt });
      case 'set-plan':
        return await setKeyPlan(context, keyId, planArgument ?? '');
      case 'revoke':
        return await revokeKey(context, keyId);
      case 'audit':
        return await runAuditCommand(argument, {
          json: context.json,
          tableName: target.tableName,
          endpoint: target.onAws ? undefined : target.endpoint,
          region: target.region,
          client: target.client,
          print,
        });
    }
  } catch (error) {
    throw error instanceof DatabaseUnavailable ? unreachableTarget(target, error) : error;
  } finally {
    target.client.destroy();
    usageKeys.close();
  }
};
