/**
 * `npm run keys -- create|list|show|usage|roll|set-plan|revoke|capacity|audit`: API key management, against the local server's
 * DynamoDB (the default), another DynamoDB endpoint, a deployed keys table by name, or a deployed
 * stage (tools/keys/target.ts). A new key is printed once; only its hash is stored. Every input is
 * checked before any database is reached: a refused command writes nothing. Every line it prints
 * and every error it throws goes through the key mask (tools/keys/printer.ts).
 */
import { API_KEY_PATTERN, looksLikeApiKey } from '../../shared/api-keys';
import { apiKeysRepository } from '../../shared/api-keys-repository';
import { checkKeyName, InvalidKeyName, KEY_NAME_MAX_LENGTH } from '../../shared/key-names';
import { DEFAULT_PLAN } from '../../shared/plan-policy';
import { PLANS_FILE_VARIABLE } from '../../shared/plans';
import { DatabaseUnavailable } from '../../shared/dynamodb';
import { isScope, SCOPES, type Scope } from '../../shared/scopes';
import { stackOutputs } from '../../shared/stack';
import { maskedError, parseCommandLine, UsageError } from '../cli';
import type { CloudFormationLookup } from '../stack-outputs';
import { AUDIT_USAGE, runAuditCommand } from './audit';
import { authorizerCacheFor } from './authorizer-cache';
import { actorOf, type CallerLookup } from './caller';
import { createKey, listKeys, revokeKey, rollKey, setKeyPlan, showCapacity, showKey, type CommandContext } from './commands';
import { expiryOption, parseDuration } from './durations';
import { keyIdArgument } from './key-id';
import {
  KEYS_HELP,
  resolveKeysTarget,
  TARGET_OPTIONS,
  TARGET_USAGE,
  targetFailure,
  type CloudFormationIn,
  type KeysTarget,
  type TargetOptions,
} from './target';
import { printable } from './output';
import { keysPrinter, type KeysPrinter } from './printer';
import { usageKeysFor, type ApiGatewayCalls, type ApiGatewayIn } from './usage-keys';
import { DEFAULT_USAGE_DAYS, MAX_USAGE_DAYS, showUsage, usageDaysArgument } from './usage';

export { stageKeysTable } from './target';

export const USAGE = `Usage:
  npm run keys -- create --name NAME [--scopes S,…] [--plan PLAN] [EXPIRY] [--json] [TARGET]
                                            create a key; it is printed once
  npm run keys -- list [--unused DURATION] [--usage] [--json] [TARGET]
                                            list keys (id, name, scopes, created, expires,
                                            last used, state: active, expired or revoked, plan;
                                            with --usage, requests today)
  npm run keys -- show KEY_ID [--json] [TARGET]
                                            one key with every attribute
  npm run keys -- usage KEY_ID [--days N] [--json] [TARGET]
                                            a key's requests per day (UTC) over the last N days
                                            (default ${DEFAULT_USAGE_DAYS}, at most ${MAX_USAGE_DAYS}), and what remains of its
                                            plan's quota this period
  npm run keys -- roll KEY_ID [--grace DURATION] [EXPIRY] [--json] [TARGET]
                                            a new key with the same name, scopes and plan (and
                                            quota used), printed once; the old one works on for
                                            the grace
  npm run keys -- set-plan KEY_ID PLAN [--json] [TARGET]
                                            put a key on another usage plan
  npm run keys -- revoke KEY_ID [--only-this-key] [--json] [TARGET]
                                            revoke a key by its id and every key of its roll
                                            chain that still works (the other end of a roll in
                                            its grace), all at once; each key revoked is printed.
                                            Their API Gateway API key is deleted, unless a key
                                            still active shares it
  npm run keys -- capacity [--json] [TARGET]
                                            the API keys held against API Gateway's quota
                                            (per account and region), and the live keys
${AUDIT_USAGE}

  revoke, set-plan and roll --grace 0 take effect from the next request: with --stage the tool
  flushes the stage's authorizer cache, and the local server drops a changed key's answers itself.
  A stage in several regions: from the next request in its home region; in the others once the
  change has replicated (usually within a second) and that region's audit function has flushed
  its cache, at most the stage's authorizer cache TTL.

  --name NAME           who or what the new key is for: 1 to ${KEY_NAME_MAX_LENGTH} characters, no control
                        characters (line breaks, tabs, terminal escapes), nor bidirectional or
                        line-separator characters (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069,
                        U+2028, U+2029)
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
  --usage               each key's requests today (one usage call per plan on a stage)
  --json                one JSON object per key (id, name, scopes, createdAt, expiresAt,
                        revokedAt, lastUsedAt, plan; for create and roll also key, shown only
                        that once; roll prints the new key, then the old one; revoke the key
                        named, then each other key of its roll chain it revoked; list --usage adds
                        usedToday); for usage one object: id, plan, days [{day, requests}],
                        quota {limit, period, remaining} or null
  --days N              the days usage shows, today included (default ${DEFAULT_USAGE_DAYS}, 1 to ${MAX_USAGE_DAYS})
  --only-this-key       revoke only the key named, not the other keys of its roll chain (its
                        successor or predecessor in a roll's grace keeps working)

  DURATION is a whole number and a unit: s, m, h or d (45s, 90m, 24h, 30d).

${TARGET_USAGE}
`;

type Env = Readonly<Record<string, string | undefined>>;

export interface KeysCommandOptions {
  readonly env?: Env;
  /** Where the lines go (through the key mask); standard output when absent. */
  readonly print?: (line: string) => void;
  /** CloudFormation client used for --stage; built from the region when absent. */
  readonly cloudFormation?: CloudFormationLookup;
  /** STS client that names the caller on AWS; built from the region when absent. */
  readonly sts?: CallerLookup;
  /** API Gateway client for the keys' API keys and the stage's authorizer cache on AWS; built from the region when absent. */
  readonly apiGateway?: ApiGatewayCalls;
  /** A stage in several regions: each region's CloudFormation client; built from the region when absent. */
  readonly cloudFormationIn?: CloudFormationIn;
  /** A stage in several regions: each region's API Gateway client; built from the region when absent. */
  readonly apiGatewayIn?: ApiGatewayIn;
}

/** Each command's own options (every command also takes the target's and --help). */
const COMMAND_OPTIONS = {
  create: ['name', 'scopes', 'plan', 'expires-in', 'expires-at', 'json'],
  list: ['unused', 'usage', 'json'],
  show: ['json'],
  usage: ['days', 'json'],
  roll: ['grace', 'expires-in', 'expires-at', 'json'],
  'set-plan': ['json'],
  revoke: ['only-this-key', 'json'],
  capacity: ['json'],
  audit: ['json'],
} as const;
type Command = keyof typeof COMMAND_OPTIONS;
const COMMANDS = Object.keys(COMMAND_OPTIONS) as Command[];
const isCommand = (name: string): name is Command => Object.hasOwn(COMMAND_OPTIONS, name);

/** The commands that take a key id; `audit` takes one or none; `set-plan` a plan after it. */
const WITH_ID: ReadonlySet<Command> = new Set(['show', 'usage', 'roll', 'set-plan', 'revoke']);
const WITH_OPTIONAL_ID: ReadonlySet<Command> = new Set(['audit']);
/** The commands that write the keys table: a stage in several regions takes them in its home region only. */
const WRITES: ReadonlySet<Command> = new Set(['create', 'roll', 'set-plan', 'revoke']);

const DEFAULT_GRACE = '24h';

const PARSE_OPTIONS = {
  name: { type: 'string' },
  scopes: { type: 'string' },
  plan: { type: 'string' },
  'expires-in': { type: 'string' },
  'expires-at': { type: 'string' },
  grace: { type: 'string' },
  unused: { type: 'string' },
  usage: { type: 'boolean' },
  days: { type: 'string' },
  json: { type: 'boolean' },
  'only-this-key': { type: 'boolean' },
  ...TARGET_OPTIONS,
  help: { type: 'boolean' },
} as const;

/** The id a command acts on; a key given in its place is refused without being printed. */
const requiredKeyId = (command: Command, argument: string | undefined): string => {
  if (!argument) throw new UsageError(`${command} needs a key id (see: npm run keys -- list).`);
  return keyIdArgument(argument, command) ?? argument;
};

/** The scopes of --scopes: at least one, each a scope the API knows. An entry shaped as a key is not echoed. */
const scopesArgument = (value: string): Scope[] => {
  const names = value.split(',').map((name) => name.trim());
  const valid = `the scopes are ${SCOPES.join(', ')}`;
  if (names.some((name) => name === '')) throw new UsageError(`--scopes needs one or more scopes separated by commas: ${valid}.`);
  const unknown = names.find((name) => !isScope(name));
  if (unknown !== undefined && (API_KEY_PATTERN.test(unknown) || looksLikeApiKey(unknown))) {
    throw new UsageError(`--scopes holds what looks like an API key (not shown here), not a scope: ${valid}.`);
  }
  if (unknown !== undefined) throw new UsageError(`unknown scope '${unknown}' in --scopes: ${valid}.`);
  return names.filter(isScope);
};

/** The name of --name: what the key is for, as KeyName allows (a key pasted there would be printed by every listing). */
const nameArgument = (value: string | undefined): string => {
  if (!value) throw new UsageError('create needs --name NAME (who or what the key is for).');
  try {
    return checkKeyName(value);
  } catch (error) {
    throw error instanceof InvalidKeyName ? new UsageError(`--name ${error.problem}.`) : error;
  }
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

/** A command line, every input checked: what runs, on which target. */
interface KeysInvocation {
  readonly command: Command;
  /** The key id of show, roll and revoke; audit's, when given. */
  readonly keyId?: string;
  readonly name: string;
  readonly scopes: readonly Scope[];
  /** create's --plan, or set-plan's plan. */
  readonly plan?: string;
  readonly expiresAt?: string;
  readonly graceMs: number;
  readonly unusedMs?: number;
  /** list --usage. */
  readonly listUsage: boolean;
  /** usage's --days. */
  readonly days: number;
  /** revoke --only-this-key: the key named alone, not its roll chain. */
  readonly onlyThisKey: boolean;
  readonly json: boolean;
  readonly target: TargetOptions;
}

/**
 * Reads a command line: the invocation, or the usage to print (`--help`, exit 0; no command,
 * exit 2). Every input is checked here, before any database is reached: a refused command writes
 * nothing.
 */
const parseKeysCommand = (argv: string[], now: Date): KeysInvocation | { readonly usage: number } => {
  const { values, positionals } = parseCommandLine({ args: argv, allowPositionals: true, options: PARSE_OPTIONS }, KEYS_HELP);
  const [command, argument, planArgument] = positionals;
  const { help, ...given } = values;
  if (help || !command) return { usage: help ? 0 : 2 };
  if (!isCommand(command)) throw new UsageError(`unknown command '${command}': use ${COMMANDS.join(', ')} (see ${KEYS_HELP}).`);
  checkCommandLine(command, given, positionals.slice(1));
  const keyId = WITH_ID.has(command) ? requiredKeyId(command, argument) : keyIdArgument(argument);
  if (command === 'set-plan' && !planArgument) throw new UsageError(`set-plan needs a plan after the key id (see ${KEYS_HELP}).`);
  return {
    command,
    keyId,
    name: command === 'create' ? nameArgument(values.name) : '',
    scopes: values.scopes === undefined ? [...SCOPES] : scopesArgument(values.scopes),
    plan: command === 'set-plan' ? planArgument : values.plan,
    expiresAt: expiryOption(values, now),
    graceMs: parseDuration(values.grace ?? DEFAULT_GRACE, '--grace'),
    unusedMs: values.unused === undefined ? undefined : parseDuration(values.unused, '--unused'),
    listUsage: values.usage === true,
    days: usageDaysArgument(values.days),
    onlyThisKey: values['only-this-key'] === true,
    json: values.json === true,
    target: values,
  };
};

/** Runs a checked invocation on its target. */
const dispatch = async (invocation: KeysInvocation, target: KeysTarget, context: CommandContext): Promise<number> => {
  const { command, keyId = '', name, scopes, plan, expiresAt, graceMs, unusedMs, listUsage, days, onlyThisKey } = invocation;
  switch (command) {
    case 'create':
      return createKey(context, { name, scopes, expiresAt, plan });
    case 'list':
      return listKeys(context, { unusedMs, usage: listUsage });
    case 'show':
      return showKey(context, keyId);
    case 'usage':
      return showUsage(context, keyId, days);
    case 'roll':
      return rollKey(context, keyId, { graceMs, expiresAt });
    case 'set-plan':
      return setKeyPlan(context, keyId, plan ?? '');
    case 'revoke':
      return revokeKey(context, keyId, { onlyThisKey });
    case 'capacity':
      return showCapacity(context);
    case 'audit':
      return runAuditCommand(invocation.keyId, {
        json: context.json,
        tableName: target.tableName,
        endpoint: target.onAws ? undefined : target.endpoint,
        region: target.region,
        client: target.client,
        print: context.print,
      });
  }
};

/** Runs one key command; returns the process exit code. A refusal is thrown: UsageError (exit 2) or another Error (exit 1). */
export const runKeysCommand = async (argv: string[], options: KeysCommandOptions = {}): Promise<number> => {
  const printer = keysPrinter(argv, options.print);
  try {
    const code = await runPrinting(argv, options, printer);
    await printer.flushed().catch((error: unknown) => {
      const why = error instanceof Error ? error.message : String(error);
      throw new Error(`the command ran to its end, but not all of its output was written, as ${why}.`);
    });
    return code;
  } catch (error) {
    throw maskedError(printableError(error), printer.secrets);
  }
};

/**
 * The error with every non-printable character of its message escaped, line by line (printable,
 * as `list`, `show` and `audit` print a stored value): a name, plan or id a console edit wrote,
 * quoted in a refusal, cannot drive the terminal or forge a line. The line breaks the tool writes
 * itself stay: the failure line joins them.
 */
const printableError = (error: unknown): Error => {
  const escape = (message: string) => message.split('\n').map(printable).join('\n');
  if (!(error instanceof Error)) return new Error(escape(String(error)));
  error.message = escape(error.message);
  return error;
};

/** The command line run, its lines printed by `printer`. */
const runPrinting = async (argv: string[], options: KeysCommandOptions, { print, showNewKey }: KeysPrinter): Promise<number> => {
  const env = options.env ?? process.env;
  const invocation = parseKeysCommand(argv, new Date());
  if ('usage' in invocation) {
    print(USAGE);
    return invocation.usage;
  }
  const target = await resolveKeysTarget(invocation.target, env, {
    cloudFormation: options.cloudFormation,
    cloudFormationIn: options.cloudFormationIn,
    writes: WRITES.has(invocation.command),
  });
  const usageKeys = usageKeysFor(target, env, options.apiGateway, options.apiGatewayIn);
  const context: CommandContext = {
    keys: apiKeysRepository({ client: target.client, tables: { apiKeys: target.tableName, apiKeyLastUse: target.lastUseTableName } }),
    usageKeys,
    authorizerCache: authorizerCacheFor(target, options.apiGateway, options.apiGatewayIn),
    print,
    showNewKey,
    json: invocation.json,
    caller: () => actorOf(target, env, options.sts),
  };
  try {
    // A plan is checked against the plans in force (locally) or the stage's (on AWS), before any write.
    const { command, plan } = invocation;
    if (command === 'set-plan') usageKeys.checkPlan(plan ?? '');
    if (command === 'create') usageKeys.checkPlan(plan ?? DEFAULT_PLAN);
    return await dispatch(invocation, target, context);
  } catch (error) {
    // The audit log has its own lines for a missing log or a refusal; the keys table's are these.
    throw invocation.command !== 'audit' || error instanceof DatabaseUnavailable ? targetFailure(target, error) : error;
  } finally {
    usageKeys.close();
    target.client.destroy();
  }
};
