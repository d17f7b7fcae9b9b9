/**
 * Hostile input, property-based (fast-check): at least 1,000 generated requests per operation
 * over real HTTP to the local server. Every answer must be safe (test/support/hostile-http.ts:
 * never 5xx, JSON, the Error shape with a catalogue code for its status, described by
 * openapi.json, no secret the request carried); where docs/api.md decides the answer, an oracle
 * written from docs/api.md says which it must be, and valid creates are read back.
 *
 * Runs are reproducible: each property has a fixed seed (FUZZ_SEED, FUZZ_RUNS override it, see
 * test/support/arbitraries.ts), and fast-check prints the seed and counterexample on failure.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import { MAX_BODY_BYTES } from '../../shared/http/json-body';
import {
  anyMethod,
  authCase,
  bodyBytes,
  bodyText,
  contentTypeCase,
  FUZZ_RUNS,
  fuzzParameters,
  headerValue,
  listQuery,
  oddTarget,
  percentEncode,
  petIdSegment,
  type AuthCase,
  type Keys,
  type QueryCase,
} from '../support/arbitraries';
import {
  errorCodeOf,
  expectSafeAnswer,
  isParseableHttp,
  rawClient,
  type RawAnswer,
  type RawClient,
  type RawRequest,
} from '../support/hostile-http';
import { linkOf, startLocalApi, type LocalApi } from '../support/local-api';
import { localUsageKey } from '../../tools/local-server/usage-plans';

/** Who this file's changes to keys are made by. */
const ACTOR = 'local:test';

const STATUSES = ['available', 'pending', 'sold'] as const;
const MAX_SAFE_ID = Number.MAX_SAFE_INTEGER;
/**
 * Long enough for a property of 1,000+ requests on a busy machine; each normally takes seconds, and
 * took over three minutes on two cores shared with four busy processes and other test runs.
 */
const PROPERTY_TIMEOUT_MS = 600_000;

interface StoredPet {
  readonly id: number;
  readonly name: string;
  readonly categoryId: number;
  readonly status: string;
}

let api: LocalApi;
let client: RawClient;
let keys: Keys;
const stored = new Map<number, StoredPet>();
/** Real cursors, each with the status filter of the listing it came from ('' for none). */
const cursors = new Map<string, string>();

beforeAll(async () => {
  api = await startLocalApi();
  client = rawClient(api.url);
  const revoked = generateApiKey();
  await api.keys.register(revoked, 'revoked', { usage: localUsageKey(), changedBy: ACTOR });
  await api.keys.revoke(keyIdOf(hashApiKey(revoked)), ACTOR);
  keys = { valid: api.key, revoked };
  for (let index = 0; index < 12; index += 1) {
    const pet = await api.petStore.pets.create({ name: `seed ${index}`, categoryId: index + 1, status: STATUSES[index % 3] });
    stored.set(pet.id, pet);
  }
  for (const status of ['', ...STATUSES]) {
    const response = await api.call(`/pets?limit=1${status ? `&status=${status}` : ''}`);
    const next = linkOf(response, 'next');
    if (next) cursors.set(new URL(next).searchParams.get('cursor') ?? '', status);
  }
  expect(cursors.size).toBe(4);
});
afterAll(async () => {
  client?.close();
  await api?.close();
});

type Expected = { readonly status: number; readonly code?: string } | undefined;

/** Counts the answers a property saw, by status and code, so a test can insist its generators reach every outcome. */
const tally = () => {
  const seen = new Map<string, number>();
  return {
    add: (answer: RawAnswer) => {
      const outcome = `${answer.status}${answer.status >= 300 && answer.text ? ` ${errorCodeOf(answer)}` : ''}`;
      seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
    },
    /** Each outcome was seen in at least `share` of the runs (a generator that stopped reaching one would leave it untested). */
    expectReached: (outcomes: readonly string[], share = 0.004) => {
      const times = Math.max(1, Math.floor(FUZZ_RUNS * share));
      for (const outcome of outcomes)
        expect(seen.get(outcome) ?? 0, `${outcome} in ${JSON.stringify([...seen])}`).toBeGreaterThanOrEqual(times);
    },
  };
};

/** Sends, checks the properties every answer has, and checks the oracle's answer when it has one. */
const sendAndCheck = async (raw: RawRequest, secrets: readonly string[], expected: Expected): Promise<RawAnswer> => {
  const answer = await client.send(raw);
  expectSafeAnswer(raw, answer, secrets);
  if (expected && isParseableHttp(raw)) {
    const where = `${raw.method} ${raw.target.slice(0, 200)} → ${answer.text.slice(0, 300)}`;
    expect({ status: answer.status, code: errorCodeOf(answer) }, where).toEqual({ status: expected.status, code: expected.code });
  }
  return answer;
};

/** The authentication rule of docs/api.md: on a route, a judged Authorization case that does not authenticate is 401. */
const authExpectation = (auth: AuthCase, otherwise: Expected, routed = true): Expected => {
  if (auth.valid === undefined || !routed) return undefined;
  return auth.valid ? otherwise : { status: 401, code: 'unauthorized' };
};

const withQuery = (path: string, query: string | undefined, auth: AuthCase) => {
  const extra = auth.query.map(([name, value]) => `${percentEncode(name)}=${percentEncode(value)}`);
  const parts = [...(query === undefined ? [] : [query]), ...extra];
  return parts.length === 0 && query === undefined ? path : `${path}?${parts.join('&')}`;
};

/** Headers a client may add that the API must ignore or survive. */
const extraHeaders: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Record<string, string>>({}) },
  fc
    .tuple(
      fc.constantFrom(
        'X-Custom',
        'X-Forwarded-For',
        'X-Forwarded-Proto',
        'Accept',
        'Accept-Encoding',
        'User-Agent',
        'Origin',
        'Cookie',
        'constructor',
        '__proto__',
        'X-Amzn-RequestId',
        'X-Request-Id',
      ),
      headerValue,
    )
    .map(([name, value]) => ({ [name]: value })),
  fc.constantFrom<Record<string, string>>(
    { Accept: 'text/html' },
    { 'Accept-Charset': 'latin1' },
    { Expect: '100-continue' },
    { Connection: 'close' },
    { Connection: 'Upgrade', Upgrade: 'websocket' },
    { 'Transfer-Encoding': 'chunked' },
  ),
);

// ---------------------------------------------------------------------------------------------
// listPets

/** What docs/api.md says GET /pets answers for this query, given a key that authenticates. */
const expectedListing = (query: string | undefined): Expected => {
  const pairs = [...new URLSearchParams(query ?? '')];
  const names = pairs.map(([name]) => name);
  const value = (name: string) => pairs.find(([key]) => key === name)?.[1];
  const limit = value('limit');
  const status = value('status');
  const refused =
    names.some((name) => !['limit', 'status', 'cursor'].includes(name)) ||
    new Set(names).size !== names.length ||
    (limit !== undefined && !(/^[1-9][0-9]*$/.test(limit) && Number(limit) <= 100)) ||
    (status !== undefined && !(STATUSES as readonly string[]).includes(status));
  if (refused) return { status: 400, code: 'validation_failed' };
  const cursor = value('cursor');
  if (cursor !== undefined && cursors.get(cursor) !== (status ?? '')) return { status: 400, code: 'invalid_cursor' };
  return { status: 200 };
};

describe('listPets (GET /v1/pets) under hostile input', () => {
  it(
    'answers every query and Authorization safely, and as docs/api.md decides',
    async () => {
      const outcomes = tally();
      await fc.assert(
        fc.asyncProperty(listQuery([...cursors.keys()]), authCase(keys), extraHeaders, async (query, auth, extra) => {
          const raw = { method: 'GET', target: withQuery('/v1/pets', query.raw, auth), headers: { ...extra, ...auth.headers } };
          const answer = await sendAndCheck(raw, [...auth.secrets, ...query.secrets], authExpectation(auth, expectedListing(query.raw)));
          outcomes.add(answer);
          if (answer.status === 200) {
            const pets = JSON.parse(answer.text) as StoredPet[];
            const parameters = new URLSearchParams(query.raw ?? '');
            expect(pets.length).toBeLessThanOrEqual(Number(parameters.get('limit') ?? 20));
            const status = parameters.get('status');
            if (status !== null) expect(pets.every((pet) => pet.status === status)).toBe(true);
          }
        }),
        fuzzParameters(1),
      );
      outcomes.expectReached(['200', '400 validation_failed', '400 invalid_cursor', '401 unauthorized']);
    },
    PROPERTY_TIMEOUT_MS,
  );
});

// ---------------------------------------------------------------------------------------------
// createPet

/** The control characters docs/api.md names: C0 (tab and newline included), DEL and C1. */
const isControl = (character: string) => {
  const code = character.codePointAt(0) ?? 0;
  return code <= 0x1f || (code >= 0x7f && code <= 0x9f);
};
/** Well-formed Unicode: encodeURIComponent refuses exactly the strings with a lone surrogate. */
const isWellFormed = (text: string) => {
  try {
    encodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
};

/** The rules for a NewPet in docs/api.md, written out (not zod's): the pet to store, or undefined when refused. */
const validNewPet = (value: unknown): StoredPet | undefined => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const body = value as Record<string, unknown>;
  if (Object.keys(body).some((key) => !['name', 'categoryId', 'status'].includes(key))) return undefined;
  const { name, categoryId, status = 'available' } = body;
  if (typeof name !== 'string' || [...name].length < 1 || [...name].length > 256 || name.trim() === '') return undefined;
  if ([...name].some(isControl) || !isWellFormed(name)) return undefined;
  if (typeof categoryId !== 'number' || !Number.isInteger(categoryId) || categoryId < 1 || categoryId > MAX_SAFE_ID) return undefined;
  if (typeof status !== 'string' || !(STATUSES as readonly string[]).includes(status)) return undefined;
  return { id: 0, name, categoryId, status };
};

const parsedOrUndefined = (text: string): { value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
};

/**
 * Whether valid JSON text names a member twice in one object (I-JSON, RFC 7493 forbids it),
 * names compared after unescaping: a recursive-descent reading of RFC 8259's grammar.
 */
const repeatsMemberName = (text: string): boolean => {
  let at = 0;
  const token = (pattern: RegExp) => {
    const sticky = new RegExp(pattern.source, 'y');
    sticky.lastIndex = at;
    const match = sticky.exec(text)?.[0] ?? '';
    at += match.length;
    return match;
  };
  const space = () => token(/[ \t\n\r]*/);
  const string = () => JSON.parse(token(/"(?:[^"\\]|\\.)*"/)) as string;
  const value = (): boolean => {
    space();
    const opening = text[at];
    if (opening === '"') {
      string();
      return false;
    }
    if (opening !== '{' && opening !== '[') {
      token(/[^,\]}\s]+/); // a number, true, false or null
      return false;
    }
    at += 1;
    const names = new Set<string>();
    let repeated = false;
    space();
    while (text[at] !== '}' && text[at] !== ']') {
      if (opening === '{') {
        space();
        const name = string();
        repeated ||= names.has(name);
        names.add(name);
        space();
        at += 1; // the colon
      }
      repeated = value() || repeated;
      space();
      if (text[at] === ',') at += 1;
      space();
    }
    at += 1;
    return repeated;
  };
  return value();
};

/** What docs/api.md says POST /pets answers, given a key that authenticates. */
const expectedCreate = (bytes: Buffer, validUtf8: boolean, json: boolean | undefined): Expected => {
  if (bytes.length > MAX_BODY_BYTES) return { status: 413, code: 'payload_too_large' };
  if (json === undefined) return undefined;
  if (!json) return { status: 400, code: 'unsupported_media_type' };
  if (!validUtf8) return { status: 400, code: 'invalid_json' };
  const text = bytes.toString('utf8');
  const parsed = parsedOrUndefined(text);
  if (!parsed || repeatsMemberName(text)) return { status: 400, code: 'invalid_json' };
  return validNewPet(parsed.value) ? { status: 201 } : { status: 400, code: 'validation_failed' };
};

describe('createPet (POST /v1/pets) under hostile input', () => {
  it(
    'answers every body, Content-Type and Authorization safely; valid pets are stored as sent',
    async () => {
      const outcomes = tally();
      await fc.assert(
        fc.asyncProperty(
          bodyBytes(bodyText),
          contentTypeCase,
          authCase(keys),
          fc.boolean(),
          async ({ bytes, validUtf8 }, contentType, auth, sendBody) => {
            const body = sendBody || bytes.length > 0 ? bytes : undefined;
            const headers = { ...(contentType.value === undefined ? {} : { [contentType.name]: contentType.value }), ...auth.headers };
            const raw = { method: 'POST', target: withQuery('/v1/pets', undefined, auth), headers, body };
            const answer = await sendAndCheck(raw, auth.secrets, authExpectation(auth, expectedCreate(bytes, validUtf8, contentType.json)));
            outcomes.add(answer);
            if (answer.status !== 201) return;
            const pet = JSON.parse(answer.text) as StoredPet;
            expect(validUtf8).toBe(true);
            const sent = validNewPet((parsedOrUndefined(bytes.toString('utf8')) as { value: unknown }).value);
            expect(pet).toEqual({ ...sent, id: pet.id });
            const readBack = await sendAndCheck(
              { method: 'GET', target: `/v1/pets/${pet.id}`, headers: { Authorization: `Bearer ${api.key}` } },
              [api.key],
              { status: 200 },
            );
            expect(JSON.parse(readBack.text)).toEqual(pet);
            stored.set(pet.id, pet);
          },
        ),
        fuzzParameters(2),
      );
      outcomes.expectReached([
        '201',
        '400 validation_failed',
        '400 invalid_json',
        '400 unsupported_media_type',
        '401 unauthorized',
        '413 payload_too_large',
      ]);
      outcomes.expectReached(['201'], 0.1);
    },
    PROPERTY_TIMEOUT_MS,
  );
});

// ---------------------------------------------------------------------------------------------
// getPet

/** What docs/api.md says GET /pets/{petId} answers for this target, or undefined when it is not that route. */
const expectedGet = (target: string): Expected => {
  const { pathname, searchParams } = new URL(`http://localhost${target}`);
  const segment = /^\/v1\/pets\/([^/]+)$/.exec(pathname)?.[1];
  // A backslash or a dot segment names no route, even in place of a petId (expectSafeAnswer checks its 404).
  if (segment === undefined || /\\|%5c/i.test(segment) || /^(?:\.|%2e){1,2}$/i.test(segment)) return undefined;
  let petId = segment;
  try {
    petId = decodeURIComponent(segment);
  } catch {
    // API Gateway passes a segment it cannot decode as it is; it is not a decimal id either way.
  }
  if (!/^[1-9][0-9]*$/.test(petId) || Number(petId) > MAX_SAFE_ID) return { status: 400, code: 'validation_failed' };
  if ([...searchParams].length > 0) return { status: 400, code: 'validation_failed' }; // it takes no query parameter
  return stored.has(Number(petId)) ? { status: 200 } : { status: 404, code: 'not_found' };
};

describe('getPet (GET /v1/pets/{petId}) under hostile input', () => {
  it(
    'answers every petId and Authorization safely, and as docs/api.md decides',
    async () => {
      const outcomes = tally();
      // Mostly no query; sometimes one, which getPet refuses whatever it holds.
      const noQuery: QueryCase = { raw: undefined, secrets: [] };
      const someQuery = fc.oneof({ weight: 4, arbitrary: fc.constant(noQuery) }, listQuery([...cursors.keys()]));
      await fc.assert(
        fc.asyncProperty(petIdSegment([...stored.keys()]), someQuery, authCase(keys), extraHeaders, async (segment, query, auth, extra) => {
          const target = withQuery(`/v1/pets/${segment}`, query.raw, auth);
          const expected = expectedGet(target);
          const answer = await sendAndCheck(
            { method: 'GET', target, headers: { ...extra, ...auth.headers } },
            [...auth.secrets, ...query.secrets],
            authExpectation(auth, expected, expected !== undefined),
          );
          outcomes.add(answer);
          if (answer.status === 200) expect(JSON.parse(answer.text)).toEqual(stored.get((JSON.parse(answer.text) as StoredPet).id));
        }),
        fuzzParameters(3),
      );
      outcomes.expectReached(['200', '400 validation_failed', '404 not_found', '401 unauthorized']);
    },
    PROPERTY_TIMEOUT_MS,
  );
});

// ---------------------------------------------------------------------------------------------
// GET /v1/store/orders, odd paths and odd methods

describe('listStoreOrders (GET /v1/store/orders) under hostile input', () => {
  it(
    'answers 501 to every caller with a key and 401 to the others, whatever the query and headers',
    async () => {
      const outcomes = tally();
      await fc.assert(
        fc.asyncProperty(listQuery([...cursors.keys()]), authCase(keys), extraHeaders, async (query, auth, extra) => {
          const raw = { method: 'GET', target: withQuery('/v1/store/orders', query.raw, auth), headers: { ...extra, ...auth.headers } };
          outcomes.add(
            await sendAndCheck(raw, [...auth.secrets, ...query.secrets], authExpectation(auth, { status: 501, code: 'not_implemented' })),
          );
        }),
        fuzzParameters(4),
      );
      outcomes.expectReached(['501 not_implemented', '401 unauthorized']);
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('odd paths and methods', () => {
  it(
    'answers every method and request target safely (404 not_found where there is no route)',
    async () => {
      const outcomes = tally();
      await fc.assert(
        fc.asyncProperty(anyMethod, oddTarget, authCase(keys), fc.option(bodyText, { freq: 4 }), async (method, target, auth, body) => {
          const headers = { ...auth.headers, ...(body === null ? {} : { 'Content-Type': 'application/json' }) };
          outcomes.add(await sendAndCheck({ method, target, headers, ...(body === null ? {} : { body }) }, auth.secrets, undefined));
        }),
        fuzzParameters(5),
      );
      outcomes.expectReached(['404 not_found', '400 validation_failed']);
    },
    PROPERTY_TIMEOUT_MS,
  );
});

// ---------------------------------------------------------------------------------------------
// The body limit, to the byte

describe(`the ${MAX_BODY_BYTES}-byte body limit over HTTP`, () => {
  const post = (body: string, contentType = 'application/json') =>
    sendAndCheck(
      { method: 'POST', target: '/v1/pets', headers: { Authorization: `Bearer ${api.key}`, 'Content-Type': contentType }, body },
      [api.key],
      undefined,
    );
  /** A valid pet, padded with JSON white space to exactly `bytes` bytes. */
  const paddedPet = (bytes: number) => {
    const pet = JSON.stringify({ name: 'Padded', categoryId: 1 });
    return `${pet}${' '.repeat(bytes - pet.length)}`;
  };
  /** A body with an unknown field padded so the whole body is exactly `bytes` bytes, ending in a 2-byte character. */
  const paddedUnknownField = (bytes: number) => {
    const prefix = '{"name":"Rex","categoryId":1,"pad":"';
    const suffix = 'é"}';
    return `${prefix}${'x'.repeat(bytes - prefix.length - Buffer.byteLength(suffix))}${suffix}`;
  };

  it(`stores a pet whose body is exactly ${MAX_BODY_BYTES} bytes, and refuses ${MAX_BODY_BYTES + 1} bytes with 413`, async () => {
    expect(Buffer.byteLength(paddedPet(MAX_BODY_BYTES))).toBe(MAX_BODY_BYTES);
    expect((await post(paddedPet(MAX_BODY_BYTES))).status).toBe(201);
    const refused = await post(paddedPet(MAX_BODY_BYTES + 1));
    expect({ status: refused.status, code: errorCodeOf(refused) }).toEqual({ status: 413, code: 'payload_too_large' });
  });

  it('counts bytes, not characters', async () => {
    const atLimit = paddedUnknownField(MAX_BODY_BYTES);
    const overLimit = paddedUnknownField(MAX_BODY_BYTES + 1);
    expect([Buffer.byteLength(atLimit), atLimit.length]).toEqual([MAX_BODY_BYTES, MAX_BODY_BYTES - 1]);
    expect([Buffer.byteLength(overLimit), overLimit.length]).toEqual([MAX_BODY_BYTES + 1, MAX_BODY_BYTES]);
    // At the limit the body reaches validation (its unknown field is refused); one byte more, it does not.
    const validated = await post(atLimit);
    expect({ status: validated.status, code: errorCodeOf(validated) }).toEqual({ status: 400, code: 'validation_failed' });
    expect(JSON.parse(validated.text).message).toContain("'pad'");
    const refused = await post(overLimit);
    expect({ status: refused.status, code: errorCodeOf(refused) }).toEqual({ status: 413, code: 'payload_too_large' });
  });

  it('checks the size before the Content-Type and the JSON', async () => {
    for (const answer of [await post(paddedPet(MAX_BODY_BYTES + 1), 'text/plain'), await post(`{${' '.repeat(MAX_BODY_BYTES)}`)]) {
      expect({ status: answer.status, code: errorCodeOf(answer) }).toEqual({ status: 413, code: 'payload_too_large' });
    }
  });
});
