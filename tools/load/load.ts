/**
 * The load run behind `npm run load` (and its small version in `npm test`): creates pets at a
 * given concurrency, then walks every page of the listing, unfiltered and with each status
 * filter, and counts what was lost, duplicated or refused. Only the pets this run created are
 * judged (their names carry the run's tag), so it can target a service that already has data.
 * The requests go out with several keys in turn through the client library (client/): a 429 for
 * going too fast is sent again after its Retry-After, a 429 for a used-up quota is not.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { PetStore, PetStoreError, PetStoreNetworkError, PetStoreTimeoutError, type Page, type RawAnswer } from '../../client/src/index';
import { hashApiKey, keyIdOf } from '../../shared/api-keys';
import { PetStatus } from '../../shared/models';
import { UsageError } from '../cli';
import { inParallel, noAnswerReason, REQUEST_TIMEOUT_MS } from '../requests';
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
  /** The client's retries of a request (429 too_many_requests, 503, no answer) before it counts as refused. */
  readonly maxRetries?: number;
}

/** What one key sent and was refused for going too fast or over its quota. */
export interface KeyReport {
  /** The key's id (the start of its hash): never the key itself. */
  readonly keyId: string;
  /** Requests sent with the key, each retry included. */
  readonly requests: number;
  /** 429 too_many_requests answers; each sent again after its Retry-After, unless its request had its last retry. */
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

/** Whether a call failed without an answer to its last request. */
const unanswered = (error: unknown): error is PetStoreNetworkError | PetStoreTimeoutError =>
  error instanceof PetStoreNetworkError || error instanceof PetStoreTimeoutError;

/** Why a request got no answer, in a word or two (ECONNREFUSED, a timeout). */
const noAnswer = (error: PetStoreNetworkError | PetStoreTimeoutError) =>
  error instanceof PetStoreTimeoutError ? `no answer within ${error.timeoutMs / 1000} s` : noAnswerReason(error.cause);

const checkKey = async (url: string, key: string, which: string): Promise<void> => {
  let client: PetStore;
  try {
    client = new PetStore({ baseUrl: url, apiKey: key, maxRetries: 0, timeoutMs: REQUEST_TIMEOUT_MS });
  } catch {
    throw new TargetUnusable(`--key is not an API key${which}: pass a key the API accepts (npm run keys -- list shows which are active).`);
  }
  let answer: RawAnswer;
  try {
    answer = await client.raw({ operation: 'listPets', path: '/pets', query: { limit: 1 } });
  } catch (error) {
    if (!unanswered(error)) throw error;
    throw new TargetUnusable(`no answer from ${url} (${noAnswer(error)}): is the API running, and is --url its address ending in /v1?`);
  }
  const { status } = answer.response;
  if (status === 401 || status === 403) {
    throw new TargetUnusable(
      `the API at ${url} refused --key (${status})${which}: pass a key it accepts (npm run keys -- list shows which are active).`,
    );
  }
  if (status !== 200) {
    throw new TargetUnusable(`GET ${url}/pets answered ${status}, not 200: is --url the API's address ending in /v1?`);
  }
};

/** Retries of a request, unless the run says otherwise. */
export const DEFAULT_MAX_RETRIES = 8;

interface KeyUse {
  readonly key: string;
  readonly report: { keyId: string; requests: number; tooManyRequests: number; quotaExceeded: number };
}

/**
 * A client with one key and the run's retries, counting on the key's report every request sent
 * and each 429 by its code. `onAnswer` gets each answer's time: the last is the call's latency,
 * waits excluded. A create carries an Idempotency-Key, so one sent again cannot store a pet twice.
 */
const clientWith = (use: KeyUse, url: string, maxRetries: number, onAnswer?: (ms: number) => void) =>
  new PetStore({
    baseUrl: url,
    apiKey: use.key,
    maxRetries,
    onResponse: ({ response, body, durationMs }) => {
      use.report.requests += 1;
      const code = response.status === 429 ? (body as { code?: unknown } | undefined)?.code : undefined;
      if (code === 'too_many_requests') use.report.tooManyRequests += 1;
      if (code === 'quota_exceeded') use.report.quotaExceeded += 1;
      onAnswer?.(durationMs);
    },
    onRetry: ({ error }) => {
      if (unanswered(error)) use.report.requests += 1;
    },
  });

/** Counts a call's failure: its last request, when it got no answer, was not seen by onResponse. */
const countFailure = (use: KeyUse, error: unknown) => {
  if (unanswered(error)) use.report.requests += 1;
  else if (!(error instanceof PetStoreError)) throw error;
};

export const runLoad = async ({
  url,
  keys,
  count,
  concurrency,
  pageLimit = 100,
  maxRetries = DEFAULT_MAX_RETRIES,
}: LoadOptions): Promise<LoadReport> => {
  if (keys.length === 0) throw new Error('a load run needs at least one key');
  const tag = `load-${randomBytes(4).toString('hex')}`;
  const uses: KeyUse[] = keys.map((key) => ({
    key,
    report: { keyId: keyIdOf(hashApiKey(key)), requests: 0, tooManyRequests: 0, quotaExceeded: 0 },
  }));
  const useOf = (index: number) => uses[index % uses.length] as KeyUse;
  const acknowledged = new Map<number, ListedPet>();
  const latencies: number[] = [];
  let non2xx = 0;

  const createStarted = performance.now();
  await inParallel(count, concurrency, async (index) => {
    const use = useOf(index);
    // A client of its own, so that the hook's last answer time is this create's latency.
    let ms: number | undefined;
    try {
      const pet = await clientWith(use, url, maxRetries, (answerMs) => (ms = answerMs)).pets.create(randomPet(tag, index));
      acknowledged.set(pet.id, { id: pet.id, name: pet.name, status: pet.status });
    } catch (error) {
      countFailure(use, error);
      non2xx += 1; // a refusal, or no answer at all
    }
    if (ms !== undefined) latencies.push(ms);
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
    const use = useOf(walkIndex);
    const client = clientWith(use, url, maxRetries);
    let page: Page | undefined;
    try {
      do {
        pages += 1;
        page = await (page ? page.next() : client.pets.list({ limit: pageLimit, status: filter === 'all' ? undefined : filter }));
        listed.push(...(page?.pets ?? []).filter((pet) => pet.name.startsWith(`${tag}-`)));
      } while (page?.hasNext);
    } catch (error) {
      countFailure(use, error);
      non2xx += 1; // a refusal, or no answer at all: this walk cannot go on
      complete = false;
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
