/**
 * The load run behind `npm run load` (and its small version in `npm test`): creates pets at a
 * given concurrency, then walks every page of the listing, unfiltered and with each status
 * filter, and counts what was lost, duplicated or refused. Only the pets this run created are
 * judged (their names carry the run's tag), so it can target a service that already has data.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { PetStatus } from '../../shared/models';
import { UsageError } from '../cli';
import { inParallel, linkOf } from '../requests';
import { quantile } from '../stats';

const PET_STATUSES: readonly PetStatus[] = PetStatus.options;

export interface LoadOptions {
  /** The API's base URL, ending in /v1. */
  readonly url: string;
  readonly key: string;
  readonly count: number;
  readonly concurrency: number;
  /** Page size of the walks (the API's maximum by default). */
  readonly pageLimit?: number;
}

export type WalkFilter = 'all' | PetStatus;

export interface WalkReport {
  readonly filter: WalkFilter;
  readonly pages: number;
  /** This run's pets seen in the walk (duplicates counted each time). */
  readonly listed: number;
  /** Acknowledged pets of this filter that the walk did not list. */
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
  /** Answers that were not 2xx, or no answer at all. Must be 0. */
  readonly non2xx: number;
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

/** Why fetch got no answer, in a word or two (ECONNREFUSED, ENOTFOUND, a timeout). */
const noAnswerReason = (error: unknown): string => {
  if (error instanceof Error && error.name === 'TimeoutError') return 'no answer within 10 s';
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
};

/**
 * One listing request before the run, so that an unreachable URL or a refused key is said in one
 * line instead of being counted as thousands of failed answers. The key is never echoed.
 */
export const checkTarget = async (url: string, key: string): Promise<void> => {
  let response: Response;
  try {
    response = await fetch(`${url}/pets?limit=1`, { headers: { Authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new TargetUnusable(
      `no answer from ${url} (${noAnswerReason(error)}): is the API running, and is --url its address ending in /v1?`,
    );
  }
  await response.body?.cancel();
  if (response.status === 401 || response.status === 403) {
    throw new TargetUnusable(
      `the API at ${url} refused --key (${response.status}): pass a key it accepts (npm run keys -- list shows which are active).`,
    );
  }
  if (response.status !== 200) {
    throw new TargetUnusable(`GET ${url}/pets answered ${response.status}, not 200: is --url the API's address ending in /v1?`);
  }
};

export const runLoad = async ({ url, key, count, concurrency, pageLimit = 100 }: LoadOptions): Promise<LoadReport> => {
  const tag = `load-${randomBytes(4).toString('hex')}`;
  const headers = { Authorization: `Bearer ${key}` };
  const acknowledged = new Map<number, ListedPet>();
  const latencies: number[] = [];
  let non2xx = 0;

  const createStarted = performance.now();
  await inParallel(count, concurrency, async (index) => {
    const body = randomPet(tag, index);
    const started = performance.now();
    try {
      const response = await fetch(`${url}/pets`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as ListedPet;
      latencies.push(performance.now() - started);
      if (response.status === 201) acknowledged.set(answer.id, { id: answer.id, name: answer.name, status: answer.status });
      else non2xx += 1;
    } catch {
      non2xx += 1; // no answer at all
    }
  });
  const createSeconds = (performance.now() - createStarted) / 1000;

  const walks: WalkReport[] = [];
  const unacknowledged = new Set<number>();
  const walkStarted = performance.now();
  for (const filter of WALK_FILTERS) {
    const started = performance.now();
    const listed: ListedPet[] = [];
    let pages = 0;
    let next: string | undefined = `${url}/pets?limit=${pageLimit}${filter === 'all' ? '' : `&status=${filter}`}`;
    while (next) {
      const response: Response | undefined = await fetch(next, { headers }).catch(() => undefined);
      pages += 1;
      if (response?.status !== 200) {
        non2xx += 1; // a refusal, or no answer at all: this walk cannot go on
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
      missing: judged.missing,
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
      `${walk.listed} pets in ${walk.pages} pages, ${fixed(walk.ms, 0)} ms, ${walk.missing.length} missing`,
    ]),
    ['walk time (all four)', `${fixed(report.walkSeconds, 2)} s`],
    ['lost pets (must be 0)', String(report.lost)],
    ['duplicated pets (must be 0)', String(report.duplicated)],
    ['non-2xx answers (must be 0)', String(report.non2xx)],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n');
};
