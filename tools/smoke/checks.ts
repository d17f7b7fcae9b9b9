/**
 * The checks of `npm run smoke`, in the order they run: each sends a request or two to a
 * deployment through the client library (client/src) as a client would, and judges the answers:
 * the status it expects, openapi.json's description of the answer (tools/openapi/answer-check.ts),
 * what the document cannot say (an Error's status equal to the HTTP status; an unknown route's
 * headers). URLs the API writes (Location, Link) must be on the base URL's origin, below its path;
 * a foreign one is never followed, and no redirect is, so the key only ever goes to the base URL's
 * origin.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { PetStore, PetStoreNetworkError, PetStoreTimeoutError, type Page } from '../../client/src/index';
import { ApiErrorBody, Health, Pet, Pets } from '../../shared/models';
import { WWW_AUTHENTICATE } from '../../shared/errors';
import { GATEWAY_REQUEST_ID_HEADER } from '../../shared/gateway-responses';
import { datedHeaders } from '../../shared/http/deprecation';
import { COMMON_HEADERS, JSON_CONTENT_TYPE } from '../../shared/http/response';
import { BASE_PATH, routeOf, routes, type HttpMethod, type OperationId, type Route } from '../../shared/routes';
import { UsageError } from '../cli';
import { maskKeys, maskSecretRuns } from '../key-mask';
import { contractViolations, parseJson, type Described } from '../openapi/answer-check';
import { linkOf, noAnswerReason, REQUEST_TIMEOUT_MS } from '../requests';
import { SMOKE_HELP } from './options';

export type CheckStatus = 'ok' | 'FAIL' | 'skip';

export interface SmokeCheckResult {
  readonly name: CheckName;
  readonly status: CheckStatus;
  readonly detail: string;
  readonly ms: number;
}

/** The name of the pet a smoke test creates, so that it is recognised among real ones. */
export const SMOKE_PET_NAME = 'smoke-test';
/** A path below the base URL that no route has. */
const UNKNOWN_ROUTE_PATH = '/smoke-test/no-such-route';
/** Page size of the smoke's listing: 1, so that two pets make a second page. */
const SMOKE_PAGE_SIZE = 1;
/**
 * The waits before each new listing when a next page is missing (1.4 s in all): the unfiltered
 * listing is an eventually consistent Scan, which may not show pets written a moment ago yet.
 */
const RELIST_DELAYS_MS = [200, 400, 800];

export interface SmokeOptions {
  /** The base URL, ending in the base path, without a trailing slash. */
  readonly baseUrl: string;
  readonly key: string;
  /** No create: the pet to get is the listing's first. */
  readonly readOnly: boolean;
  /** When the checks run, for the deprecated route's sunset. */
  readonly now?: Date;
  /** How long each request waits for its answer (default REQUEST_TIMEOUT_MS). */
  readonly timeoutMs?: number;
}

/** A check that cannot pass: its line says why. */
class CheckFailed extends Error {}
/** A check that has nothing to judge: its line says why, and it is no failure. */
class CheckSkipped extends Error {}
/** A request got no answer at all: the checks after it send nothing more to that origin. */
class NoAnswer extends CheckFailed {
  constructor(
    readonly origin: string,
    reason: string,
  ) {
    super(`no answer from ${origin} (${reason})`);
  }
}

/** The answer to one call of the client, and what the call gave: undefined when it threw for that answer. */
interface Answered<T> {
  readonly answer: Described;
  readonly value: T | undefined;
}

/**
 * Runs one call of the client, which makes one request (no retry) and answers it, masked: a call
 * that threw for its answer (an error status, a body not of its kind) still has one, which the
 * check judges and says what is wrong with. No answer (refused, unknown host, timeout) is a NoAnswer.
 */
type AnswerTo = <T>(method: HttpMethod, call: (client: PetStore) => Promise<T>) => Promise<Answered<T>>;

/** What is wrong with an answer besides its status: openapi.json's description, and the Error's status. */
const answerProblems = (answer: Described): string[] => {
  // openapi.json cannot say that an Error's status is the HTTP status; it says the rest.
  const error = answer.status >= 400 ? ApiErrorBody.safeParse(parseJson(answer.body)) : undefined;
  const problems =
    error?.success && error.data.status !== answer.status ? [`the body's status is ${error.data.status}, not ${answer.status}`] : [];
  // The checker's sentences start with the request, which the check's line already names.
  return [...problems, ...contractViolations(answer).map((problem) => problem.replace(/^.*? → \d+: /, ''))];
};

/**
 * The headers every answer carries, whoever sends it: openapi.json requires them on each answer it
 * describes, so they are checked here only for an answer it does not describe (an unknown route).
 */
const headersOfEveryAnswer = (answer: Described): string[] => {
  const problems: string[] = [];
  // Such an answer is an error, in the Error shape: a JSON body.
  for (const [name, value] of Object.entries({ ...JSON_CONTENT_TYPE, ...COMMON_HEADERS })) {
    const sent = answer.headers.get(name);
    if (sent !== value)
      problems.push(sent === null ? `no ${name} header` : `${name} is ${JSON.stringify(sent)}, not ${JSON.stringify(value)}`);
  }
  if (!answer.headers.has(GATEWAY_REQUEST_ID_HEADER)) problems.push(`no ${GATEWAY_REQUEST_ID_HEADER} header`);
  return problems;
};

/** The answer's status must be `status`, and the answer without fault; returns its JSON body. */
const expectAnswer = (answer: Described, status: number, moreProblems: (answer: Described) => string[] = () => []): unknown => {
  if (answer.status !== status) {
    const code = ApiErrorBody.safeParse(parseJson(answer.body));
    throw new CheckFailed(
      `${answer.method} ${answer.url.pathname} answered ${answer.status}${code.success ? ` ${code.data.code}` : ''}, not ${status}`,
    );
  }
  const [first, ...others] = [...answerProblems(answer), ...moreProblems(answer)];
  if (first !== undefined) throw new CheckFailed(`${first}${others.length > 0 ? ` (and ${others.length} more)` : ''}`);
  return parseJson(answer.body);
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

/** A listing's page: its pets, its `Link rel="next"` as written, and the client's page, whose next() follows it. */
interface Listing {
  pets: Pet[];
  next?: string;
  page: Page;
}

/** What the checks learn from each other: the pet created, the listing's first page. */
interface Findings {
  created?: { pet: Pet; location: URL };
  firstPage?: Listing;
}

/** What every check sends with, and the requests more than one check makes. */
interface CheckContext {
  readonly answerTo: AnswerTo;
  readonly readOnly: boolean;
  readonly now: Date;
  /** The base URL, for the URLs the API writes. */
  readonly base: URL;
  /** POST /pets of a pet named SMOKE_PET_NAME: 201, that pet, at a Location of the base URL's. */
  createPet(): Promise<NonNullable<Findings['created']>>;
  /** GET /pets?limit=…: 200, at most `limit` pets, and the next page's link if any. */
  listing(limit: number): Promise<Listing>;
  /** The listing, asked again after each of RELIST_DELAYS_MS while it has no next page. */
  relisting(limit: number): Promise<Listing>;
}

/**
 * One check, declared whole: the smoke runs it, the tests judge it, docs/deploy.md's table
 * of checks is generated from it (`npm run openapi`). A new check is one more declaration.
 */
export interface SmokeCheck {
  readonly name: string;
  /** The operations its requests try (the smoke's coverage of the route table). */
  readonly tries: readonly OperationId[];
  /** What it sends and what it expects, for the document. */
  readonly does: string;
  /** What its failure tells the operator, for the document. */
  readonly failureTells: string;
  /** It always writes: `--read-only` skips it. */
  readonly writes?: true;
  /** It reads only what a writing check made (none has a read-only stand-in): `--read-only` skips it too. */
  readonly readsWritten?: true;
  /** The checks it learns from (Findings): it cannot pass when one of them fails. */
  readonly learnsFrom?: readonly string[];
  /** Runs the check: the detail of its line, or a CheckFailed / CheckSkipped. */
  run(context: CheckContext, findings: Findings): Promise<string>;
}

const petsPath = `${BASE_PATH}/pets`;
const healthPath = `${BASE_PATH}${routeOf('getHealth').path}`;
const deprecation = routeOf('getPet').deprecated;

/** The checks, in the order they run. */
export const SMOKE_CHECKS = [
  {
    name: 'create',
    tries: ['createPet'],
    does: `\`POST /pets\` \`{"name":"${SMOKE_PET_NAME}","categoryId":1}\`: \`201\`, the pet, a \`Location\` at \`${petsPath}/{id}\``,
    failureTells:
      "writes fail (table, function, or the key's `pets:write` scope); a foreign `Location` means the checked address is not the stage's own",
    writes: true,
    run: async ({ createPet }, findings) => {
      findings.created = await createPet();
      return `201, pet ${findings.created.pet.id} at ${findings.created.location.pathname}`;
    },
  },
  {
    name: 'list',
    tries: ['listPets'],
    does: `\`GET /pets?limit=${SMOKE_PAGE_SIZE}\`: \`200\`, at most ${plural(SMOKE_PAGE_SIZE, 'pet')}`,
    failureTells: 'reads fail, or a stored pet does not match the document',
    run: async ({ listing }, findings) => {
      findings.firstPage = await listing(SMOKE_PAGE_SIZE);
      const { pets, next } = findings.firstPage;
      return `200, ${plural(pets.length, 'pet')}${next === undefined ? ', no Link rel="next"' : ', Link rel="next"'}`;
    },
  },
  {
    name: 'next page',
    tries: ['listPets'],
    does: 'follows `Link rel="next"`: `200`, no pet of the first page again; creates a second pet if needed (`skip` with `--read-only` if it would)',
    failureTells: 'pagination is broken, or links point elsewhere',
    learnsFrom: ['list'],
    run: async ({ answerTo, readOnly, base, createPet, listing, relisting }, findings) => {
      let page = findings.firstPage;
      if (page === undefined) throw new CheckSkipped('no listing to follow (list failed)');
      let made = '';
      if (page.next === undefined) {
        // A full page without a next link is the last only if no other pet exists: ask for more.
        const count = page.pets.length < SMOKE_PAGE_SIZE ? page.pets.length : (await listing(SMOKE_PAGE_SIZE + 1)).pets.length;
        if (count > SMOKE_PAGE_SIZE) {
          page = await relisting(SMOKE_PAGE_SIZE);
          if (page.next === undefined)
            throw new CheckFailed(`a full page of limit ${SMOKE_PAGE_SIZE} has no Link rel="next", though more pets exist`);
        } else {
          if (readOnly)
            throw new CheckSkipped(
              count === 0 ? 'one page only: the listing is empty' : `one page only: the listing holds ${plural(count, 'pet')}`,
            );
          // A fresh stage holds only the smoke's pet: more of them make a second page, so the link is really followed.
          // The create check's pet exists even when the listing does not show it yet.
          const existing = Math.max(count, findings.created === undefined ? 0 : 1);
          for (let pets = existing; pets <= SMOKE_PAGE_SIZE; pets++) await createPet();
          made = `, after creating ${plural(SMOKE_PAGE_SIZE + 1 - existing, 'more pet')} named ${SMOKE_PET_NAME}`;
          page = await relisting(SMOKE_PAGE_SIZE);
          if (page.next === undefined)
            throw new CheckFailed(`no Link rel="next" on a page of limit ${SMOKE_PAGE_SIZE}, though ${SMOKE_PAGE_SIZE + 1} pets exist`);
        }
      }
      ownUrl(page.next, 'Link rel="next"', base, petsPath);
      // next() sends the link's query to the base URL: the line above judges the link as written.
      const listed = page;
      const { answer } = await answerTo('GET', () => listed.page.next());
      const pets = petsOf(expectAnswer(answer, 200));
      const first = page.pets;
      const repeated = pets.filter((pet) => first.some((firstPet) => firstPet.id === pet.id));
      if (repeated.length > 0) throw new CheckFailed(`the next page repeats pet ${repeated[0]?.id} of the first`);
      return `200, ${plural(pets.length, 'pet')}${made}`;
    },
  },
  {
    name: 'get',
    tries: ['getPet'],
    does: '`GET` the created (or first listed) pet: `200`, the same pet, the `Deprecation`, `Sunset` and `Link` headers (`410 gone` past the sunset)',
    failureTells: 'the deprecated operation or its headers are wrong. `skip` when there is no pet',
    learnsFrom: ['create'],
    run: async ({ answerTo, readOnly, now, base }, findings) => {
      const pet = readOnly ? findings.firstPage?.pets[0] : findings.created?.pet;
      if (pet === undefined) {
        throw new CheckSkipped(readOnly ? 'no pet to get: the listing is empty (or failed)' : 'no pet to get: create failed');
      }
      // The deprecated call is what this check is for. Its URL is the created pet's Location, as the create check found.
      const { answer } = await answerTo('GET', (client) => client.pets.get(pet.id));
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
  },
  {
    name: 'no key',
    tries: ['listPets'],
    does: `\`GET /pets\` without \`Authorization\`: \`401 unauthorized\` with \`WWW-Authenticate: ${WWW_AUTHENTICATE}\``,
    failureTells: "the authorizer or gateway responses are not this repository's",
    run: async ({ answerTo }) => {
      // openapi.json requires the 401's WWW-Authenticate, with its value.
      const { answer } = await answerTo('GET', (client) => client.raw({ operation: 'listPets', path: '/pets', auth: false }));
      expectAnswer(answer, 401);
      return `401 unauthorized, WWW-Authenticate: ${WWW_AUTHENTICATE}`;
    },
  },
  {
    name: 'unknown route',
    tries: [],
    does: `\`GET ${BASE_PATH}${UNKNOWN_ROUTE_PATH}\` with the key: \`404 not_found\``,
    failureTells: 'the gateway responses are missing (raw API Gateway answers `403` `Missing Authentication Token`)',
    run: async ({ answerTo }) => {
      const { answer } = await answerTo('GET', (client) => client.raw({ path: UNKNOWN_ROUTE_PATH }));
      expectAnswer(answer, 404, headersOfEveryAnswer);
      return `404 not_found for GET ${BASE_PATH}${UNKNOWN_ROUTE_PATH}`;
    },
  },
  {
    name: 'health',
    tries: ['getHealth'],
    does: `\`GET ${healthPath}\` without \`Authorization\`: \`200\` \`{"status":"ok"}\`, from the database check the region's health probe runs for Route 53`,
    failureTells:
      'the region cannot read its pets, keys or idempotency table (`503`), and so its health probe fails too and Route 53 takes the region out of the global name within minutes; or the route needs a key it must not (`401`)',
    run: async ({ answerTo }) => {
      const { answer } = await answerTo('GET', (client) => client.health());
      const body = Health.safeParse(expectAnswer(answer, 200));
      if (!body.success) throw new CheckFailed('the body is not {"status":"ok"}');
      return '200, {"status":"ok"} without a key';
    },
  },
] as const satisfies readonly SmokeCheck[];

export type CheckName = (typeof SMOKE_CHECKS)[number]['name'];
/** The checks' names, in the order they run. */
export const CHECK_NAMES: readonly CheckName[] = SMOKE_CHECKS.map((check) => check.name);

/**
 * The checks that send each operation of the route table a request, or why none does: a route
 * not implemented answers 501 whatever the deployment. An operation with neither is a gap
 * (test/unit/smoke-coverage.test.ts).
 */
export const SMOKE_COVERAGE = Object.fromEntries(
  routes.map((route: Route) => {
    const checks = SMOKE_CHECKS.filter((check: SmokeCheck) => check.tries.includes(route.operationId as OperationId)).map(
      (check) => check.name,
    );
    const none = route.notImplemented ? { none: 'not implemented: every request to it answers 501, whatever the deployment' } : undefined;
    return [route.operationId, checks.length === 0 && none ? none : checks];
  }),
) as Readonly<Record<OperationId, readonly CheckName[] | { readonly none: string }>>;

/**
 * The client the checks send with: one attempt per call, no retry, as a retried 429, 503 or
 * timeout would hide what the smoke is there to see (and a timeout would cost its wait again).
 * Every answer is recorded with every run of `key` long enough to matter masked in its headers
 * and body as soon as it is received (tools/key-mask.ts), so that no check quotes it, whole, cut
 * short or in part.
 */
const answeringClient = (baseUrl: string, key: string, timeoutMs: number): AnswerTo => {
  // The answers of the call under way, as onResponse gives them (the checks send one request at a time).
  const received: Array<Omit<Described, 'method'>> = [];
  let client: PetStore;
  try {
    client = new PetStore({
      baseUrl,
      apiKey: key,
      timeoutMs,
      maxRetries: 0,
      onResponse: ({ response, text }) => {
        const headers = new Headers();
        // A header holds Latin-1 only: its mask is '...'.
        for (const [name, value] of response.headers) headers.append(name, maskSecretRuns(value, [key], '...'));
        received.push({ url: new URL(response.url), status: response.status, headers, body: maskSecretRuns(text, [key]) });
      },
    });
  } catch {
    // The client refuses a key it could not send; nothing was sent yet.
    throw new UsageError(
      `the API key cannot be sent as a bearer token (letters, digits and -._~+/, then = at its end only): see ${SMOKE_HELP}`,
    );
  }
  const origin = new URL(baseUrl).origin;
  return async (method, call) => {
    received.length = 0;
    let value;
    try {
      value = await call(client);
    } catch (error) {
      if (error instanceof PetStoreTimeoutError) throw new NoAnswer(origin, `no answer within ${timeoutMs / 1000} s`);
      if (error instanceof PetStoreNetworkError) throw new NoAnswer(origin, noAnswerReason(error.cause, timeoutMs));
      if (received.length === 0) throw error;
    }
    const answer = received.at(-1);
    if (answer === undefined) throw new Error('the client sent no request');
    return { answer: { method, ...answer }, value };
  };
};

const contextFor = ({ baseUrl, key, readOnly, now = new Date(), timeoutMs = REQUEST_TIMEOUT_MS }: SmokeOptions): CheckContext => {
  const answerTo = answeringClient(baseUrl, key, timeoutMs);
  const base = new URL(baseUrl);

  const createPet = async (): Promise<NonNullable<Findings['created']>> => {
    const { answer } = await answerTo('POST', (client) => client.pets.create({ name: SMOKE_PET_NAME, categoryId: 1 }));
    const pet = petOf(expectAnswer(answer, 201));
    if (pet.name !== SMOKE_PET_NAME) throw new CheckFailed(`the pet's name is ${JSON.stringify(pet.name)}, not ${SMOKE_PET_NAME}`);
    const location = ownUrl(answer.headers.get('location') ?? undefined, 'Location', base, `${petsPath}/${pet.id}`);
    return { pet, location };
  };

  const listing = async (limit: number): Promise<Listing> => {
    const { answer, value: page } = await answerTo('GET', (client) => client.pets.list({ limit }));
    const pets = petsOf(expectAnswer(answer, 200));
    if (pets.length > limit) throw new CheckFailed(`${plural(pets.length, 'pet')} on a page of limit ${limit}`);
    // A 200 with a list of pets is a page to the client too.
    if (page === undefined) throw new CheckFailed('the client refused the listing');
    return { pets, next: linkOf(answer, 'next'), page };
  };

  const relisting = async (limit: number): Promise<Listing> => {
    let page = await listing(limit);
    for (const delay of RELIST_DELAYS_MS) {
      if (page.next !== undefined) break;
      await sleep(delay);
      page = await listing(limit);
    }
    return page;
  };

  return { answerTo, readOnly, now, base, createPet, listing, relisting };
};

/**
 * A check's line, one line, through the mask: never a run of the key, nor anything like one of the
 * API's keys, nor a character that does not show (a broken server might send any of them).
 */
const detailLine = (text: string, key: string): string => maskKeys(text.replace(/\s+/g, ' ').trim(), [key]);

const describeFailure = (error: unknown): string =>
  error instanceof CheckFailed || error instanceof CheckSkipped ? error.message : `unexpected: ${String(error)}`;

/**
 * Runs every check in order; a failed one does not stop the others, but once a request got no
 * answer, the checks after it send nothing (each would wait as long) and fail as not tried.
 */
export const runChecks = async (options: SmokeOptions): Promise<SmokeCheckResult[]> => {
  const context = contextFor(options);
  const findings: Findings = {};
  const results: SmokeCheckResult[] = [];
  let silentOrigin: string | undefined;
  for (const check of SMOKE_CHECKS as readonly SmokeCheck[]) {
    const name = check.name as CheckName;
    if (silentOrigin !== undefined) {
      results.push({ name, status: 'FAIL', detail: `not tried: ${silentOrigin} did not answer`, ms: 0 });
      continue;
    }
    const started = performance.now();
    const ms = () => Math.round(performance.now() - started);
    try {
      if ((check.writes || check.readsWritten) && options.readOnly) throw new CheckSkipped('--read-only: nothing is written');
      const detail = await check.run(context, findings);
      results.push({ name, status: 'ok', detail: detailLine(detail, options.key), ms: ms() });
    } catch (error) {
      if (error instanceof NoAnswer) silentOrigin = error.origin;
      const status = error instanceof CheckSkipped ? 'skip' : 'FAIL';
      results.push({ name, status, detail: detailLine(describeFailure(error), options.key), ms: ms() });
    }
  }
  return results;
};
