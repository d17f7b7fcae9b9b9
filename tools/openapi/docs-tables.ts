/**
 * The documents' tables of operations, generated from the route table and what is derived from it
 * (the OpenAPI document, the functions and their alarms, the pre-traffic checks) and the smoke's
 * check declarations, so that adding an operation or a check changes them by `npm run openapi`,
 * never by hand. A table lives in a document between
 *
 *   <!-- generated: <table> (npm run openapi) -->
 *   <!-- end generated -->
 *
 * and `npm run openapi -- --check` (and the tests) fail when one is stale.
 */
import { readdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  AUTHORIZER_FAILURES_ALARM_ID,
  functionErrorsAlarmId,
  functionNameOf,
  methodServerErrorRateAlarmId,
  newVersionErrorsAlarmId,
  RELEASE_ID,
} from '../../infra/constructs/names';
import { AWS_LIMITS, RCU_PER_SHARD_QUERY, STATUS_INDEX_WCU_PER_CREATE, stageCapacity, WARM_DURATION_MS } from '../../infra/capacity';
import { savedQueries, savedQueryName, type QueriedLogGroup } from '../../infra/log-queries';
import { DEFAULT_STAGE, stageRegionalPlans, stageRegionCount, stages, stageSettings } from '../../infra/stages';
import { tableAccess, type FunctionName } from '../../infra/constructs/pet-store-functions';
import { PROJECT_NAME } from '../../shared/project';
import { projectRoot } from '../../shared/project-root';
import { releaseChecks, type CheckedFunction } from '../../shared/release-checks';
import { BASE_PATH, routes, type Route } from '../../shared/routes';
import { SMOKE_CHECKS, type SmokeCheck } from '../smoke/checks';
import { markdownTable } from '../markdown-table';
import { buildOpenApiDocument } from './document';

/** The documents that may hold generated tables: README.md and docs/*.md. */
export const documentPaths = async (): Promise<string[]> => [
  'README.md',
  ...(await readdir(resolve(projectRoot, 'docs')))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

const REGION = /<!-- generated: ([\w-]+) \(npm run openapi\) -->\n([\s\S]*?)<!-- end generated -->/g;
const OPENING = /<!-- generated: ([\w-]+)/g;

/** A function's name on a stage, as the console shows it. */
const functionName = (name: string) => `\`${functionNameOf(`${PROJECT_NAME}-<stage>`, name)}\``;
const code = (text: string) => `\`${text}\``;
/** A generated table, ending in a newline as a document's block does. */
const table = (header: readonly string[], rows: ReadonlyArray<readonly string[]>): string => `${markdownTable(header, rows)}\n`;

type OpenApiOperation = {
  parameters?: Array<{ $ref: string }>;
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
  responses: Record<string, { description: string; headers?: Record<string, unknown> }>;
};
type OpenApiParameter = { name: string; in: string };

/** docs/api.md: each operation, its method and path, the scope it needs, and what it answers when it works. */
const operationsTable = (): string => {
  const document = buildOpenApiDocument() as unknown as {
    paths: Record<string, Record<string, OpenApiOperation>>;
    components: { parameters: Record<string, OpenApiParameter> };
  };
  const operationOf = (route: Route) => {
    const operation = document.paths[route.path]?.[route.method.toLowerCase()];
    if (!operation) throw new Error(`The OpenAPI document has no ${route.method} ${route.path}.`);
    const success =
      Object.entries(operation.responses).find(([status]) => /^2/.test(status)) ??
      Object.entries(operation.responses).find(([status]) => status === '501');
    if (!success) throw new Error(`${route.operationId} documents no answer for when it works.`);
    return { operation, status: success[0], answer: success[1], headers: Object.keys(success[1].headers ?? {}) };
  };
  // A row names the headers of its own answer; those every answer has are in api.md, Other headers.
  const common = routes
    .map((route: Route) => operationOf(route).headers)
    .reduce((shared, headers) => shared.filter((header) => headers.includes(header)));
  const rows = routes.map((route: Route) => {
    const { operation, status, answer, headers } = operationOf(route);
    const query = (operation.parameters ?? [])
      .map(({ $ref }) => document.components.parameters[$ref.split('/').at(-1) ?? ''])
      .filter((parameter) => parameter?.in === 'query')
      .map((parameter) => `${parameter?.name}=`);
    const body = Object.values(operation.requestBody?.content ?? {})[0]
      ?.schema.$ref?.split('/')
      .at(-1);
    const own = headers.filter((header) => !common.includes(header));
    return [
      `${code(route.operationId)}${route.deprecated ? ' (deprecated)' : ''}`,
      `${code(`${route.method} ${BASE_PATH}${route.path}${query.length > 0 ? `?${query.join('&')}` : ''}`)}${body ? ` with a ${code(body)}` : ''}`,
      route.scope === undefined ? NO_KEY : code(route.scope),
      `${code(status)}: ${answer.description}${own.length > 0 ? ` Headers: ${own.map(code).join(', ')}.` : ''}`,
    ];
  });
  return table(['Operation', 'Method and path', 'Scope', 'Answer'], rows);
};

/** The scope column of a keyless operation: it needs no key at all. */
export const NO_KEY = 'none: no key';

/** The operations a function serves: those with a handler. */
const handledRoutes = () => routes.filter((route) => 'handler' in route);

/** docs/operations.md: each operation's function, its code and the alarm on its errors. */
const functionsTable = (): string =>
  table(
    ['Operation', 'Function', 'Code', 'Alarm'],
    handledRoutes().map((route) => [
      code(route.operationId),
      functionName(route.operationId),
      code(route.handler),
      code(functionErrorsAlarmId(route.operationId)),
    ]),
  );

/** docs/operations.md: each released function's own release alarms and its pre-traffic check. */
const releaseTable = (now: Date): string => {
  const checks = releaseChecks(now);
  const released: CheckedFunction[] = [...handledRoutes().map((route) => route.operationId as CheckedFunction), 'authorizer'];
  const releaseAlarm = (id: string) => code(`${RELEASE_ID}${id}`);
  return table(
    ['Function', 'Its own release alarms', 'Pre-traffic check'],
    released.map((name) => {
      const alarms =
        name === 'authorizer'
          ? [releaseAlarm(AUTHORIZER_FAILURES_ALARM_ID)]
          : [
              releaseAlarm(newVersionErrorsAlarmId(name)),
              ...routes
                .filter((route) => route.operationId === name)
                .map((_route, position) => releaseAlarm(methodServerErrorRateAlarmId(name, position))),
            ];
      const checked = checks.filter((check) => check.target === name).map((check) => check.name);
      if (checked.length === 0) throw new Error(`No pre-traffic check for ${name}.`);
      return [functionName(name), alarms.join(', '), checked.map(code).join('; ')];
    }),
  );
};

/** The log groups a saved query reads, as docs/operations.md's Logs table names them. */
const logGroupNames: Readonly<Record<QueriedLogGroup, string>> = {
  access: 'access log',
  operations: "operations' functions",
  authorizer: 'authorizer',
  audit: 'audit trail',
};

/** docs/operations.md: the stage's saved Logs Insights queries, what each reads and answers. */
const savedQueriesTable = (): string =>
  table(
    ['Saved query', 'Reads', 'Answers'],
    savedQueries.map((query) => [
      code(savedQueryName(`${PROJECT_NAME}-<stage>`, query)),
      query.logGroups.map((group) => logGroupNames[group]).join(', '),
      query.answers,
    ]),
  );

/** docs/architecture.md: each function's grants, one row each: the route table's, then the other functions'. */
const grantsTable = (): string =>
  table(
    ['Function', 'Table or index', 'Actions', 'Only these attributes', 'ReturnValues'],
    (Object.entries(tableAccess) as Array<[FunctionName, (typeof tableAccess)[FunctionName]]>).flatMap(([name, grants]) =>
      grants.length === 0
        ? [[code(name), 'none (its stream: through its event source mapping)', '', '', '']]
        : grants.map((grant) => [
            code(name),
            `${code(grant.table)}${grant.index === undefined ? '' : ` index ${code(grant.index)}`}`,
            grant.actions.map((action) => code(action.replace(/^dynamodb:/, ''))).join(', '),
            grant.attributes?.map(code).join(', ') ?? 'any',
            grant.returnValues?.map(code).join(', ') ?? 'any',
          ]),
    ),
  );

/** docs/deploy.md: the smoke's checks, in the order they run, from their declarations. */
const smokeTable = (): string =>
  table(
    ['Check', 'What it does', 'A failure tells you'],
    SMOKE_CHECKS.map((check: SmokeCheck) => [
      code(check.name),
      `${check.does}${check.writes || check.readsWritten ? ' (`skip` with `--read-only`)' : ''}`,
      check.failureTells,
    ]),
  );

const count = (value: number) => value.toLocaleString('en-US');

/**
 * docs/architecture.md: each stage's ceilings from its own settings (infra/stages.ts) and AWS's
 * limits (infra/capacity.ts): what its status index takes, what its listing serves, and the
 * Lambda concurrency its throttle calls for.
 */
const scalingTable = (): string => {
  const stageNames = [DEFAULT_STAGE, ...Object.keys(stages)];
  return table(
    [
      'Stage',
      'Status index shards',
      `Creates of one status a second before the index throttles (shards × ${count(AWS_LIMITS.partitionWcuPerSecond)} WCU ÷ ${STATUS_INDEX_WCU_PER_CREATE.largest} WCU, the largest pet)`,
      'Stage throttle (requests a second, burst)',
      `Pages of one status a second before a shard throttles (${count(AWS_LIMITS.partitionRcuPerSecond)} RCU ÷ ${RCU_PER_SHARD_QUERY} RCU a Query)`,
      'RCU a page of one status (a Query a shard)',
      `Lambda concurrency at the stage rate (× ${WARM_DURATION_MS} ms warm; account: ${count(AWS_LIMITS.lambdaAccountConcurrency)})`,
    ],
    stageNames.map((stage) => {
      const settings = stageSettings(stage);
      const capacity = stageCapacity(settings);
      return [
        stage === DEFAULT_STAGE ? `${code(stage)} and any unlisted stage` : code(stage),
        String(capacity.shards),
        count(capacity.createsOfOneStatus),
        `${count(settings.throttle.rateLimit)}, ${count(settings.throttle.burstLimit)}`,
        count(capacity.pagesOfOneStatus),
        String(capacity.rcuPerPage),
        count(capacity.concurrencyAtRate),
      ];
    }),
  );
};

/**
 * docs/architecture.md: each plan's quota in each region of every stage that runs in several
 * (infra/stages.ts), as regionalPlans splits it, and what the split leaves unused.
 */
const regionalQuotasTable = (): string =>
  table(
    ['Stage', 'Regions', 'Plan', 'Quota', 'Each region', 'Unused'],
    Object.keys(stages).flatMap((stage) => {
      const settings = stageSettings(stage);
      const regionCount = stageRegionCount(settings);
      if (regionCount === 1) return [];
      const regional = stageRegionalPlans(settings);
      return Object.entries(settings.plans).flatMap(([name, { quota }]) => {
        const share = regional[name]?.quota;
        if (quota === undefined || share === undefined) return [];
        const period = quota.period.toLowerCase();
        return [
          [
            code(stage),
            String(regionCount),
            code(name),
            `${count(quota.limit)} a ${period}`,
            `${count(share.limit)} a ${period}`,
            count(quota.limit - share.limit * regionCount),
          ],
        ];
      });
    }),
  );

/** Every generated table, by the name its markers give. */
export const docTables = (now: Date = new Date()): Readonly<Record<string, string>> => ({
  operations: operationsTable(),
  functions: functionsTable(),
  release: releaseTable(now),
  'saved-queries': savedQueriesTable(),
  smoke: smokeTable(),
  grants: grantsTable(),
  scaling: scalingTable(),
  'regional-quotas': regionalQuotasTable(),
});

/** The generated regions of a document, by table: what lies between its markers. */
export const regionsOf = (text: string): Array<readonly [string, string]> =>
  [...text.matchAll(REGION)].map((match) => [match[1] ?? '', match[2] ?? ''] as const);

/**
 * A document with each generated region's table as it is now. Throws on a region it cannot
 * close or a table it does not know: a misspelled marker must not go unchecked.
 */
export const withTables = (path: string, text: string, tables: Readonly<Record<string, string>>): string => {
  const opened = [...text.matchAll(OPENING)].map((match) => match[1]);
  const closed = [...text.matchAll(REGION)].map((match) => match[1]);
  if (opened.length !== closed.length) throw new Error(`${path}: a generated region has no <!-- end generated --> after it.`);
  return text.replace(REGION, (_region, name: string) => {
    const contents = tables[name];
    if (contents === undefined) throw new Error(`${path}: no generated table named ${name} (known: ${Object.keys(tables).join(', ')}).`);
    return `<!-- generated: ${name} (npm run openapi) -->\n${contents}<!-- end generated -->`;
  });
};

/** The documents that hold a generated table, with their tables as they are now; throws when a table is in none. */
export const generatedDocuments = async (now: Date = new Date()): Promise<Array<{ path: string; contents: string }>> => {
  const tables = docTables(now);
  const documents: Array<{ path: string; contents: string }> = [];
  const placed = new Set<string>();
  for (const path of await documentPaths()) {
    const text = await readFile(resolve(projectRoot, path), 'utf8');
    for (const [name] of regionsOf(text)) placed.add(name);
    const contents = withTables(path, text, tables);
    if (text.includes('<!-- generated: ')) documents.push({ path, contents });
  }
  const unplaced = Object.keys(tables).filter((name) => !placed.has(name));
  if (unplaced.length > 0) throw new Error(`The generated table(s) ${unplaced.join(', ')} are in no document.`);
  return documents;
};
