/**
 * The checks of `npm run smoke`, in the order they run: each sends a request or two to a
 * deployment as a client would and judges the answers: the status it expects, the Error shape
 * (status equal to the HTTP status), the headers every answer carries, and openapi.json's
 * description of the answer (tools/openapi/answer-check.ts). URLs the API writes (Location, Link)
 * must be on the base URL's origin, below its path; a foreign one is never followed, and no
 * redirect is, so the key only ever goes to the base URL's origin.
 */
import { ApiErrorBody, Pet, Pets } from '../../shared/models';
import { WWW_AUTHENTICATE } from '../../shared/errors';
import { GATEWAY_REQUEST_ID_HEADER } from '../../shared/gateway-responses';
import { datedHeaders } from '../../shared/http/deprecation';
import { COMMON_HEADERS } from '../../shared/http/response';
import { BASE_PATH, routeOf } from '../../shared/routes';
import { contractViolations } from '../openapi/answer-check';
import { linkOf, noAnswerReason, REQUEST_TIMEOUT_MS } from '../requests';

export type CheckStatus = 'ok' | 'FAIL' | 'skip';

export interface CheckResult {
  readonly name: CheckName;
  readonly status: CheckStatus;
  readonly detail: string;
  readonly ms: number;
}

export const CHECK_NAMES = ['create', 'list', 'next page', 'get', 'no key', 'unknown route'] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

/** The name of the pet a smoke test creates, so that it is recognised among real ones. */
export const SMOKE_PET_NAME = 'smoke-test';
/** A path below the base URL that no route has. */
export const UNKNOWN_ROUTE_PATH = '/smoke-test/no-such-route';
/** Page size of the listing: 1, so that two pets make a second page. */
const LIST_LIMIT = 1;

export interface SmokeOptions {
  /** The base URL, ending in the base path, without a trailing slash. */
  readonly baseUrl: string;
  readonly key: string;
  /** No create: the pet to get is the listing's first. */
  readonly readOnly: boolean;
  /** When the checks run, for the deprecated route's sunset. */
  readonly now?: Date;
}

/** A check that cannot pass: its line says why. */
class CheckFailed extends Error {}
/** A check that has nothing to judge: its line says why, and it is no failure. */
class CheckSkipped extends Error {}

interface Answer {
  readonly method: string;
  readonly url: URL;
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

/** One request; no answer (refused, unknown host, timeout) fails the check in one line. */
const send = async (method: 'GET' | 'POST', url: URL, { key, body }: { key?: string; body?: unknown } = {}): Promise<Answer> => {
  const headers: Record<string, string> = {};
  if (key !== undefined) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  try {
    const response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    return { method, url, status: response.status, headers: response.headers, body: await response.text() };
  } catch (error) {
    throw new CheckFailed(`no answer from ${url.origin} (${noAnswerReason(error)})`);
  }
};

const jsonOf = (answer: Answer): unknown => {
  try {
    return JSON.parse(answer.body);
  } catch {
    return undefined;
  }
};

/** What is wrong with an answer besides its status: the headers of every answer, the Error shape, openapi.json. */
const answerProblems = (answer: Answer): string[] => {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(COMMON_HEADERS)) {
    const sent = answer.headers.get(name);
    if (sent !== value)
      problems.push(sent === null ? `no ${name} header` : `${name} is ${JSON.stringify(sent)}, not ${JSON.stringify(value)}`);
  }
  if (!answer.headers.has(GATEWAY_REQUEST_ID_HEADER)) problems.push(`no ${GATEWAY_REQUEST_ID_HEADER} header`);
  if (answer.status >= 400) {
    const error = ApiErrorBody.safeParse(jsonOf(answer));
    if (!error.success) problems.push('the body is not the Error shape {code, message, status}');
    else if (error.data.status !== answer.status) problems.push(`the body's status is ${error.data.status}, not ${answer.status}`);
  }
  // The checker's sentences start with the request, which the check's line already names.
  return [...problems, ...contractViolations(answer).map((problem) => problem.replace(/^.*? → \d+: /, ''))];
};

/** The answer's status must be `status`, and the answer without fault; returns its JSON body. */
const expectAnswer = (answer: Answer, status: number): unknown => {
  if (answer.status !== status) {
    const code = ApiErrorBody.safeParse(jsonOf(answer));
    throw new CheckFailed(
      `${answer.method} ${answer.url.pathname} answered ${answer.status}${code.success ? ` ${code.data.code}` : ''}, not ${status}`,
    );
  }
  const [first, ...others] = answerProblems(answer);
  if (first !== undefined) throw new CheckFailed(`${first}${others.length > 0 ? ` (and ${others.length} more)` : ''}`);
  return jsonOf(answer);
};

/** A URL the API wrote: it must be on the base URL's origin, at `path`; a foreign one is refused, never followed. */
const ownUrl = (value: string | undefined, what: string, base: URL, path?: string): URL => {
  if (value === undefined) throw new CheckFailed(`no ${what}`);
  const url = URL.canParse(value, base.href) ? new URL(value, base) : undefined;
  if (url?.origin !== base.origin) throw new CheckFailed(`${what} is not on ${base.origin}: ${url?.origin ?? value}`);
  if (path !== undefined && url.pathname !== path) throw new CheckFailed(`${what} is ${url.pathname}, not ${path}`);
  return url;
};

const petsOf = (body: unknown): Pet[] => {
  const pets = Pets.safeParse(body);
  if (!pets.success) throw new CheckFailed('the body is not a list of pets');
  return pets.data;
};
const petOf = (body: unknown): Pet => {
  const pet = Pet.safeParse(body);
  if (!pet.success) throw new CheckFailed('the body is not a pet');
  return pet.data;
};
const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;

/** What the checks learn from each other: the pet created, the listing's first page. */
interface Findings {
  created?: { pet: Pet; location: URL };
  firstPage?: { pets: Pet[]; next?: string };
}

type Check = (findings: Findings) => Promise<string>;

const checksFor = ({ baseUrl, key, readOnly, now = new Date() }: SmokeOptions): Record<CheckName, Check> => {
  const base = new URL(baseUrl);
  const at = (path: string) => new URL(`${baseUrl}${path}`);
  const petsPath = `${BASE_PATH}/pets`;
  const getPet = routeOf('getPet');
  const deprecation = getPet.deprecated;

  return {
    create: async (findings) => {
      if (readOnly) throw new CheckSkipped('--read-only: nothing is created');
      const answer = await send('POST', at('/pets'), { key, body: { name: SMOKE_PET_NAME, categoryId: 1 } });
      const pet = petOf(expectAnswer(answer, 201));
      if (pet.name !== SMOKE_PET_NAME) throw new CheckFailed(`the pet's name is ${JSON.stringify(pet.name)}, not ${SMOKE_PET_NAME}`);
      const location = ownUrl(answer.headers.get('location') ?? undefined, 'Location', base, `${petsPath}/${pet.id}`);
      findings.created = { pet, location };
      return `201, pet ${pet.id} at ${location.pathname}`;
    },

    list: async (findings) => {
      const answer = await send('GET', at(`/pets?limit=${LIST_LIMIT}`), { key });
      const pets = petsOf(expectAnswer(answer, 200));
      if (pets.length > LIST_LIMIT) throw new CheckFailed(`${plural(pets.length, 'pet')} on a page of limit ${LIST_LIMIT}`);
      const next = linkOf(answer, 'next');
      findings.firstPage = { pets, next };
      return `200, ${plural(pets.length, 'pet')}${next === undefined ? ', no Link rel="next"' : ', Link rel="next"'}`;
    },

    'next page': async (findings) => {
      const page = findings.firstPage;
      if (page === undefined) throw new CheckSkipped('no listing to follow (list failed)');
      if (page.next === undefined) {
        if (page.pets.length < LIST_LIMIT) throw new CheckSkipped('one page only: the listing is empty');
        // A full page without a next link is the last only if no other pet exists: ask for more.
        const answer = await send('GET', at(`/pets?limit=${LIST_LIMIT + 1}`), { key });
        const pets = petsOf(expectAnswer(answer, 200));
        if (pets.length <= LIST_LIMIT) throw new CheckSkipped(`one page only: the listing holds ${plural(pets.length, 'pet')}`);
        throw new CheckFailed(`a full page of limit ${LIST_LIMIT} has no Link rel="next", though more pets exist`);
      }
      const url = ownUrl(page.next, 'Link rel="next"', base, petsPath);
      const pets = petsOf(expectAnswer(await send('GET', url, { key }), 200));
      const repeated = pets.filter((pet) => page.pets.some((first) => first.id === pet.id));
      if (repeated.length > 0) throw new CheckFailed(`the next page repeats pet ${repeated[0]?.id} of the first`);
      return `200, ${plural(pets.length, 'pet')}`;
    },

    get: async (findings) => {
      const pet = readOnly ? findings.firstPage?.pets[0] : findings.created?.pet;
      if (pet === undefined) {
        throw new CheckSkipped(readOnly ? 'no pet to get: the listing is empty (or failed)' : 'no pet to get: create failed');
      }
      const url = findings.created?.location ?? at(`/pets/${pet.id}`);
      const answer = await send('GET', url, { key });
      const sunset = deprecation !== undefined && now >= deprecation.sunsetAt;
      const body = expectAnswer(answer, sunset ? 410 : 200);
      if (!sunset && JSON.stringify(petOf(body)) !== JSON.stringify(pet))
        throw new CheckFailed(`the pet differs from ${JSON.stringify(pet)}`);
      if (deprecation === undefined) return '200, the same pet';
      for (const [name, value] of Object.entries(datedHeaders(deprecation))) {
        const sent = answer.headers.get(name);
        if (sent !== value)
          throw new CheckFailed(`${name} is ${sent === null ? 'missing' : JSON.stringify(sent)}, not ${JSON.stringify(value)}`);
      }
      const successor = linkOf(answer, 'successor-version');
      if (successor !== undefined) ownUrl(successor, 'Link rel="successor-version"', base, `${BASE_PATH}${deprecation.successorPath}`);
      const what = sunset ? '410 gone (past its sunset)' : '200, the same pet';
      return `${what}, Deprecation and Sunset${successor === undefined ? '' : ', Link rel="successor-version"'}`;
    },

    'no key': async () => {
      const answer = await send('GET', at('/pets'));
      expectAnswer(answer, 401);
      if (answer.headers.get('www-authenticate') !== WWW_AUTHENTICATE) throw new CheckFailed(`WWW-Authenticate is not ${WWW_AUTHENTICATE}`);
      return `401 unauthorized, WWW-Authenticate: ${WWW_AUTHENTICATE}`;
    },

    'unknown route': async () => {
      const answer = await send('GET', at(UNKNOWN_ROUTE_PATH), { key });
      expectAnswer(answer, 404);
      return `404 not_found for GET ${BASE_PATH}${UNKNOWN_ROUTE_PATH}`;
    },
  };
};

/** The text of a check's failure, never with the key in it (a broken server might echo it). */
const describeFailure = (error: unknown, key: string): string => {
  const message = error instanceof CheckFailed || error instanceof CheckSkipped ? error.message : `unexpected: ${String(error)}`;
  return message.replaceAll(key, '…').replace(/\s+/g, ' ').trim();
};

/** Runs every check in order; a failed one does not stop the others. */
export const runChecks = async (options: SmokeOptions): Promise<CheckResult[]> => {
  const checks = checksFor(options);
  const findings: Findings = {};
  const results: CheckResult[] = [];
  for (const name of CHECK_NAMES) {
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    try {
      const detail = await checks[name](findings);
      results.push({ name, status: 'ok', detail: detail.replaceAll(options.key, '…'), ms: ms() });
    } catch (error) {
      const status = error instanceof CheckSkipped ? 'skip' : 'FAIL';
      results.push({ name, status, detail: describeFailure(error, options.key), ms: ms() });
    }
  }
  return results;
};
