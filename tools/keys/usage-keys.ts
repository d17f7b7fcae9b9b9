/**
 * The API Gateway side of a key: the API key of its own that meters it on its usage plan. Against a
 * deployed stage that is a real API Gateway API key (CreateApiKey, CreateUsagePlanKey,
 * DeleteUsagePlanKey, and DeleteApiKey for one no key record holds or no live key uses any more);
 * locally it is a random value with a local id, which the local gateway meters on the plan the
 * authorizer names, and holds as many of as API Gateway would (LOCAL_API_KEY_LIMIT).
 * Which plans exist: locally those in force (PLANS_FILE honoured), on AWS the stack's UsagePlanIds.
 * What a usage key was let through each day: on AWS GetUsage (with GetUsagePlan for the quota);
 * locally the local server's usage table (tools/local-server/usage-log.ts).
 *
 * A stage in several regions meters a key in each region (API keys and usage plans are regional):
 * the same value is made an API key in every region, each in that region's usage plan of the
 * key's plan, all or none; a plan change moves it in every region, and a release deletes each.
 * Usage (GetUsage) is read in every region, each region's API key in that region's usage plan,
 * and summed: each region meters its own share of a key's quota.
 */
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteUsagePlanKeyCommand,
  GetUsagePlanCommand,
  paginateGetUsage,
} from '@aws-sdk/client-api-gateway';
import { randomBytes } from 'node:crypto';
import * as z from 'zod/mini';
import { homeRegionOf, stageSettings } from '../../infra/stages';
import { apiKeysRepository, type UsageKey } from '../../shared/api-keys-repository';
import type { RegionUsageKeyIds } from '../../shared/plan-policy';
import { API_KEYS_FULL, API_KEYS_PER_REGION, deleteApiKey, listApiKeys } from '../../shared/usage-key-release';
import { PLAN_NAME_PATTERN, plansInForce, QUOTA_PERIODS, type QuotaPeriod } from '../../shared/plans';
import { PROJECT_NAME } from '../../shared/project';
import { stackName, stackOutputs } from '../../shared/stack';
import { UsageError } from '../cli';
import { awsErrorName } from '../stack-outputs';
import { readLocalUsage } from '../local-server/usage-log';
import {
  LOCAL_API_KEY_LIMIT_VARIABLE,
  localApiKeyLimit,
  localApiKeysHeld,
  localUsageKey,
  quotaPeriodStart,
  usageDay,
} from '../local-server/usage-plans';
import { printable } from './output';
import { KEYS_HELP, type KeysTarget, type StageRegion } from './target';
import { apiGatewayClientFor } from './api-gateway-client';

/** The API Gateway client (a client: the SDK's paginators take no other). */
export type ApiGatewayCalls = APIGatewayClient;

/** A plan's quota, and what remains of it in the current period. */
export interface QuotaUse {
  readonly limit: number;
  readonly period: QuotaPeriod;
  readonly remaining: number;
}

/** What a usage key was let through each day, and what remains of its plan's quota. */
export interface UsageReport {
  /** Requests per day, each of the days asked, oldest first. */
  readonly days: ReadonlyArray<{ readonly day: string; readonly requests: number }>;
  /** Undefined for a plan without a quota. */
  readonly quota: QuotaUse | undefined;
  /** A stage in several regions: each region's own report, of which `days` and `quota` are the sums. */
  readonly regions?: ReadonlyArray<RegionUsageReport>;
}

export interface RegionUsageReport {
  readonly region: string;
  readonly days: UsageReport['days'];
  readonly quota: QuotaUse | undefined;
}

/** A key's requests today: in every region of a stage in several, with each region's. */
export interface UsedToday {
  readonly requests: number;
  readonly byRegion?: ReadonlyArray<{ readonly region: string; readonly requests: number }>;
}

/** The API keys of a key's usage key: the home region's id, and the other regions' (none in a stage of one region). */
export interface UsageKeyIds {
  readonly usageKeyId: string;
  readonly regionUsageKeyIds?: RegionUsageKeyIds;
}

/** How many API keys a region holds; `region` undefined in a stage of one region, and locally. */
export interface HeldApiKeys {
  readonly region?: string;
  readonly held: number;
}

/**
 * An API key named as the tool names this stage's usage keys, which no key item holds: one left by
 * a create stopped between its regions (or between its API keys and its item). It counts against
 * its region's 10,000 until deleted.
 */
export interface StrayApiKey {
  /** Undefined in a stage of one region. */
  readonly region?: string;
  readonly id: string;
  readonly name: string;
}

/** The name the tool gives a key's API key in every region (CreateApiKey `name`): as the stack names the usage plans. */
export const usageKeyName = (stage: string, keyId: string): string => `${PROJECT_NAME}-${stage}-${keyId}`;

/** A usage key and the plan it is metered on. */
export interface MeteredKey extends UsageKeyIds {
  readonly plan: string;
}

const DAY_MS = 86_400_000;

/** Every day (YYYY-MM-DD, UTC) from `first` to `last`, both included. */
export const daysFrom = (first: string, last: string): string[] => {
  const days: string[] = [];
  for (let at = Date.parse(first); at <= Date.parse(last); at += DAY_MS) days.push(usageDay(at));
  return days;
};

/** The days whose use tells what remains of `period`'s quota on `today`: from its period's first day to today. */
const periodDays = (period: QuotaPeriod, today: string): string[] => daysFrom(usageDay(quotaPeriodStart(period, Date.parse(today))), today);

/** API Gateway refused a new API key: the account and region hold as many as its quota allows. */
export class ApiKeysFull extends Error {
  override readonly name = 'ApiKeysFull';

  /** `full` says what holds how many, in a sentence. */
  constructor(full: string) {
    super(full);
  }
}

export interface UsageKeys {
  /** Whether the API keys are API Gateway's (on AWS), rather than the local gateway's values. */
  readonly onApiGateway: boolean;
  /**
   * Throws a UsageError of one line unless `plan` is a plan keys can be put on here: on a keys
   * table named alone (--table) on AWS, whose usage plans the tool cannot know, none is.
   */
  checkPlan(plan: string): void;
  /** A new API key in `plan` for our key `keyId`: a random value, never the bearer key. */
  create(keyId: string, plan: string): Promise<UsageKey>;
  /** Moves a usage key, in every region, from the usage plan of `from` to that of `to`: all, or none (one line naming the region). */
  move(usage: UsageKeyIds, from: string, to: string): Promise<void>;
  /**
   * Deletes an API key no live key uses any more, in `region` (one of a stage's other regions;
   * undefined: the home region or the one region); one already gone counts as deleted. Rejects in one line.
   */
  remove(usageKeyId: string, region?: string): Promise<void>;
  /** The region of a usage key's `usageKeyId`: a stage's home region, as a release names it. */
  readonly homeRegion?: string;
  /** How many API keys API Gateway may hold here: per account and region on AWS, LOCAL_API_KEY_LIMIT locally. */
  readonly limit: number;
  /**
   * The API keys held now: on AWS every API key of the account in the region (in each of a stage's
   * regions), locally those the keys table has not deleted.
   */
  count(): Promise<readonly HeldApiKeys[]>;
  /** Deletes, in every region, a usage key `create` made that no key record holds (a write that failed after it). */
  discard(usage: UsageKey): Promise<void>;
  /**
   * The API keys named as this stage's usage keys (usageKeyName) that none of `held` (every key
   * item of the table) names, in each region: none locally, nor on a table named alone.
   */
  strays(held: readonly Partial<UsageKeyIds>[]): Promise<readonly StrayApiKey[]>;
  /**
   * The requests `usageKeyId` (on `plan`) was let through on each of `days` (oldest first, the
   * last being today), and what remains of the plan's quota today.
   */
  usage(key: MeteredKey, days: readonly string[]): Promise<UsageReport>;
  /** The requests each of `keys` was let through on `today`, by usage key id: one call per plan (and region) where the API allows. */
  usedOn(keys: readonly MeteredKey[], today: string): Promise<ReadonlyMap<string, UsedToday>>;
  /** Frees the client, if one was made. */
  close(): void;
}

/** An API key's value: 40 hexadecimal digits (160 random bits), within API Gateway's 20 to 128 characters. */
const newUsageKeyValue = (): string => randomBytes(20).toString('hex');

const unknownPlan = (plan: string, known: readonly string[], where: string): UsageError =>
  new UsageError(
    PLAN_NAME_PATTERN.test(plan)
      ? `unknown plan '${plan}': ${where} are ${known.join(', ')}.`
      : `a plan name is 1-32 lower-case letters, digits or hyphens: ${where} are ${known.join(', ')}.`,
  );

/** Locally: plans in force, and a usage key that is only a value and an id, as the local gateway needs no more. */
const localUsageKeys = (target: KeysTarget, env: Readonly<Record<string, string | undefined>>): UsageKeys => {
  const plans = () => {
    try {
      return plansInForce(env);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  };
  const planNames = (): string[] => Object.keys(plans());
  const read = (usageKeyIds: readonly string[], days: readonly string[]) =>
    readLocalUsage(target.client, target.tableName, usageKeyIds, days);
  const limit = (): number => {
    try {
      return localApiKeyLimit(env);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  };
  const count = async (): Promise<number> =>
    localApiKeysHeld(
      await apiKeysRepository({
        client: target.client,
        tables: { apiKeys: target.tableName, apiKeyLastUse: target.lastUseTableName },
      }).listItems(),
    );
  return {
    onApiGateway: false,
    checkPlan(plan) {
      const known = planNames();
      if (!known.includes(plan)) throw unknownPlan(plan, known, 'the plans in force');
    },
    async create() {
      // As API Gateway refuses a CreateApiKey at its quota.
      if ((await count()) >= limit()) {
        throw new ApiKeysFull(`the local gateway holds ${limit()} API keys, its ${LOCAL_API_KEY_LIMIT_VARIABLE}.`);
      }
      return localUsageKey();
    },
    move: async () => undefined,
    // A local usage key is only a value: the keys table's usageKeyDeletedAt is its deletion.
    remove: async () => undefined,
    discard: async () => undefined,
    get limit() {
      return limit();
    },
    count: async () => [{ held: await count() }],
    // A local usage key is only a value in the keys table: none can be without a record.
    strays: async () => [],
    async usage({ usageKeyId, plan }, days) {
      const inForce = plans();
      // Own properties only: a plan named `constructor` is no plan.
      const limits = Object.hasOwn(inForce, plan) ? inForce[plan] : undefined;
      if (limits === undefined) throw unknownPlan(plan, Object.keys(inForce), 'the plans in force');
      const today = days.at(-1) ?? '';
      const quotaDays = limits.quota ? periodDays(limits.quota.period, today) : [];
      const used = (await read([usageKeyId], [...new Set([...days, ...quotaDays])])).get(usageKeyId);
      const requestsOn = (day: string): number => used?.get(day) ?? 0;
      return {
        days: days.map((day) => ({ day, requests: requestsOn(day) })),
        // As the local gateway's meter counts it: the requests let through since the period began.
        quota: limits.quota && {
          ...limits.quota,
          remaining: Math.max(0, limits.quota.limit - quotaDays.reduce((sum, day) => sum + requestsOn(day), 0)),
        },
      };
    },
    async usedOn(keys, today) {
      const used = await read(
        keys.map(({ usageKeyId }) => usageKeyId),
        [today],
      );
      return new Map(keys.map(({ usageKeyId }) => [usageKeyId, { requests: used.get(usageKeyId)?.get(today) ?? 0 }]));
    },
    close: () => undefined,
  };
};

/** A key's use in every region summed: each day's requests, and each quota's limit and remaining (each region meters its share). */
const sumOfRegions = (days: readonly string[], regions: readonly RegionUsageReport[]): Omit<UsageReport, 'regions'> => {
  const quotas = regions.map((region) => region.quota);
  const [first] = quotas;
  const sum = (of: (quota: QuotaUse) => number) => quotas.reduce((total, quota) => total + (quota === undefined ? 0 : of(quota)), 0);
  return {
    days: days.map((day, index) => ({ day, requests: regions.reduce((total, region) => total + (region.days[index]?.requests ?? 0), 0) })),
    quota: first === undefined ? undefined : { ...first, limit: sum((quota) => quota.limit), remaining: sum((quota) => quota.remaining) },
  };
};

/** GetUsage's items: per API key id, one [used, remaining] a day from its startDate. */
const UsageItems = z.record(z.string(), z.array(z.array(z.number())));

const UsagePlanQuota = z.object({ limit: z.int().check(z.nonnegative()), period: z.enum(QUOTA_PERIODS) });

const UsagePlanIds = z.record(z.string(), z.string().check(z.minLength(1)));

/** ` in <region>` for a region of a stage in several regions; nothing for the one reached by default. */
const inRegion = (region: string | undefined): string => (region === undefined ? '' : ` in ${region}`);

/** The stack's UsagePlanIds output, read: each plan's usage plan id (in `region`, one of a stage's other regions). */
const usagePlanIdsOf = (stage: string, outputs: Readonly<Record<string, string>>, region?: string): Readonly<Record<string, string>> => {
  const text = outputs[stackOutputs.usagePlanIds];
  let parsed: unknown;
  try {
    parsed = text === undefined ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const ids = UsagePlanIds.safeParse(parsed);
  if (!ids.success) {
    throw new Error(
      `Stack ${stackName(stage)}${inRegion(region)} has no readable ${stackOutputs.usagePlanIds} output: deploy it with this version (npx cdk deploy -c stage=${stage}).`,
    );
  }
  return ids.data;
};

/** What an API Gateway refusal is called: its name only, as its message may quote ids or values. */
const reasonOf = (error: unknown): string => (error instanceof Error ? error.name : 'no answer');

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** How the tool reaches a region's API Gateway; the SDK's own client of that region when absent. */
export type ApiGatewayIn = (region: string) => ApiGatewayCalls;

/** One region's API key of a usage key: `region` undefined for the home region's (or the one region's). */
interface RegionalKey {
  readonly region?: string;
  readonly usageKeyId: string;
}

/** A usage key's API keys, the home region's first. */
const regionalKeys = ({ usageKeyId, regionUsageKeyIds = {} }: UsageKeyIds): RegionalKey[] => [
  { usageKeyId },
  ...Object.entries(regionUsageKeyIds).map(([region, id]) => ({ region, usageKeyId: id })),
];

const awsUsageKeys = (target: KeysTarget, apiGateway: ApiGatewayCalls | undefined, apiGatewayIn?: ApiGatewayIn): UsageKeys => {
  const { stage, stackOutputs: outputs, stageRegions = [] } = target;
  const home = stage === undefined ? undefined : homeRegionOf(stageSettings(stage));
  /** The clients this made, destroyed by close. */
  const own: APIGatewayClient[] = [];
  const made = (region: string | undefined): ApiGatewayCalls => {
    const client = apiGatewayClientFor(region);
    own.push(client);
    return client;
  };
  const clients = new Map<string | undefined, ApiGatewayCalls>();
  /** The client of `region` (undefined, or the target's region: the target's). */
  const callsIn = (region?: string): ApiGatewayCalls => {
    const key = region === target.region ? undefined : region;
    let client = clients.get(key);
    if (client === undefined) {
      const at = key ?? target.region;
      client = key === undefined && apiGateway !== undefined ? apiGateway : at !== undefined && apiGatewayIn ? apiGatewayIn(at) : made(at);
      clients.set(key, client);
    }
    return client;
  };
  /** Every API key of a region, listed once per run: capacity counts them and looks for strays in the one listing. */
  const listings = new Map<string | undefined, ReturnType<typeof listApiKeys>>();
  const apiKeysIn = (region: string | undefined): ReturnType<typeof listApiKeys> => {
    let listing = listings.get(region);
    if (listing === undefined) {
      listing = listApiKeys(callsIn(region)).catch((error: unknown) => {
        throw failed(`list the API keys${inRegion(region)}`, error);
      });
      listings.set(region, listing);
    }
    return listing;
  };
  /** The stage's other regions than the one the tool reaches (for a write, its home region). */
  const otherRegions = (): StageRegion[] => stageRegions.filter(({ region }) => region !== target.region);

  const usagePlanIds = (): Readonly<Record<string, string>> => {
    if (stage === undefined || outputs === undefined) {
      throw new UsageError(`plans on AWS are the stage's usage plans: give --stage STAGE rather than --table (see ${KEYS_HELP}).`);
    }
    return usagePlanIdsOf(stage, outputs);
  };
  const usagePlanId = (plan: string): string => {
    const ids = usagePlanIds();
    // Own properties only: a plan named `constructor` is no plan.
    const id = Object.hasOwn(ids, plan) ? ids[plan] : undefined;
    if (id === undefined) throw unknownPlan(plan, Object.keys(ids), `the plans of stage ${stage}`);
    return id;
  };
  /** Each plan's usage plan id in `region`: the target's own, or that region's stack's. */
  const usagePlanIdsIn = async (region: string | undefined): Promise<Readonly<Record<string, string>>> => {
    if (region === undefined || region === target.region) return usagePlanIds();
    const regional = stageRegions.find((known) => known.region === region);
    if (regional === undefined) throw new Error(`Stage ${stage ?? ''} does not run in ${region} (infra/stages.ts).`);
    return usagePlanIdsOf(stage ?? '', await regional.outputs(), region);
  };
  const usagePlanIdIn = async (region: string | undefined, plan: string): Promise<string> => {
    if (region === undefined) return usagePlanId(plan);
    const ids = await usagePlanIdsIn(region);
    const id = Object.hasOwn(ids, plan) ? ids[plan] : undefined;
    if (id === undefined) {
      throw new Error(
        `Stack ${stackName(stage ?? '')} in ${region} has no usage plan ${plan}: deploy it with this version (npx cdk deploy -c stage=${stage}).`,
      );
    }
    return id;
  };
  /** What it names may be a stored usage key id, plan or region (a console edit): escaped as the tool prints a stored value. */
  const failed = (what: string, error: unknown): Error => new Error(`API Gateway refused to ${printable(what)} (${reasonOf(error)}).`);

  /** GetUsage of a usage plan in `region` from `first` to `last` (of one API key with `keyId`): its items, every page's. */
  const usageItems = async (
    plan: string,
    first: string,
    last: string,
    keyId?: string,
    region?: string,
  ): Promise<Record<string, number[][]>> => {
    const where = inRegion(region);
    const input = {
      usagePlanId: await usagePlanIdIn(region, plan),
      startDate: first,
      endDate: last,
      ...(keyId === undefined ? {} : { keyId }),
    };
    const items: Record<string, number[][]> = {};
    try {
      for await (const page of paginateGetUsage({ client: callsIn(region) }, input)) {
        const parsed = UsageItems.safeParse(page.items ?? {});
        if (!parsed.success) throw new Error(`API Gateway answered the usage of plan ${plan}${where} in a shape this tool does not know.`);
        // Each page holds other API keys.
        Object.assign(items, parsed.data);
      }
    } catch (error) {
      throw awsErrorName(error) === undefined ? error : failed(`give the usage of plan ${plan}${where}`, error);
    }
    return items;
  };
  /** The quota of `plan`'s usage plan in `region` (GetUsagePlan), undefined for none. */
  const quotaOf = async (plan: string, region?: string): Promise<{ limit: number; period: QuotaPeriod } | undefined> => {
    const where = inRegion(region);
    const answer = await callsIn(region)
      .send(new GetUsagePlanCommand({ usagePlanId: await usagePlanIdIn(region, plan) }))
      .catch((error: unknown) => {
        throw failed(`describe plan ${plan}${where}`, error);
      });
    if (answer.quota === undefined) return undefined;
    const quota = UsagePlanQuota.safeParse(answer.quota);
    if (!quota.success) throw new Error(`API Gateway described the quota of plan ${plan}${where} in a shape this tool does not know.`);
    return quota.data;
  };
  /**
   * Each region's API key of a usage key, by region name (a stage in several regions): the home
   * region's is `usageKeyId`, whichever region the tool reaches.
   */
  const byRegion = ({ usageKeyId, regionUsageKeyIds = {} }: UsageKeyIds): Array<{ region: string; usageKeyId: string | undefined }> =>
    stageRegions.map(({ region }) => ({
      region,
      usageKeyId: region === home ? usageKeyId : Object.hasOwn(regionUsageKeyIds, region) ? regionUsageKeyIds[region] : undefined,
    }));
  /** One region's report of a usage key's API key there (`region` undefined: the target's, in a stage of one region). */
  const usageIn = async (region: string | undefined, usageKeyId: string | undefined, plan: string, days: readonly string[]) => {
    const quota = await quotaOf(plan, region);
    const today = days.at(-1) ?? '';
    // From the period's first day too, when it is before the first day asked: what remains is counted from it.
    const quotaDays = quota ? periodDays(quota.period, today) : [];
    const first = [days[0] ?? today, quotaDays[0] ?? today].sort()[0] ?? today;
    const asked = daysFrom(first, today);
    // A region with no API key of it (a record written before that region was listed) met none of its requests.
    const entries = usageKeyId === undefined ? [] : ((await usageItems(plan, first, today, usageKeyId, region))[usageKeyId] ?? []);
    // The i-th entry is the i-th day from the start date; a key with no use has none.
    const entryOn = (day: string): number[] | undefined => entries[asked.indexOf(day)];
    const requestsOn = (day: string): number => entryOn(day)?.[0] ?? 0;
    return {
      days: days.map((day) => ({ day, requests: requestsOn(day) })),
      quota: quota && {
        ...quota,
        remaining: entryOn(today)?.[1] ?? Math.max(0, quota.limit - quotaDays.reduce((sum, day) => sum + requestsOn(day), 0)),
      },
    };
  };

  const addToPlan = async ({ region, usageKeyId }: RegionalKey, usagePlanId: string): Promise<void> => {
    await callsIn(region).send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId: usageKeyId, keyType: 'API_KEY' }));
  };
  const discardIn = async ({ region, usageKeyId }: RegionalKey): Promise<void> => {
    await deleteApiKey(callsIn(region), usageKeyId).catch((error: unknown) => {
      throw failed(`delete the API key ${usageKeyId}${inRegion(region)}, which no key uses now: delete it in the console`, error);
    });
  };
  /** Deletes every region's API key of a usage key no record holds: each tried, the failures in one line. */
  const discard = async (usage: UsageKeyIds): Promise<void> => {
    const settled = await Promise.allSettled(regionalKeys(usage).map(discardIn));
    const failures = settled.flatMap((result) => (result.status === 'rejected' ? [messageOf(result.reason).replace(/\.$/, '')] : []));
    if (failures.length > 0) throw new Error(`${failures.join('; ')}.`);
  };

  /** An API key of `value` in `region`, in the usage plan `usagePlanId` of `plan`; none when either step fails. */
  const createIn = async (region: string | undefined, keyId: string, plan: string, value: string): Promise<string> => {
    const usagePlanId = await usagePlanIdIn(region, plan);
    const created = await callsIn(region)
      .send(
        new CreateApiKeyCommand({
          name: usageKeyName(stage ?? '', keyId),
          description: `Meters the pet store key ${keyId} on its plan (npm run keys).`,
          value,
          enabled: true,
        }),
      )
      .catch((error: unknown) => {
        throw reasonOf(error) === API_KEYS_FULL
          ? new ApiKeysFull(
              region === undefined
                ? `this account and region hold ${API_KEYS_PER_REGION} API Gateway API keys, a quota that cannot be raised.`
                : `this account holds ${API_KEYS_PER_REGION} API Gateway API keys in ${region}, a quota that cannot be raised.`,
            )
          : failed(`create an API key${inRegion(region)}`, error);
      });
    if (!created.id) throw new Error(`API Gateway created an API key${inRegion(region)} but did not say its id.`);
    const made = { region, usageKeyId: created.id };
    try {
      await addToPlan(made, usagePlanId);
    } catch (error) {
      await discardIn(made);
      throw failed(`put the new API key in plan ${plan}${inRegion(region)}`, error);
    }
    return created.id;
  };

  /** Moves one region's API key from the usage plan of `from` to that of `to`. */
  const moveIn = async (key: RegionalKey, from: string, to: string): Promise<void> => {
    const { region, usageKeyId } = key;
    const fromId = (await usagePlanIdsIn(region))[from];
    const toId = await usagePlanIdIn(region, to);
    // An API key can be in one usage plan of a stage only: out of the old one first. A plan the
    // stage no longer has holds no key; one moved in the console meanwhile is not in it either.
    if (fromId !== undefined) {
      await callsIn(region)
        .send(new DeleteUsagePlanKeyCommand({ usagePlanId: fromId, keyId: usageKeyId }))
        .catch((error: unknown) => {
          if (reasonOf(error) !== 'NotFoundException')
            throw failed(`take the API key ${usageKeyId} out of plan ${from}${inRegion(region)}`, error);
        });
    }
    try {
      // In it already (moved there in the console): the keys table is then brought in line.
      await addToPlan(key, toId).catch((error: unknown) => {
        if (reasonOf(error) !== 'ConflictException') throw error;
      });
    } catch (error) {
      // Back into the old plan, so that the key is metered (and admitted) as before.
      const back =
        fromId === undefined
          ? true
          : await addToPlan(key, fromId).then(
              () => true,
              () => false,
            );
      const after = back ? '' : `, nor back in plan ${from}: add it there in the console`;
      throw failed(`put the API key ${usageKeyId} in plan ${to}${inRegion(region)}${after}`, error);
    }
  };

  return {
    onApiGateway: true,
    checkPlan(plan) {
      usagePlanId(plan);
    },
    async create(keyId, plan) {
      const value = newUsageKeyValue();
      const usageKeyId = await createIn(undefined, keyId, plan, value);
      const others = otherRegions();
      if (others.length === 0) return { usageKeyId, usageKey: value };
      // The same value in every other region, one after another: all, or none.
      const regionUsageKeyIds: Record<string, string> = {};
      for (const { region } of others) {
        try {
          regionUsageKeyIds[region] = await createIn(region, keyId, plan, value);
        } catch (error) {
          const madeIn = [target.region ?? '', ...Object.keys(regionUsageKeyIds)].join(', ');
          const undone = await discard({ usageKeyId, regionUsageKeyIds }).then(
            () => `No key was created: its API keys made in ${madeIn} were deleted.`,
            (undoError: unknown) => `No key was created, and ${messageOf(undoError)}`,
          );
          if (error instanceof ApiKeysFull) throw new ApiKeysFull(`${error.message} ${undone}`);
          // Each failure names its region already.
          throw new Error(`${messageOf(error).replace(/\.$/, '')}. ${undone}`);
        }
      }
      return { usageKeyId, usageKey: value, regionUsageKeyIds };
    },
    async move(usage, from, to) {
      const keys = regionalKeys(usage);
      const moved: RegionalKey[] = [];
      for (const key of keys) {
        try {
          await moveIn(key, from, to);
          moved.push(key);
        } catch (error) {
          // The regions moved already go back, so that every region meters the key on one plan.
          if (moved.length === 0) throw error;
          const back = await Promise.allSettled(moved.map((done) => moveIn(done, to, from)));
          const stuck = moved.filter((_, index) => back[index]?.status === 'rejected').map(({ region }) => region ?? target.region ?? '');
          const left =
            stuck.length === 0
              ? ` Its API keys in ${moved.map(({ region }) => region ?? target.region ?? '').join(', ')} are back on plan ${from}.`
              : ` Its API keys in ${stuck.join(', ')} are not back on plan ${from}: move them back in the console.`;
          throw new Error(`${messageOf(error)}${printable(left)}`);
        }
      }
    },
    async remove(usageKeyId, region) {
      await deleteApiKey(callsIn(region), usageKeyId).catch((error: unknown) => {
        throw failed(`delete the API key ${usageKeyId}${inRegion(region)}`, error);
      });
    },
    homeRegion: stageRegions.length === 0 ? undefined : target.region,
    limit: API_KEYS_PER_REGION,
    async count() {
      const countIn = async (region?: string): Promise<number> => (await apiKeysIn(region)).length;
      if (stageRegions.length === 0) return [{ held: await countIn() }];
      return Promise.all(stageRegions.map(async ({ region }) => ({ region, held: await countIn(region) })));
    },
    discard,
    async strays(held) {
      if (stage === undefined) return [];
      const named = new RegExp(`^${usageKeyName(stage, '')}[0-9a-f]{12}$`);
      const regions = stageRegions.length === 0 ? [undefined] : stageRegions.map(({ region }) => region);
      const strayIn = async (region: string | undefined): Promise<StrayApiKey[]> => {
        const known = new Set(
          held.flatMap(({ usageKeyId, regionUsageKeyIds = {} }) => {
            const id = region === undefined || region === home ? usageKeyId : regionUsageKeyIds[region];
            return id === undefined ? [] : [id];
          }),
        );
        // Every API key of the region, its name matched here: GetApiKeys documents no match rule for nameQuery.
        return (await apiKeysIn(region)).flatMap(({ id, name }) =>
          id !== undefined && name !== undefined && named.test(name) && !known.has(id)
            ? [{ ...(region === undefined ? {} : { region }), id, name }]
            : [],
        );
      };
      return (await Promise.all(regions.map(strayIn))).flat();
    },
    async usage(key, days) {
      if (stageRegions.length === 0) return usageIn(undefined, key.usageKeyId, key.plan, days);
      const regions = await Promise.all(
        byRegion(key).map(async ({ region, usageKeyId }) => ({ region, ...(await usageIn(region, usageKeyId, key.plan, days)) })),
      );
      return { ...sumOfRegions(days, regions), regions };
    },
    async usedOn(keys, today) {
      const known = usagePlanIds();
      const plans = [...new Set(keys.map((key) => key.plan).filter((plan) => Object.hasOwn(known, plan)))];
      // One GetUsage (every API key of the plan) per plan of the keys asked, in each region.
      const usedIn = async (region: string | undefined, idOf: (key: MeteredKey) => string | undefined) => {
        const used = new Map<MeteredKey, number>();
        for (const plan of plans) {
          const items = await usageItems(plan, today, today, undefined, region);
          for (const key of keys.filter((other) => other.plan === plan)) {
            const id = idOf(key);
            used.set(key, id === undefined ? 0 : (items[id]?.[0]?.[0] ?? 0));
          }
        }
        return used;
      };
      if (stageRegions.length === 0) {
        const used = await usedIn(undefined, (key) => key.usageKeyId);
        return new Map([...used].map(([key, requests]) => [key.usageKeyId, { requests }]));
      }
      const regions = await Promise.all(
        stageRegions.map(async ({ region }) => ({
          region,
          used: await usedIn(region, (key) => byRegion(key).find((each) => each.region === region)?.usageKeyId),
        })),
      );
      return new Map(
        keys
          .filter((key) => regions[0]?.used.has(key))
          .map((key) => {
            const each = regions.map(({ region, used }) => ({ region, requests: used.get(key) ?? 0 }));
            return [key.usageKeyId, { requests: each.reduce((sum, { requests }) => sum + requests, 0), byRegion: each }];
          }),
      );
    },
    close() {
      for (const client of own) client.destroy();
    },
  };
};

/** The usage keys of `target`: API Gateway's on AWS (`apiGateway`, built from --region when absent), local ones otherwise. */
export const usageKeysFor = (
  target: KeysTarget,
  env: Readonly<Record<string, string | undefined>>,
  apiGateway?: ApiGatewayCalls,
  apiGatewayIn?: ApiGatewayIn,
): UsageKeys => (target.onAws ? awsUsageKeys(target, apiGateway, apiGatewayIn) : localUsageKeys(target, env));
