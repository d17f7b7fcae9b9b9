/**
 * `npm start`: the whole API on http://127.0.0.1:3000/v1, on DynamoDB Local started here (in
 * memory unless --persist DIR), with a local API key registered and printed. Ctrl-C stops
 * everything it started.
 */
// First: DYNAMODB_TIMEOUT_MS is read as the functions' modules load, and refused before then.
import './database-timeout-setting';
import { DYNAMODB_TIMEOUT_VARIABLE } from '../../shared/config';
import { HEALTH_REUSE_SECONDS } from '../../shared/database-health';
import { DYNAMODB_DEFAULTS } from '../../shared/dynamodb';
import { REGION_COUNT, REGION_INDEX_VARIABLE } from '../../shared/ids';
import { HOME_REGION_VARIABLE } from '../../shared/key-audit';
import type { PlanLimits } from '../../shared/plan-policy';
import { PLANS_FILE_VARIABLE, type Plans } from '../../shared/plans';
import { stageRegionsOf } from '../../shared/usage-key-release';
import { apiKeysTable, STATUS_SHARDS_VARIABLE, tableDefinitions } from '../../shared/tables';
import { parseCommandLine, reportFailure, UsageError } from '../cli';
import { DEFAULT_DYNAMODB_LOCAL_PORT, type DynamoDBLocal } from '../dynamodb-local';
import { DEFAULT_AUTH_CACHE_TTL_SECONDS, DEFAULT_THROTTLE } from './gateway';
import { AuditStreamUnreadable } from './key-audit-stream';
import { RevokedKeyError, startLocalStack, type LocalStack } from './local-stack';
import { HELP, startSettings, type Settings } from './settings';
import { BODY_TIMEOUT_SECONDS } from './server';

const TABLES = Object.values(tableDefinitions);
const TABLE_VARIABLES = TABLES.map((table) => table.nameVariable).join(', ');
const TABLE_DEFAULTS = TABLES.map((table) => table.defaultName).join(', ');

const USAGE = `Usage: npm start [-- --persist DIR]

Serves the pet store API on http://127.0.0.1:$PORT/v1 with DynamoDB Local.

Options:
  --persist DIR   keep the data in DIR between runs (default: in memory)
  --help          show this help

Environment:
  PORT                  port of the API (default 3000)
  API_KEY               local API key to register (default: a new random key each start); it is on the
                        default plan, with the deployed limits (the banner's Plan: line names them)
  DYNAMODB_ENDPOINT     use this DynamoDB instead of starting DynamoDB Local
  DYNAMODB_LOCAL_PORT   port for the DynamoDB Local it starts (default ${DEFAULT_DYNAMODB_LOCAL_PORT}); it listens on
                        every network interface: see "Settings" in README.md
  ${DYNAMODB_TIMEOUT_VARIABLE}   milliseconds each DynamoDB call of the functions has to connect and to be answered
                        (default ${DYNAMODB_DEFAULTS.requestTimeout}, as deployed); more for a DynamoDB Local on a busy machine
  AUTH_CACHE_TTL        seconds the authorizer's answer is cached per key (default ${DEFAULT_AUTH_CACHE_TTL_SECONDS}); a key
                        whose item changes loses its cached answers within a second (with HOME_REGION:
                        when the audit trail reads the change and flushes the cache, about a second)
  HEALTH_REUSE_SECONDS  seconds GET /v1/health reuses its answer, as each deployed function does (default
                        ${HEALTH_REUSE_SECONDS}); 0: it reads the tables on every request
  THROTTLE_RATE         requests per second before 429 (default ${DEFAULT_THROTTLE.rate})
  THROTTLE_BURST        burst size before 429 (default ${DEFAULT_THROTTLE.burst})
  BODY_TIMEOUT          seconds a request body has to arrive whole once the key is checked (default
                        ${BODY_TIMEOUT_SECONDS}); past it, 400 and the connection closed
  PLANS_FILE            JSON file of usage plans replacing those of shared/plans.ts:
                        {"plans": {"NAME": {"rateLimit": 5, "burstLimit": 5, "quota": {"limit": 100, "period": "DAY"}}}}
  ${TABLE_VARIABLES}
                        table names (default ${TABLE_DEFAULTS})
  AWS_REGION            the AWS region this server stands for, as Lambda tells a function where it runs
                        (default: none; DynamoDB Local ignores it): key changes made here are stamped
                        with it, and its audit trail records those
  HOME_REGION           the stage's home region, when several servers stand for a stage's regions (default:
                        unset, one region): a key change with no region stamp is recorded there only, and
                        cached answers go only when this server's audit trail flushes its cache, as each
                        region's key-audit function flushes its stage deployed
  STAGE_REGIONS         with HOME_REGION: the stage's regions, comma-separated, the home region first (default:
                        unset): a key change stamped with a region not among them (an edit by hand) is
                        recorded in the home region, as deployed
  ${REGION_INDEX_VARIABLE}          this region's position in the stage's regions, 0 to ${REGION_COUNT - 1} (default 0): the new pets'
                        ids carry it, so that two regions never mint the same id
  STAGE_REGION_COUNT    regions the stage this server stands for runs in (default 1): each plan's quota is
                        split evenly over them, as each region of such a stage meters it (docs/api.md)
  ${STATUS_SHARDS_VARIABLE}    shards of the pets' status index (default 1); with --persist, keep the count the
                        data was written with, or raise it: see docs/operations.md, Status index shards
`;

/** The local key: each start registers one under this name and revokes the one before. */
const LOCAL_KEY_NAME = 'local';

/** A value as one shell word, quoted only when it must be. */
const shellWord = (value: string) => (/^[\w.:/@%+=,-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`);

const count = (value: number) => value.toLocaleString('en-US');

/** A plan's limits in words: rate, burst and quota. */
const describeLimits = ({ rateLimit, burstLimit, quota }: PlanLimits): string =>
  `${count(rateLimit)} requests a second, bursts of ${count(burstLimit)}, ` +
  (quota ? `${count(quota.limit)} a ${quota.period.toLowerCase()}` : 'no quota');

/**
 * The banner's lines on the printed key's plan: its name and limits, whether they are the deployed
 * ones (PLANS_FILE replaces them), that past them the server answers 429, and how to get more. The
 * local key is metered as a deployed one is, so that a client's tests meet the 429s here first.
 */
const planLines = (
  plans: Plans,
  plansFile: string | undefined,
  keyId: string,
  keyPlan: string | undefined,
  keys: (command: string) => string,
): string[] => {
  if (keyPlan === undefined) {
    return ["Plan:          none: the key's item was changed by hand, so the API refuses it (401): set another API_KEY"];
  }
  const limits = Object.hasOwn(plans, keyPlan) ? plans[keyPlan] : undefined;
  const source = plansFile ? `from ${PLANS_FILE_VARIABLE} ${plansFile}` : 'as deployed (shared/plans.ts)';
  const roomier = Object.entries(plans)
    .filter(([name, plan]) => name !== keyPlan && plan.rateLimit > (limits?.rateLimit ?? 0))
    .sort(([, a], [, b]) => b.rateLimit - a.rateLimit)[0]?.[0];
  const more = roomier ? keys(`set-plan ${keyId} ${roomier}`) : `${PLANS_FILE_VARIABLE} (see "Settings" in README.md)`;
  return [
    `Plan:          ${keyPlan}: ${limits ? `${describeLimits(limits)}, ${source}` : `no plan in force has this name (${source})`}`,
    `               past them the API answers 429; more: ${more}`,
  ];
};

/** An `npm run keys` command that reaches this server's keys table, settings included. */
const keysCommand = (
  settings: Settings,
  database: DynamoDBLocal | undefined,
  apiKeysTableNameInUse: string,
  plansFile: string | undefined,
  command = 'list',
): string => {
  const env = [
    ...(settings.DYNAMODB_ENDPOINT ? [`DYNAMODB_ENDPOINT=${shellWord(settings.DYNAMODB_ENDPOINT)}`] : []),
    ...(database && database.port !== DEFAULT_DYNAMODB_LOCAL_PORT ? [`DYNAMODB_LOCAL_PORT=${database.port}`] : []),
    ...(apiKeysTableNameInUse !== apiKeysTable.defaultName ? [`API_KEYS_TABLE_NAME=${shellWord(apiKeysTableNameInUse)}`] : []),
    // The tool checks plan names against the plans in force.
    ...(plansFile ? [`${PLANS_FILE_VARIABLE}=${shellWord(plansFile)}`] : []),
  ];
  return [...env, `npm run keys -- ${command}`].join(' ');
};

const main = async () => {
  const { values } = parseCommandLine({ options: { persist: { type: 'string' }, help: { type: 'boolean' } } }, HELP);
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const { settings, plans } = startSettings(process.env);
  if (settings.DYNAMODB_ENDPOINT && values.persist) {
    throw new UsageError('--persist applies to the DynamoDB Local it starts, not to DYNAMODB_ENDPOINT.');
  }

  let starting: Promise<LocalStack> | undefined;
  // Whatever ends this process, DynamoDB Local goes with it (once it has started, if it is starting).
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping…`);
    await starting?.then(
      (stack) => stack.stop(),
      () => undefined,
    );
    process.exit(0);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal));
  // npm runs this through `sh -c`, which dies on SIGTERM without passing it on: when the parent
  // goes away, so does the server, and DynamoDB Local with it.
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && void shutdown('parent exited'), 1_000).unref();

  if (!settings.DYNAMODB_ENDPOINT) {
    console.log(`Starting DynamoDB Local (${values.persist ? `data in ${values.persist}` : 'in memory'})…`);
  }
  starting = startLocalStack({
    dynamodbEndpoint: settings.DYNAMODB_ENDPOINT,
    dynamodbLocal: { port: settings.DYNAMODB_LOCAL_PORT, persistDir: values.persist },
    apiKey: settings.API_KEY,
    keyName: LOCAL_KEY_NAME,
    // One local key works at a time: with --persist (or DYNAMODB_ENDPOINT) the previous start's key is in the table.
    revokeOtherKeysOfItsName: true,
    // Changes to keys are recorded in the local audit log (npm run keys -- audit), as deployed.
    keyAudit: true,
    // One region of several: its audit trail records the unstamped changes only there, and its
    // flush alone drops the cached answers of a changed key (local-stack.ts).
    homeRegion: process.env[HOME_REGION_VARIABLE] || undefined,
    stageRegions: stageRegionsOf(process.env),
    server: {
      port: settings.PORT,
      authCacheTtlSeconds: settings.AUTH_CACHE_TTL,
      healthReuseSeconds: settings.HEALTH_REUSE_SECONDS,
      throttle: { rate: settings.THROTTLE_RATE, burst: settings.THROTTLE_BURST },
      bodyTimeoutSeconds: settings.BODY_TIMEOUT,
      plans,
      // The stage's access log, on standard output with the functions' lines, as one JSON line each.
      accessLog: (line) => void process.stdout.write(`${JSON.stringify(line)}\n`),
    },
  });
  let stack: LocalStack;
  try {
    stack = await starting;
  } catch (error) {
    if (error instanceof RevokedKeyError) throw new Error('API_KEY names a key that has been revoked in this database: choose another.');
    if (error instanceof AuditStreamUnreadable) {
      throw new Error(
        settings.DYNAMODB_ENDPOINT
          ? `${error.message}: DYNAMODB_ENDPOINT must be a DynamoDB that serves the streams of its tables, such as DynamoDB Local.`
          : `${error.message}: start again.`,
      );
    }
    throw (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
      ? new Error(`port ${settings.PORT} is in use: set PORT to another port.`)
      : error;
  }
  const { url, key, keyId, keyPlan, replacedKeyIds, dynamodbLocal: database, dynamodbEndpoint, tables } = stack;
  // Without its database the API could only answer 503 for ever: say so once, and end.
  void database?.died.then((how) => {
    if (stopping) return;
    stopping = true;
    const data = values.persist ? `its data is kept in ${values.persist}` : 'its in-memory data is gone';
    process.exit(
      reportFailure(
        'npm start',
        new Error(`DynamoDB Local stopped (${how}); the API cannot answer without it, so it stops too (${data}): start again.`),
      ),
    );
  });
  const plansFile = process.env[PLANS_FILE_VARIABLE] || undefined;
  const keys = (command?: string) => keysCommand(settings, database, tables.apiKeys, plansFile, command);
  console.log(
    [
      '',
      `Pet store API: ${url}`,
      ...(database
        ? [
            `DynamoDB:      DynamoDB Local (${values.persist ? `data in ${values.persist}` : 'in memory'}) ` +
              `on port ${database.port} of every network interface:`,
            '               reachable from the network, with no authentication (see "Settings" in README.md)',
          ]
        : [`DynamoDB:      ${dynamodbEndpoint}`]),
      `API key:       ${key}   (id ${keyId}; shown once, stored as a hash)`,
      ...replacedKeyIds.map((replaced) => `               replaces the local key ${replaced} of an earlier start, now revoked`),
      ...planLines(plans, plansFile, keyId, keyPlan, keys),
      `Keys:          ${keys()}   (create, revoke: npm run keys -- --help)`,
      `Docs:          ${url}/docs   (OpenAPI: ${url}/openapi.json)`,
      '',
      'Try it:',
      `  curl -i -H "Authorization: Bearer ${key}" ${url}/pets`,
      `  curl -i -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" \\`,
      `       -d '{"name":"Rex","categoryId":1}' ${url}/pets`,
      '',
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
};

try {
  await main();
} catch (error) {
  process.exit(reportFailure('npm start', error));
}
