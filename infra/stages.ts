/**
 * Per-stage settings, in one place. `cdk deploy -c stage=<name>` picks a stage by name; a name
 * not listed here gets `defaultSettings`, so a developer can deploy `-c stage=alice` without
 * touching this file. Edit this file to change what a stage is.
 */
import { RemovalPolicy, Token } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { REGION_COUNT } from '../shared/ids';
import { plans, Plans, regionalPlans, type Plan } from '../shared/plans';
import { routes, type Route } from '../shared/routes';
import { isStatusShardCount } from '../shared/config';
import { MAX_STATUS_SHARDS } from '../shared/tables';
import { AWS_LIMITS, statusCreatesCeiling } from './capacity';

/** The custom domain of a stage in one region. */
export interface CustomDomain {
  /** The API's host name, e.g. `api.example.com`. Point a DNS alias at the stack's `CustomDomainTarget`. */
  readonly domainName: string;
  /** An ACM certificate for that name, in the stack's region. */
  readonly certificateArn: string;
}

/**
 * The custom domain of a stage in several regions (infra/constructs/regional-routing.ts): one
 * `domainName` served in every region behind Route 53 latency records, each region's answers
 * taken out while its health check (which follows the region's health probe) fails, and each
 * region's own name `<region>.<domainName>`, which `npm run smoke -- --region` uses.
 */
export interface RegionalCustomDomain {
  /** The name clients use, e.g. `api.example.com`. */
  readonly domainName: string;
  /** An ACM certificate in each region, by region, covering `domainName` and `<region>.<domainName>`. */
  readonly certificateArns: Readonly<Record<string, string>>;
  /** The Route 53 public hosted zone the records go in: its id and its name (`example.com`). */
  readonly hostedZoneId: string;
  readonly zoneName: string;
}

/** A region's own name under a stage's domain: `us-east-2.api.example.com`. */
export const regionalDomainName = (domainName: string, region: string): string => `${region}.${domainName}`;

/**
 * How a new version of each function takes traffic. `AllAtOnce`: the functions' `live` aliases
 * move to the new versions in the stack update itself, no CodeDeploy (the fastest loop). The
 * others are CodeDeploy releases of the API's functions (infra/constructs/release.ts): a
 * pre-traffic hook checks the new versions first, then `Canary10Percent5Minutes` sends them 10%
 * of requests for 5 minutes before the rest, `Linear10PercentEvery1Minute` 10% more each minute;
 * an alarm during either rolls the release back (docs/operations.md, Releases).
 */
export type ReleaseStrategy = 'AllAtOnce' | 'Canary10Percent5Minutes' | 'Linear10PercentEvery1Minute';

/**
 * Lambda reserved concurrency for the API's functions. A reservation is both a floor and a
 * ceiling: the authorizer always has its executions, however busy a route is, and each
 * operation's function can use no more than its own, so one hot route is refused (by Lambda)
 * before it starves the rest. Every request needs the authorizer on a cache miss.
 */
export interface ReservedConcurrency {
  /** Executions kept for the authorizer alone. */
  readonly authorizer: number;
  /** Executions kept for, and the most used by, each operation's function (every route with a handler). */
  readonly eachOperation: number;
}

/** Lambda's default quota of concurrent executions, per account and region (new accounts may have less). */
export const DEFAULT_ACCOUNT_CONCURRENCY = AWS_LIMITS.lambdaAccountConcurrency;
/** Lambda refuses a reservation that leaves fewer than this many executions unreserved in the account. */
export const MIN_UNRESERVED_CONCURRENCY = 100;

export interface StageSettings {
  /**
   * Steady requests per second the stage accepts from all clients together, and the burst above
   * it; beyond, 429. The ceiling over every plan: no plan lets a key past it.
   */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  /**
   * The usage plans: each key's own rate, burst and quota (shared/plans.ts, which a stage may
   * override plan by plan). None may be above the stage throttle, the ceiling over all of them.
   */
  readonly plans: Plans;
  /**
   * How long API Gateway reuses the authorizer's answer for one key: a revoked key keeps
   * working for at most this long. 0 turns the cache off (one keys-table read per request).
   */
  readonly authorizerCacheTtlSeconds: number;
  /** How long the functions' logs and the access logs are kept. */
  readonly logRetention: RetentionDays;
  /** Where alarms are e-mailed; the address must confirm the subscription. None: alarms go to the topic only. */
  readonly alarmEmail?: string;
  /** Origins browsers may call the API from, e.g. `https://app.example.com`. None by default. */
  readonly corsAllowedOrigins: readonly string[];
  /**
   * A WAFv2 web ACL (regional) to put in front of the stage, e.g. your organisation's shared one.
   * None by default: bearer keys, checked before any function runs, and stage throttling bound abuse.
   */
  readonly webAclArn?: string;
  /**
   * Serve the API at `https://<domainName>/v1` only: its execute-api URL is then turned off. A
   * stage with `regions` takes a RegionalCustomDomain (a certificate per region, a hosted zone).
   */
  readonly customDomain?: CustomDomain | RegionalCustomDomain;
  /**
   * What `cdk destroy` does to the tables, logs and the audit trail's queue. RETAIN_ON_UPDATE_OR_DELETE
   * (CloudFormation's RetainExceptOnCreate) keeps them: data outlives the stack, and a rolled-back
   * first create still deletes what it made, so the deploy can be run again. The tables' deletion
   * protection, which would stop that rollback, is turned on by the stack, last in every deploy
   * (infra/constructs/table-protection.ts). A plain RETAIN would also keep them when the stack's
   * first create fails and rolls back, and the retry would then fail on their fixed names ("already exists").
   */
  readonly removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE | RemovalPolicy.DESTROY;
  /** CloudFormation termination protection: `cdk destroy` refuses until it is turned off in the console. */
  readonly terminationProtection: boolean;
  /**
   * How a new version of the functions takes traffic: at once (development stages), or a
   * CodeDeploy canary or linear release (staging and prod, so that staging rehearses prod's).
   */
  readonly release: ReleaseStrategy;
  /**
   * The AWS regions the stage runs in at once, e.g. `['eu-west-1', 'us-east-1']`. A region's
   * position is its index in the pet ids it mints (shared/ids.ts), which keeps two regions from
   * minting the same id: add a region at the end, never reorder the list. At most REGION_COUNT.
   * None: the stage runs in the one region it is deployed to, index 0. Several: the first is the
   * stage's home (where keys are written and once-only jobs run), and the list is one region set
   * of DynamoDB's strongly consistent global tables: three regions, or two and `witnessRegion`
   * (docs/architecture.md, Regions). A stage that keeps its data records its regions in
   * infra/deployed-regions.json: a region dropped from this list is refused at synth, as the
   * regions are fixed (dropping one would delete its replicas' data): make a new stage.
   */
  readonly regions?: readonly string[];
  /**
   * For a stage in two regions: the third region of their region set, which holds no replica of
   * the strongly consistent tables, only a witness of their writes, and runs no stack of the stage.
   */
  readonly witnessRegion?: string;
  /**
   * Reserved concurrency for the authorizer and each operation's function. Off by default: it
   * needs an account whose concurrency quota leaves room for it (docs/operations.md, Reserved concurrency).
   */
  readonly reservedConcurrency?: ReservedConcurrency;
  /**
   * The account's quota of concurrent Lambda executions in the stage's region (Service Quotas),
   * less what other stacks in the account reserve: what this stage's reservations are checked
   * against.
   */
  readonly accountConcurrency: number;
  /**
   * The status index's shards: the creates of one status spread over this many partitions, each
   * taking 1,000 write units a second, and a listing of one status sends this many Queries. It must
   * carry the stage's burst of creates of one status, at the largest pet. Raise it, never lower it:
   * docs/operations.md, Status index shards.
   */
  readonly statusIndexShards: number;
  /**
   * How many of the stage's requests X-Ray traces (an X-Ray sampling rule on its API stage, whose
   * decision the functions follow): every request up to `reservoirPerSecond` each second, and
   * `fixedRate` of the rest. Each trace costs (infra/prices.ts): X-Ray's own default (one a
   * second and 5%) comes to about $13 a region each month under steady traffic for its reservoir alone.
   */
  readonly tracing: TracingSample;
}

/** A sampling of requests for X-Ray: a reservoir a second, then a share of the rest. */
export interface TracingSample {
  readonly reservoirPerSecond: number;
  /** From 0 to 1. */
  readonly fixedRate: number;
}

/** Any stage not named below: a developer's or a feature branch's, cheap to run and to throw away. */
export const defaultSettings: StageSettings = {
  // Above every plan's own minute (STAGE_THROTTLE_ALARM_SHARE): one client cannot fire StageThrottled.
  throttle: { rateLimit: 100, burstLimit: 200 },
  plans,
  authorizerCacheTtlSeconds: 60,
  logRetention: RetentionDays.ONE_WEEK,
  corsAllowedOrigins: [],
  removalPolicy: RemovalPolicy.DESTROY,
  terminationProtection: false,
  release: 'AllAtOnce',
  accountConcurrency: DEFAULT_ACCOUNT_CONCURRENCY,
  statusIndexShards: 1,
  // X-Ray's own default: a developer's stage traces what little it serves.
  tracing: { reservoirPerSecond: 1, fixedRate: 0.05 },
};

/** What a stage changes: any setting, and any plan by its name (the others stay as shared/plans.ts defines them). */
export type StageOverrides = Partial<Omit<StageSettings, 'plans'>> & { readonly plans?: Readonly<Record<string, Plan>> };

/** Prod: the stage clients depend on. */
const prod: StageOverrides = {
  throttle: { rateLimit: 1_000, burstLimit: 2_000 },
  // API Gateway's default: a revoked key stops working within 5 minutes.
  authorizerCacheTtlSeconds: 300,
  logRetention: RetentionDays.ONE_YEAR,
  removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
  terminationProtection: true,
  // A broken version meets 10% of requests, and its alarms, before the rest.
  release: 'Canary10Percent5Minutes',
  // A burst of 2,000 creates of one status, at 2 write units for the largest pet: 4,000 a second.
  statusIndexShards: 4,
  // One request in a hundred, and no reservoir: at prod's traffic that is plenty to see a path by.
  tracing: { reservoirPerSecond: 0, fixedRate: 0.01 },
};

export const stages: Readonly<Record<string, StageOverrides>> = {
  staging: {
    throttle: { rateLimit: 100, burstLimit: 200 },
    logRetention: RetentionDays.ONE_MONTH,
    // Staging rehearses prod's release: CodeDeploy, the pre-traffic hook and the release alarms
    // run here first, so prod is never the first place a release runs.
    release: 'Canary10Percent5Minutes',
    // Prod's shards, so that staging lists and writes as prod does.
    statusIndexShards: 4,
  },
  prod,
  // Prod's settings, served from three regions at once: one region set of DynamoDB's strongly
  // consistent global tables (docs/architecture.md, Regions). Its first region is its home.
  global: {
    ...prod,
    regions: ['us-east-1', 'us-east-2', 'us-west-2'],
    // Example values, so that the stage synthesizes offline: give your own domain, zone and certificates.
    customDomain: {
      domainName: 'api.example.com',
      certificateArns: {
        'us-east-1': 'arn:aws:acm:us-east-1:111111111111:certificate/00000000-0000-4000-8000-000000000001',
        'us-east-2': 'arn:aws:acm:us-east-2:111111111111:certificate/00000000-0000-4000-8000-000000000002',
        'us-west-2': 'arn:aws:acm:us-west-2:111111111111:certificate/00000000-0000-4000-8000-000000000003',
      },
      hostedZoneId: 'Z0EXAMPLE00000000000',
      zoneName: 'example.com',
    },
  },
};

/**
 * `-c ignoreReleaseAlarms=true`: this deploy's CodeDeploy release ignores its alarms (a fix
 * deployed during an incident, whose alarms already fire). Absent or `false`: they are watched.
 */
export const parseIgnoreReleaseAlarms = (value: unknown): boolean => {
  if (value === undefined || value === false || value === 'false') return false;
  if (value === true || value === 'true') return true;
  throw new Error(`Invalid ignoreReleaseAlarms '${String(value)}': use -c ignoreReleaseAlarms=true, or leave it out.`);
};

/**
 * The StageThrottled alarm (infra/constructs/throttling.ts) fires when the stage throttle, which
 * all clients share, refuses requests. API Gateway's access log cannot tell it from a plan's: both
 * are the gateway response THROTTLED (only the execution log names a usage plan). So the alarm
 * also needs the stage to serve at least this share of its rate in a minute, which no plan lets
 * one client reach: each plan's minute (its rate for 60 s, plus its burst) stays below it.
 */
export const STAGE_THROTTLE_ALARM_SHARE = 0.8;
/** The alarm's period, over which a plan's rate and burst are counted. */
export const STAGE_THROTTLE_ALARM_PERIOD_SECONDS = 60;

/** The requests the stage must serve in the alarm's period for a THROTTLED answer to be the stage's own. */
export const stageThrottleAlarmThreshold = (throttle: StageSettings['throttle']): number =>
  STAGE_THROTTLE_ALARM_SHARE * throttle.rateLimit * STAGE_THROTTLE_ALARM_PERIOD_SECONDS;

/** The most one key on the plan can be served in the alarm's period: its rate, plus its burst at the start. */
export const planRequestsPerAlarmPeriod = (plan: Pick<Plan, 'rateLimit' | 'burstLimit'>): number =>
  plan.rateLimit * STAGE_THROTTLE_ALARM_PERIOD_SECONDS + plan.burstLimit;

/** The stage used when `-c stage=…` is not given. */
export const DEFAULT_STAGE = 'dev';

/** A stage name must fit a CloudFormation stack name (`PetStore-<stage>`) and the resource names built from it. */
const STAGE_NAME_PATTERN = /^[a-z][a-z0-9-]{0,24}$/;

export const parseStageName = (value: unknown): string => {
  const stage = value === undefined ? DEFAULT_STAGE : String(value);
  if (!STAGE_NAME_PATTERN.test(stage)) {
    throw new Error(
      `Invalid stage name '${stage}': use 1–25 lower-case letters, digits or hyphens, starting with a letter (e.g. -c stage=staging).`,
    );
  }
  return stage;
};

export const stageSettings = (stage: string, overridesByStage: Readonly<Record<string, StageOverrides>> = stages): StageSettings => {
  const overrides = overridesByStage[stage] ?? {};
  const settings = { ...defaultSettings, ...overrides, plans: { ...defaultSettings.plans, ...overrides.plans } };
  const checked = Plans.safeParse(settings.plans);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new Error(`Stage '${stage}': plans.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}.`);
  }
  const { rateLimit, burstLimit } = settings.throttle;
  for (const [name, plan] of Object.entries(settings.plans)) {
    if (plan.rateLimit > rateLimit || plan.burstLimit > burstLimit) {
      throw new Error(
        `Stage '${stage}': plan '${name}' (${plan.rateLimit}/s, bursts of ${plan.burstLimit}) is above the stage throttle ` +
          `(${rateLimit}/s, bursts of ${burstLimit}), the ceiling over every plan: lower the plan or raise the throttle.`,
      );
    }
  }
  const threshold = stageThrottleAlarmThreshold(settings.throttle);
  for (const [name, plan] of Object.entries(settings.plans)) {
    if (planRequestsPerAlarmPeriod(plan) >= threshold) {
      throw new Error(
        `Stage '${stage}': plan '${name}' lets one key be served ${planRequestsPerAlarmPeriod(plan)} requests a minute, ` +
          `not below ${threshold} (${STAGE_THROTTLE_ALARM_SHARE * 100}% of the stage throttle's ${rateLimit}/s), ` +
          'so one client at its limit would fire StageThrottled: lower the plan or raise the throttle.',
      );
    }
  }
  checkRegions(stage, settings.regions ?? []);
  checkRegionalQuotas(stage, settings);
  checkCustomDomain(stage, settings);
  checkRegionSet(stage, settings);
  checkStatusIndexShards(stage, settings);
  if (settings.authorizerCacheTtlSeconds < 0 || settings.authorizerCacheTtlSeconds > 3600) {
    throw new Error(`Stage '${stage}': authorizerCacheTtlSeconds must be 0–3600 (API Gateway's limit).`);
  }
  checkReservedConcurrency(stage, settings);
  return settings;
};

/** A stage's regions each need their own index in pet ids: no region twice, no more than the ids have room for. */
const checkRegions = (stage: string, regions: readonly string[]) => {
  const twice = regions.find((region, index) => regions.indexOf(region) !== index);
  if (twice !== undefined) throw new Error(`Stage '${stage}': regions lists ${twice} twice; each region needs its own index in pet ids.`);
  if (regions.length > REGION_COUNT) {
    throw new Error(`Stage '${stage}': regions lists ${regions.length} regions; pet ids have room for ${REGION_COUNT} region indexes.`);
  }
};

/** Each region's share of every plan's quota must be a request at least (regionalPlans). */
const checkRegionalQuotas = (stage: string, settings: Pick<StageSettings, 'plans' | 'regions'>) => {
  try {
    stageRegionalPlans(settings);
  } catch (error) {
    throw new Error(`Stage '${stage}': ${(error as Error).message}`);
  }
};

/** A stage's number of regions: those it lists, or the one it is deployed to. */
export const stageRegionCount = ({ regions }: Pick<StageSettings, 'regions'>): number => Math.max(1, regions?.length ?? 0);

/** The stage's plans as each of its regions meters them: the rate and burst as they are, the quota split evenly (regionalPlans). */
export const stageRegionalPlans = (settings: Pick<StageSettings, 'plans' | 'regions'>): Plans =>
  regionalPlans(settings.plans, stageRegionCount(settings));

/** Whether a stage's custom domain is the one of a stage in several regions. */
export const isRegionalCustomDomain = (domain: CustomDomain | RegionalCustomDomain): domain is RegionalCustomDomain =>
  'certificateArns' in domain;

/** The domain a region's API Gateway serves, with that region's certificate: the stage's domain in every region. */
export const servedDomain = (domain: CustomDomain | RegionalCustomDomain, region: string): CustomDomain =>
  isRegionalCustomDomain(domain) ? { domainName: domain.domainName, certificateArn: domain.certificateArns[region] ?? '' } : domain;

/**
 * A stage in several regions serves its domain from each: it needs a certificate in each region
 * and a hosted zone that holds the name; a stage in one region, one certificate.
 */
const checkCustomDomain = (stage: string, { customDomain: domain, regions = [] }: StageSettings) => {
  if (domain === undefined) return;
  const at = `Stage '${stage}': customDomain`;
  if (regions.length === 0) {
    if (isRegionalCustomDomain(domain))
      throw new Error(`${at} gives certificateArns, for a stage with regions: give certificateArn, one certificate.`);
    return;
  }
  if (!isRegionalCustomDomain(domain))
    throw new Error(
      `${at} needs certificateArns (one per region: ${regions.join(', ')}), hostedZoneId and zoneName, as the stage runs in several regions.`,
    );
  const missing = regions.filter((region) => !domain.certificateArns[region]);
  if (missing.length > 0)
    throw new Error(
      `${at}.certificateArns has no certificate for ${missing.join(', ')}: each region serves ${domain.domainName} with its own (ACM is regional).`,
    );
  const zone = domain.zoneName.replace(/\.$/, '');
  if (domain.domainName !== zone && !domain.domainName.endsWith(`.${zone}`))
    throw new Error(`${at}.domainName ${domain.domainName} is not in the hosted zone ${zone}.`);
  if (!/^Z[A-Z0-9]+$/.test(domain.hostedZoneId))
    throw new Error(`${at}.hostedZoneId '${domain.hostedZoneId}' is not a Route 53 hosted zone id (Z…).`);
};

/**
 * The regions where DynamoDB's strongly consistent (MRSC) global tables run, by region set: a table's
 * replicas and witness must all be in one set. AWS documents these sets with the witness of a global
 * table: https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-dynamodb-globaltable-globaltablewitness.html
 */
export const MRSC_REGION_SETS: Readonly<Record<string, readonly string[]>> = {
  US: ['us-east-1', 'us-east-2', 'us-west-2'],
  EU: ['eu-west-1', 'eu-west-2', 'eu-west-3', 'eu-central-1'],
  AP: ['ap-northeast-1', 'ap-northeast-2', 'ap-northeast-3'],
};

/** A stage in several regions: its idempotency records are an MRSC table, whose regions are three of one set, or two and a witness. */
export const isMultiRegion = (settings: Pick<StageSettings, 'regions'>): boolean => (settings.regions ?? []).length > 1;

/**
 * Refuses regions an MRSC table cannot have: three regions of one region set, or two and a witness
 * region of their set, and nothing else (nor a witness for a stage in one region).
 */
const checkRegionSet = (stage: string, { regions = [], witnessRegion }: Pick<StageSettings, 'regions' | 'witnessRegion'>) => {
  const sets = Object.entries(MRSC_REGION_SETS)
    .map(([name, members]) => `${name}: ${members.join(', ')}`)
    .join('; ');
  if (!isMultiRegion({ regions })) {
    if (witnessRegion !== undefined)
      throw new Error(`Stage '${stage}': witnessRegion ${witnessRegion} is for a stage in two regions; remove it, or list two regions.`);
    return;
  }
  const members = witnessRegion === undefined ? regions : [...regions, witnessRegion];
  const expected = witnessRegion === undefined ? 3 : 2;
  const inOneSet = Object.values(MRSC_REGION_SETS).some((set) => members.every((region) => set.includes(region)));
  if (regions.length !== expected || !inOneSet || new Set(members).size !== members.length) {
    throw new Error(
      `Stage '${stage}': regions ${members.join(', ')} are not a region set of strongly consistent global tables: list three regions ` +
        `of one set, or two and a witnessRegion of their set (${sets}).`,
    );
  }
};

/** The stage's home region: the first of its regions, where keys are written and once-only jobs run; none for a stage in one region. */
export const homeRegionOf = (settings: Pick<StageSettings, 'regions'>): string | undefined =>
  isMultiRegion(settings) ? settings.regions?.[0] : undefined;

/** Whether a stack in `region` runs the stage's once-only jobs: in its home region, or in a stage's one region. */
export const isHomeRegion = (settings: Pick<StageSettings, 'regions'>, region: string | undefined): boolean => {
  const home = homeRegionOf(settings);
  return home === undefined || home === region;
};

/**
 * The index of the region a stage's stack is deployed to: its position in the stage's regions, 0
 * for a stage in one region. Refuses a region the list does not name, or no region at all for a
 * stage in several, rather than deploy functions that may mint another region's ids.
 */
export const stageRegionIndex = (stage: string, settings: Pick<StageSettings, 'regions'>, region: string | undefined): number => {
  const regions = settings.regions ?? [];
  if (regions.length === 0) return 0;
  const listed = regions.join(', ');
  if (region === undefined || Token.isUnresolved(region)) {
    throw new Error(`Stage '${stage}' runs in ${listed}: deploy it to one of them (AWS_REGION=<region>), not to no region in particular.`);
  }
  const index = regions.indexOf(region);
  if (index < 0) {
    throw new Error(
      `Stage '${stage}' runs in ${listed}, not in ${region}: add ${region} at the end of its regions (infra/stages.ts) first.`,
    );
  }
  return index;
};

/** The functions that get `eachOperation`: one per route with a handler. */
const operationFunctionCount = (): number => (routes as readonly Route[]).filter((route) => route.handler !== undefined).length;

/** The executions a stage's reservations take from the account: the authorizer's and each operation's. */
export const reservedExecutions = ({ authorizer, eachOperation }: ReservedConcurrency): number =>
  authorizer + eachOperation * operationFunctionCount();

/** Refuses, at synth, reservations that Lambda would refuse at deploy or that would refuse every request. */
const checkReservedConcurrency = (stage: string, { reservedConcurrency, accountConcurrency }: StageSettings) => {
  if (!Number.isInteger(accountConcurrency) || accountConcurrency < 1) {
    throw new Error(`Stage '${stage}': accountConcurrency must be a whole number of executions, at least 1 (Lambda's default is 1000).`);
  }
  if (reservedConcurrency === undefined) return;
  for (const [name, value] of Object.entries(reservedConcurrency)) {
    if (!Number.isInteger(value) || value < 1) {
      throw new Error(`Stage '${stage}': reservedConcurrency.${name} must be a whole number, at least 1 (0 would refuse every request).`);
    }
  }
  const reserved = reservedExecutions(reservedConcurrency);
  const unreserved = accountConcurrency - reserved;
  if (unreserved < MIN_UNRESERVED_CONCURRENCY) {
    throw new Error(
      `Stage '${stage}': reservedConcurrency reserves ${reserved} of the account's ${accountConcurrency} concurrent executions ` +
        `(authorizer ${reservedConcurrency.authorizer}, ${operationFunctionCount()} operations × ${reservedConcurrency.eachOperation}), ` +
        `leaving ${unreserved} unreserved; Lambda needs at least ${MIN_UNRESERVED_CONCURRENCY}: lower the reservations, ` +
        'or raise accountConcurrency once the quota is raised.',
    );
  }
};

/** The status index's shards must be a shard count, and take the stage's whole burst of creates of one status. */
const checkStatusIndexShards = (stage: string, { statusIndexShards: shards, throttle }: StageSettings) => {
  if (!isStatusShardCount(shards))
    throw new Error(`Stage '${stage}': statusIndexShards must be a whole number from 1 to ${MAX_STATUS_SHARDS}.`);
  const ceiling = statusCreatesCeiling(shards);
  if (ceiling < throttle.burstLimit) {
    throw new Error(
      `Stage '${stage}': ${shards} status index shard(s) take ${ceiling} creates of one status a second, below the stage's ` +
        `burst of ${throttle.burstLimit}: past it the index would throttle the table's writes. Raise statusIndexShards.`,
    );
  }
};
