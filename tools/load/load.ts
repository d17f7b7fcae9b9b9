/**
 * The load run behind `npm run load` (and its small version in `npm test`): creates pets at a
 * given concurrency, then walks every page of the listing, unfiltered and with each status
 * filter, and counts what was lost, duplicated or refused. Only the pets this run created are
 * judged (their names carry the run's tag), so it can target a service that already has data.
 * The requests go out with several keys in turn, as a well-behaved client sends them: a 429 for
 * going too fast is sent again after its Retry-After, a 429 for a used-up quota is not.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { hashApiKey, keyIdOf } from '../../shared/api-keys';
import type { ErrorCode } from '../../shared/errors';
import { PetStatus } from '../../shared/models';
import { UsageError } from '../cli';
import { inParallel, linkOf, noAnswerReason, REQUEST_TIMEOUT_MS, retryAfterMs } from '../requests';
import { quantile } from '../stats';

const PET_STATUSES: readonly PetStatus[] = PetStatus.options;

export interface LoadOptions {
  /** The API's base URL, ending in /v1. */
  readonly url: string;
  /** The API keys the requests go out with, in turn: create i with key i mod N, walk j with key j mod N. */
  readonly keys: readonly string[];
  readonly count: number;
  readonly concurrency: number;
  /** Page size of the walks (the API's maximum by default). */
  readonly pageLimit?: number;
  /** Times a request is sent while it gets 429 too_many_requests, before its answer counts as refused. */
  readonly maxAttempts?: number;
}

/** What one key sent and was refused for going too fast or over its quota. */
export interface KeyReport {
  /** The key's id (the start of its hash): never the key itself. */
  readonly keyId: string;
  /** Requests sent with the key, each retry included. */
  readonly requests: number;
  /** 429 too_many_requests answers; each sent again after its Retry-After, unless its request had its last attempt. */
  readonly tooManyRequests: number;
  /** 429 quota_exceeded answers; never sent again (the quota lasts until its period ends). */
  readonly quotaExceeded: number;
}

export type WalkFilter = 'all' | PetStatus;

export interface WalkReport {
  readonly filter: WalkFilter;
  readonly pages: number;
  /** This run's pets seen in the walk (duplicates counted each time). */
  readonly listed: number;
  /** Whether the walk reached its last page; one cut short by a refusal cannot say what is missing. */
  readonly complete: boolean;
  /** Acknowledged pets of this filter that the walk did not list (none counted in a walk cut short). */
  readonly missing: number[];
  /** Pets listed more than once in the walk. */
  readonly listedTwice: number[];
  readonly ms: number;
}

export interface LoadReport {
  readonly creates: number;
  readonly acknowledged: number;
  readonly createSeconds: number;
  readonly createsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly walks: WalkReport[];
  readonly walkSeconds: number;
  /** Acknowledged (201) but missing from a walk. Must be 0. */
  readonly lost: number;
  /** Listed twice in a walk, or stored without being acknowledged. Must be 0. */
  readonly duplicated: number;
  /** Answers that were not 2xx in the end (a 429 retried to success is not one), or no answer at all. Must be 0. */
  readonly non2xx: number;
  /** Per key, in the order given. */
  readonly keys: KeyReport[];
}

interface ListedPet {
  readonly id: number;
  readonly name: string;
  readonly status: string;
}

export const WALK_FILTERS: readonly WalkFilter[] = ['all', ...PET_STATUSES];

/** A random valid body; the status is sometimes left out (then `available`). */
const randomPet = (tag: string, index: number) => {
  const status = randomInt(4) === 0 ? undefined : PET_STATUSES[randomInt(PET_STATUSES.length)];
  return {
    name: `${tag}-${index} ${randomBytes(randomInt(1, 12)).toString('base64url')}`,
    categoryId: randomInt(1, 10_000),
    ...(status ? { status } : {}),
  };
};

/** What one walk found, judged against the acknowledged pets of its filter. */
export const judgeWalk = (
  filter: WalkFilter,
  acknowledged: ReadonlyMap<number, ListedPet>,
  listed: readonly ListedPet[],
): Pick<WalkReport, 'listed' | 'missing' | 'listedTwice'> & { unacknowledged: number[] } => {
  const seen = new Map<number, number>();
  for (const pet of listed) seen.set(pet.id, (seen.get(pet.id) ?? 0) + 1);
  const expected = [...acknowledged.values()].filter((pet) => filter === 'all' || pet.status === filter);
  return {
    listed: listed.length,
    missing: expected.filter((pet) => !seen.has(pet.id)).map((pet) => pet.id),
    listedTwice: [...seen].filter(([, times]) => times > 1).map(([id]) => id),
    unacknowledged: [...seen.keys()].filter((id) => !acknowledged.has(id)),
  };
};

/**
 * Why a load run cannot start against an API: no answer at its URL, or its key refused. Bad usage,
 * so that exit status 1 keeps meaning "pets lost".
 */
class TargetUnusable extends UsageError {}

/**
 * One listing request per key before the run, so that an unreachable URL or a refused key is said
 * in one line instead of being counted as thousands of failed answers. A key is named by its id,
 * never echoed.
 */
export const checkTarget = async (url: string, keys: readonly string[]): Promise<void> => {
  for (const key of keys) await checkKey(url, key, keys.length > 1 ? ` (key id ${keyIdOf(hashApiKey(key))})` : '');
};

const checkKey = async (url: string, key: string, which: string): Promise<void> => {
  let response: Response;
  try {
    response = await fetch(`${url}/pets?limit=1`, {
      headers: { Authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    throw new TargetUnusable(
      `no answer from ${url} (${noAnswerReason(error)}): is the API running, and is --url its address ending in /v1?`,
    );
  }
  await response.body?.cancel();
  if (response.status === 401 || response.status === 403) {
    throw new TargetUnusable(
      `the API at ${url} refused --key (${response.status})${which}: pass a key it accepts (npm run keys -- list shows which are active).`,
    );
  }
  if (response.status !== 200) {
    throw new TargetUnusable(`GET ${url}/pets answered ${response.status}, not 200: is --url the API's address ending in /v1?`);
  }
};

/** Times a request is sent while it gets 429 too_many_requests, unless the run says otherwise. */
export const DEFAULT_MAX_ATTEMPTS = 8;
/** A Retry-After longer than this is not waited for: the request counts as refused. */
export const MAX_RETRY_WAIT_MS = 30_000;

interface KeyUse {
  readonly authorization: string;
  readonly report: { keyId: string; requests: number; tooManyRequests: number; quotaExceeded: number };
}

/** The error code of a 429, from its body; undefined when the body is not the Error shape. */
const refusalCode = async (response: Response): Promise<ErrorCode | undefined> => {
  const body = (await response
    .clone()
    .json()
    .catch(() => undefined)) as { code?: ErrorCode } | undefined;
  return body?.code;
};

/**
 * Sends a request with one key as a well-behaved client does: a 429 too_many_requests is sent
 * again after its Retry-After (with up to half as much again at random, so that refused clients do
 * not all come back at once), at most `maxAttempts` times. A gateway 429 never reached the
 * function, so a create sent again cannot store a pet twice. Resolves to the last answer, or
 * undefined when there was none; its latency is the last attempt's, waits excluded.
 */
const sendWith = async (
  use: KeyUse,
  url: string,
  init: RequestInit,
  maxAttempts: number,
): Promise<{ response: Response | undefined; ms: number }> => {
  for (let attempt = 1; ; attempt += 1) {
    use.report.requests += 1;
    const started = performance.now();
    const response = await fetch(url, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), Authorization: use.authorization },
    }).catch(() => undefined);
    const ms = performance.now() - started;
    if (response?.status !== 429) return { response, ms };
    const code = await refusalCode(response);
    if (code === 'quota_exceeded') use.report.quotaExceeded += 1;
    if (code !== 'too_many_requests') return { response, ms };
    use.report.tooManyRequests += 1;
    const wait = retryAfterMs(response.headers.get('retry-after')) ?? 1000;
    if (attempt >= maxAttempts || wait > MAX_RETRY_WAIT_MS) return { response, ms };
    await response.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, wait * (1 + Math.random() / 2)));
  }
};

export const runLoad = async ({
  url,
  keys,
  count,
  concurrency,
  pageLimit = 100,
  maxAttempts = DEFAULT_MAX_ATTEMPTS,
}: LoadOptions): Promise<LoadReport> => {
  if (keys.length === 0) throw new Error('a load run needs at least one key');
  const tag = `load-${randomBytes(4).toString('hex')}`;
  const uses: KeyUse[] = keys.map((key) => ({
    authorization: `Bearer ${key}`,
    report: { keyId: keyIdOf(hashApiKey(key)), requests: 0, tooManyRequests: 0, quotaExceeded: 0 },
  }));
  const useOf = (index: number) => uses[index % uses.length] as KeyUse;
  const acknowledged = new Map<number, ListedPet>();
  const latencies: number[] = [];
  let non2xx = 0;

  const createStarted = performance.now();
  await inParallel(count, concurrency, async (index) => {
    const body = randomPet(tag, index);
    const { response, ms } = await sendWith(
      useOf(index),
      `${url}/pets`,
      { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) },
      maxAttempts,
    );
    if (!response) return void (non2xx += 1); // no answer at all
    latencies.push(ms);
    if (response.status !== 201) {
      await response.body?.cancel();
      return void (non2xx += 1);
    }
    const answer = (await response.json()) as ListedPet;
    acknowledged.set(answer.id, { id: answer.id, name: answer.name, status: answer.status });
  });
  const createSeconds = (performance.now() - createStarted) / 1000;

  const walks: WalkReport[] = [];
  const unacknowledged = new Set<number>();
  const walkStarted = performance.now();
  for (const [walkIndex, filter] of WALK_FILTERS.entries()) {
    const started = performance.now();
    const listed: ListedPet[] = [];
    let pages = 0;
    let complete = true;
    let next: string | undefined = `${url}/pets?limit=${pageLimit}${filter === 'all' ? '' : `&status=${filter}`}`;
    while (next) {
      const { response } = await sendWith(useOf(walkIndex), next, {}, maxAttempts);
      pages += 1;
      if (response?.status !== 200) {
        await response?.body?.cancel();
        non2xx += 1; // a refusal, or no answer at all: this walk cannot go on
        complete = false;
        break;
      }
      const page = (await response.json()) as ListedPet[];
      listed.push(...page.filter((pet) => pet.name.startsWith(`${tag}-`)));
      next = linkOf(response, 'next');
    }
    const judged = judgeWalk(filter, acknowledged, listed);
    for (const id of judged.unacknowledged) unacknowledged.add(id);
    walks.push({
      filter,
      pages,
      listed: judged.listed,
      complete,
      missing: complete ? judged.missing : [],
      listedTwice: judged.listedTwice,
      ms: performance.now() - started,
    });
  }
  const walkSeconds = (performance.now() - walkStarted) / 1000;

  return {
    creates: count,
    acknowledged: acknowledged.size,
    createSeconds,
    createsPerSecond: count / createSeconds,
    p50Ms: latencies.length === 0 ? 0 : quantile(latencies, 0.5),
    p99Ms: latencies.length === 0 ? 0 : quantile(latencies, 0.99),
    walks,
    walkSeconds,
    lost: new Set(walks.flatMap((walk) => walk.missing)).size,
    duplicated: new Set(walks.flatMap((walk) => walk.listedTwice)).size + unacknowledged.size,
    non2xx,
    keys: uses.map((use) => ({ ...use.report })),
  };
};

/** The figures that must be 0 for a run to pass. */
export const failures = (report: LoadReport): string[] =>
  (['lost', 'duplicated', 'non2xx'] as const).filter((figure) => report[figure] !== 0);

/** The report as a readable table. */
export const formatReport = (report: LoadReport): string => {
  const fixed = (value: number, digits = 1) => value.toFixed(digits);
  const rows: Array<[string, string]> = [
    ['creates', `${report.creates} (${report.acknowledged} acknowledged with 201)`],
    ['creates/s', fixed(report.createsPerSecond)],
    ['create latency p50 / p99', `${fixed(report.p50Ms)} ms / ${fixed(report.p99Ms)} ms`],
    ...report.walks.map((walk): [string, string] => [
      `walk ${walk.filter}`,
      `${walk.listed} pets in ${walk.pages} pages, ${fixed(walk.ms, 0)} ms, ` +
        (walk.complete ? `${walk.missing.length} missing` : 'cut short by a refusal'),
    ]),
    ['walk time (all four)', `${fixed(report.walkSeconds, 2)} s`],
    ['lost pets (must be 0)', String(report.lost)],
    ['duplicated pets (must be 0)', String(report.duplicated)],
    ['non-2xx answers (must be 0)', String(report.non2xx)],
    ...report.keys.map((key): [string, string] => [
      `key ${key.keyId}`,
      `${key.requests} requests, 429 too_many_requests ${key.tooManyRequests}, 429 quota_exceeded ${key.quotaExceeded}`,
    ]),
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n');
};
