/**
 * fast-check arbitraries for hostile input: JSON that is almost a pet, odd numbers and strings,
 * query strings, path segments, Authorization headers, Content-Types and secret-looking tokens.
 * Each generator that the tests judge by an oracle carries what it meant (e.g. whether a
 * Content-Type is a JSON one); the oracles themselves follow docs/api.md, not the code under test.
 */
import fc from 'fast-check';
import { PetStatus } from '../../shared/models';

/** Runs per property; at least 1,000 requests per operation. FUZZ_RUNS raises it for a longer hunt. */
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 1_000);
/**
 * A fixed seed, so a run is reproducible; fast-check prints the seed and the counterexample's
 * path on failure. FUZZ_SEED replays a reported seed or explores another one.
 */
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
export const fuzzParameters = <T>(offset: number): fc.Parameters<T> => ({
  seed: FUZZ_SEED + offset,
  numRuns: FUZZ_RUNS,
  // No time limit: an interrupted run would pass with fewer requests than promised. Vitest's
  // timeout bounds a property, shrinking included.
});

// ---------------------------------------------------------------------------------------------
// Strings

/** Characters that break naive code: NUL, lone surrogates, RTL and zero-width marks, combining marks, emoji, BOM. */
const ODD_CHARACTERS = [
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\ud800',
  '\udfff',
  '\udc00\ud800',
  '\u200f',
  '\u202e',
  '\u2066',
  '\u200b',
  '\u200d',
  '\u0301',
  'e\u0301',
  '\u0338',
  '😀',
  '👨‍👩‍👧',
  '🇫🇷',
  '\ufeff',
  '\ufffd',
  '\uffff',
  '\u{10ffff}',
  '\u2028',
  '\u2029',
  '\u00a0',
  '\u3000',
  '\u0085',
  'İ',
  'ß',
  'ﬀ',
  '\\',
  '"',
  "'",
  '<',
  '>',
  '&',
  '%',
  '%00',
  '${',
  '{{',
  '\t',
  '\n',
  '\r',
] as const;

const oddCharacter = fc.constantFrom(...ODD_CHARACTERS);

/** Any string: ordinary text, any code unit (lone surrogates included), or odd characters mixed in. */
export const oddString = (maxLength = 40) =>
  fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'binary', maxLength }),
    fc.string({ unit: 'grapheme', maxLength }),
    fc.string({ unit: fc.oneof(oddCharacter, fc.string({ minLength: 1, maxLength: 1 })), maxLength }),
  );

/** A long string: a few over the 256-character name limit, some over the 16 KiB body limit. */
const hugeString = fc
  .tuple(fc.constantFrom(257, 1_000, 4_000, 17_000, 70_000), fc.constantFrom('x', 'é', '😀', '\u0000', 'e\u0301'))
  .map(([count, unit]) => unit.repeat(count));

/** Secret-looking tokens: API-key-shaped strings a client might send by mistake anywhere. */
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.split('');
const secretToken = fc.string({ unit: fc.constantFrom(...BASE64URL), minLength: 43, maxLength: 43 }).map((random) => `petstore_${random}`);

// ---------------------------------------------------------------------------------------------
// JSON, as text: numbers are written as sent, so -0, exponents and digits beyond 2^53 survive.

const NUMBER_TEXTS = [
  '0',
  '-0',
  '0.0',
  '-0.0',
  '1',
  '1.0',
  '1e0',
  '1E0',
  '1e+0',
  '10e-1',
  '1.5',
  '-1',
  '2',
  '100',
  '101',
  '1e3',
  '1E3',
  '9007199254740991',
  '9007199254740991.0',
  '9007199254740991.4',
  '9007199254740992',
  '9007199254740993',
  '18014398509481984',
  '-9007199254740991',
  '1e16',
  '1e308',
  '1e309',
  '-1e309',
  '5e-324',
  '1e-7',
  '0.1',
  '123456789012345678901234567890',
  '0.000000000000000000001',
  '4.9e-324',
  // Not JSON numbers at all: the body is then not JSON.
  '01',
  '+1',
  '.5',
  '1.',
  'NaN',
  'Infinity',
  '-Infinity',
  '0x10',
  '1_000',
  '١',
] as const;

const numberText = fc.oneof(
  fc.constantFrom(...NUMBER_TEXTS),
  fc.integer().map(String),
  fc.maxSafeInteger().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
);

/** `\uXXXX`: the first UTF-16 code unit of `unit` as a JSON escape. */
const unicodeEscape = (unit: string) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** A JSON string literal; `\u` escapes let it carry lone surrogates and NUL through valid UTF-8. */
const stringText = (value: fc.Arbitrary<string>) =>
  fc
    .tuple(value, fc.boolean())
    .map(([text, escapeAll]) =>
      escapeAll ? `"${[...text].map((char) => [...char].map(unicodeEscape).join('')).join('')}"` : JSON.stringify(text),
    );

/** Any JSON value as text, nested junk included. */
const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText,
    stringText(oddString()),
    fc.constantFrom('true', 'false', 'null', '{}', '[]'),
    fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
    fc
      .array(fc.tuple(stringText(oddString(8)), tie('value')), { maxLength: 4 })
      .map((entries) => `{${entries.map(([key, value]) => `${key}:${value}`).join(',')}}`),
  ),
})).value;

// ---------------------------------------------------------------------------------------------
// POST /pets bodies

const STATUSES = ['available', 'pending', 'sold'] as const;

/** A name as a client might send it: plausible, blank, odd, at and over the limit, or not a string. */
const nameText = fc.oneof(
  {
    weight: 4,
    arbitrary: stringText(
      fc.oneof(fc.string({ minLength: 1, maxLength: 30 }), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 })),
    ),
  },
  { weight: 3, arbitrary: stringText(oddString()) },
  {
    weight: 2,
    arbitrary: stringText(
      fc.constantFrom(
        '',
        ' ',
        '\t\n',
        '\u00a0',
        '\ufeff',
        '\u3000',
        'x'.repeat(256),
        'x'.repeat(257),
        '😀'.repeat(256),
        '😀'.repeat(257),
        'e\u0301'.repeat(128),
        'e\u0301'.repeat(129),
        '\u0000',
        'Rex\u0000',
        '\u202eRex',
      ),
    ),
  },
  { weight: 1, arbitrary: stringText(hugeString) },
  { weight: 2, arbitrary: jsonText },
);

const categoryIdText = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 1_000 }).map(String) },
  { weight: 5, arbitrary: numberText },
  { weight: 2, arbitrary: jsonText },
);

const statusText = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...STATUSES).map((status) => JSON.stringify(status)) },
  {
    weight: 2,
    arbitrary: stringText(fc.constantFrom('Available', 'SOLD', 'available ', ' sold', 'lost', '', 'pending\u0000', 'sold\u200b')),
  },
  { weight: 2, arbitrary: jsonText },
);

const field = (name: string, value: fc.Arbitrary<string>) => value.map((text) => [JSON.stringify(name), text] as const);

/** A body that is a JSON object with the pet's fields (each maybe missing, wrong or odd) and maybe others. */
const petObjectText = fc
  .tuple(
    fc.option(field('name', nameText), { freq: 6 }),
    fc.option(field('categoryId', categoryIdText), { freq: 6 }),
    fc.option(field('status', statusText), { freq: 2 }),
    fc.array(
      fc.oneof(
        fc.tuple(
          stringText(fc.oneof(oddString(12), fc.constantFrom('id', 'Name', '__proto__', 'constructor', 'name ', 'categoryid', ''))),
          jsonText,
        ),
        fc.tuple(stringText(secretToken), jsonText),
        // A repeated field: I-JSON forbids it (JSON.parse would keep the last).
        fc.tuple(fc.constantFrom('"name"', '"categoryId"', '"status"'), jsonText),
      ),
      { maxLength: 2 },
    ),
    fc.boolean(),
    fc.constantFrom('', ' ', '\n', '\t', '\r\n'),
  )
  .chain(([name, categoryId, status, extra, shuffle, space]) => {
    const entries = [name, categoryId, status, ...extra].filter((entry) => entry !== null) as Array<readonly [string, string]>;
    const ordered = shuffle ? fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length }) : fc.constant(entries);
    return ordered.map((list) => `${space}{${list.map(([key, value]) => `${key}${space}:${space}${value}`).join(`,${space}`)}}${space}`);
  });

/** Text that is almost JSON, or a JSON value that is not an object, or text with bytes around it. */
const brokenBodyText = fc.oneof(
  jsonText,
  petObjectText.map((text) => text.slice(0, Math.max(0, text.length - 1))),
  petObjectText.map((text) => `\ufeff${text}`),
  petObjectText.map((text) => `${text},`),
  petObjectText.map((text) => `${text}${text}`),
  petObjectText.map((text) => text.replace(/"/g, "'")),
  fc.constantFrom(
    '',
    ' ',
    'null',
    'name=Rex&categoryId=1',
    '{"name":"Rex","categoryId":1,}',
    "{name:'Rex',categoryId:1}",
    '{"name":"Rex" "categoryId":1}',
    '\u0000',
  ),
  oddString(60),
);

/** A pet docs/api.md accepts, written in odd but valid ways: unicode names, exponents, white space, any field order. */
const plausiblePetText = fc
  .tuple(
    stringText(
      fc.oneof(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
        fc.constantFrom(
          'Rex',
          'x'.repeat(256),
          '😀'.repeat(256),
          'e\u0301'.repeat(128),
          'Rex\u00a0',
          '\u202eRex',
          '\ufeffRex',
          ' Rex ',
          '👨‍👩‍👧',
          '\u2028',
          'ﬀ',
          '\\"<>&',
        ),
      ),
    ),
    fc.oneof(
      fc.integer({ min: 1, max: 1_000 }).map(String),
      fc.maxSafeNat().map((id) => String(id + 1 > Number.MAX_SAFE_INTEGER ? id : id + 1)),
      fc.constantFrom('1', '1.0', '1e0', '1E2', '10e-1', '9007199254740991'),
    ),
    fc.option(fc.constantFrom('"available"', '"pending"', '"sold"')),
    fc.constantFrom('', ' ', '\n\t'),
  )
  .map(
    ([name, categoryId, status, space]) =>
      `{${space}"name":${space}${name},"categoryId":${categoryId}${status === null ? '' : `,${space}"status":${status}`}${space}}`,
  );

export const bodyText = fc.oneof(
  { weight: 5, arbitrary: plausiblePetText },
  { weight: 5, arbitrary: petObjectText },
  { weight: 3, arbitrary: brokenBodyText },
);

/** Bytes that are not UTF-8: stray continuation bytes, overlong forms, encoded surrogates, truncated sequences. */
const INVALID_UTF8 = [
  [0xff],
  [0xfe],
  [0x80],
  [0xc0, 0x80],
  [0xc1, 0xbf],
  [0xed, 0xa0, 0x80],
  [0xe2, 0x82],
  [0xf0, 0x9f, 0x98],
  [0xf5, 0x80, 0x80, 0x80],
];

/** The body's bytes: its UTF-8 encoding, sometimes with invalid bytes spliced in. */
export const bodyBytes = (text: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 9, arbitrary: text.map((body) => ({ bytes: Buffer.from(body, 'utf8'), validUtf8: true })) },
    {
      weight: 1,
      arbitrary: fc.tuple(text, fc.nat(), fc.constantFrom(...INVALID_UTF8)).map(([body, at, bad]) => {
        const bytes = Buffer.from(body, 'utf8');
        const index = bytes.length === 0 ? 0 : at % bytes.length;
        return { bytes: Buffer.concat([bytes.subarray(0, index), Buffer.from(bad), bytes.subarray(index)]), validUtf8: false };
      }),
    },
  );

// ---------------------------------------------------------------------------------------------
// Headers

/** Header text Node lets a client send: visible ASCII, tabs and spaces, and Latin-1 bytes. */
export const headerValue = fc.string({
  unit: fc.oneof(
    fc.constantFrom('\t', ' ', ';', ',', '=', '"', '\u00ff', '\u0080', 'é'),
    fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
  ),
  maxLength: 60,
});

/** A Content-Type and whether docs/api.md calls it JSON (undefined: the tests do not judge it). */
export interface ContentTypeCase {
  readonly name: string;
  readonly value: string | undefined;
  readonly json: boolean | undefined;
}

const JSON_MEDIA_TYPES = [
  'application/json',
  'Application/JSON',
  'APPLICATION/JSON',
  'application/json; charset=utf-8',
  'application/json;charset=UTF-8',
  'application/json ; charset=utf-8',
  'application/json;',
  'application/json; charset="utf-8"',
  'application/json; charset=utf8',
  'application/merge-patch+json',
  'application/vnd.petstore+json',
  'application/problem+json',
];
const OTHER_MEDIA_TYPES = [
  '',
  'text/plain',
  'text/json',
  'json',
  'application/',
  'application/jsonx',
  'application/json-seq',
  'application/x-json',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  '*/*',
  'application/*',
  'application/json, text/plain',
  'application/+json',
  'text/plain; charset=application/json',
  // JSON types, but with a charset other than UTF-8: the body is refused rather than misread.
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
];

export const contentTypeCase: fc.Arbitrary<ContentTypeCase> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<ContentTypeCase>({ name: 'Content-Type', value: 'application/json', json: true }) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom('Content-Type', 'content-type', 'CONTENT-TYPE', 'cOnTeNt-TyPe'), fc.constantFrom(...JSON_MEDIA_TYPES))
      .map(([name, value]) => ({ name, value, json: true })),
  },
  { weight: 2, arbitrary: fc.constantFrom(...OTHER_MEDIA_TYPES).map((value) => ({ name: 'Content-Type', value, json: false })) },
  { weight: 1, arbitrary: fc.constant<ContentTypeCase>({ name: 'Content-Type', value: undefined, json: false }) },
  // Arbitrary header text: judged only by the properties every answer has.
  { weight: 1, arbitrary: headerValue.map((value) => ({ name: 'Content-Type', value, json: undefined })) },
);

/** An Authorization setup and whether docs/api.md says it authenticates (undefined: not judged). */
export interface AuthCase {
  readonly label: string;
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  /** Query parameters the case adds (a key sent in the query string). */
  readonly query: ReadonlyArray<readonly [string, string]>;
  readonly valid: boolean | undefined;
  /** Secret-looking tokens the case sends: none may come back. */
  readonly secrets: readonly string[];
}

export interface Keys {
  /** The registered, active key. */
  readonly valid: string;
  /** A key that was registered, then revoked. */
  readonly revoked: string;
}

const changeOneCharacter = (key: string, at: number, to: string) => {
  const index = 'petstore_'.length + (at % (key.length - 'petstore_'.length));
  const replacement = key[index] === to ? (to === 'A' ? 'B' : 'A') : to;
  return `${key.slice(0, index)}${replacement}${key.slice(index + 1)}`;
};

/** Authorization headers: valid ones in every legal spelling, and every malformed, foreign, revoked or unknown one. */
export const authCase = ({ valid: key, revoked }: Keys): fc.Arbitrary<AuthCase> => {
  const header = (label: string, value: string, valid: boolean | undefined, name = 'Authorization', secrets: string[] = []): AuthCase => ({
    label,
    headers: { [name]: value },
    query: [],
    valid,
    secrets: [key, key.slice('petstore_'.length), ...secrets],
  });
  const goodCases = fc.oneof(
    fc.constant(header('the key', `Bearer ${key}`, true)),
    fc.constantFrom('bearer', 'BEARER', 'bEaReR').map((scheme) => header('scheme case', `${scheme} ${key}`, true)),
    fc.integer({ min: 2, max: 5 }).map((spaces) => header('spaces after the scheme', `Bearer${' '.repeat(spaces)}${key}`, true)),
    fc
      .constantFrom('authorization', 'AUTHORIZATION', 'aUtHoRiZaTiOn')
      .map((name) => header('header name case', `Bearer ${key}`, true, name)),
  );
  const badCases = fc.oneof(
    fc.constant<AuthCase>({ label: 'no header', headers: {}, query: [], valid: false, secrets: [key, key.slice('petstore_'.length)] }),
    fc
      .constantFrom('', 'Bearer', 'Bearer ', 'Bearer petstore_', 'Bearer null', 'Bearer undefined', 'Basic', 'Bearer =')
      .map((value) => header('malformed', value, false)),
    fc
      .constantFrom(
        (k: string) => `Basic ${k}`,
        (k: string) => `Basic ${Buffer.from(`user:${k}`).toString('base64')}`,
        (k: string) => `Token ${k}`,
        (k: string) => `ApiKey ${k}`,
        (k: string) => `Digest username="${k}"`,
        (k: string) => k,
        (k: string) => `Bearer\t${k}`,
        (k: string) => `Bearer:${k}`,
        (k: string) => `Bearer: ${k}`,
        (k: string) => `Bearer${k}`,
        (k: string) => `Bearer ${k} ${k}`,
        (k: string) => `Bearer ${k},`,
        (k: string) => `Bearer ${k}=`,
        (k: string) => `Bearer "${k}"`,
        (k: string) => `Bearer <${k}>`,
        (k: string) => `Bearer ${k.toUpperCase()}`,
        (k: string) => `Bearer ${k.slice(0, -1)}`,
        (k: string) => `Bearer ${k}x`,
        (k: string) => `Bearer ${k.slice('petstore_'.length)}`,
        (k: string) => `Bearer\u00a0${k}`,
        (k: string) => `Bearer ${k}\u00e9`,
        (k: string) => `Bearer, Bearer ${k}`,
      )
      .map((write) => header('foreign scheme or malformed', write(key), false)),
    fc.constant(header('a revoked key', `Bearer ${revoked}`, false, 'Authorization', [revoked])),
    secretToken.map((token) => header('an unknown key', `Bearer ${token}`, false, 'Authorization', [token])),
    fc.tuple(fc.nat(), fc.constantFrom(...BASE64URL)).map(([at, to]) => {
      const changed = changeOneCharacter(key, at, to);
      return header('the key with a character changed', `Bearer ${changed}`, false, 'Authorization', [changed]);
    }),
    fc.constantFrom('api_key', 'key', 'access_token', 'token', 'Authorization', 'authorization').map((name): AuthCase => ({
      label: 'the key in the query string',
      headers: {},
      query: [[name, key]],
      valid: false,
      secrets: [key, key.slice('petstore_'.length)],
    })),
    fc
      .constantFrom<Array<[string, string]>>(
        [key, ''],
        [key, 'Bearer'],
        ['X-Api-Key', key],
        ['Api-Key', `Bearer ${key}`],
        ['Cookie', `api_key=${key}`],
        ['Proxy-Authorization', `Bearer ${key}`],
      )
      .map(([name, value]) => header('the key in another header', value, false, name)),
  );
  const unjudged = fc.oneof(
    // Node drops leading and trailing white space of header values (RFC 9110 OWS); API Gateway's own handling is not documented.
    fc
      .constantFrom(`  Bearer ${key}`, `Bearer ${key} `, `Bearer ${key}\t`)
      .map((value) => header('white space around the value', value, undefined)),
    fc
      .constantFrom<readonly string[]>([`Bearer ${key}`, 'Basic x'], ['Basic x', `Bearer ${key}`], [`Bearer ${key}`, `Bearer ${key}`])
      .map((values): AuthCase => ({
        label: 'two Authorization headers',
        headers: { Authorization: values },
        query: [],
        valid: undefined,
        secrets: [key, key.slice('petstore_'.length)],
      })),
    headerValue.map((value) => header('random text', value, undefined)),
    headerValue.map((value) => header('Bearer and random text', `Bearer ${value}`, undefined)),
  );
  return fc.oneof({ weight: 6, arbitrary: goodCases }, { weight: 4, arbitrary: badCases }, { weight: 1, arbitrary: unjudged });
};

// ---------------------------------------------------------------------------------------------
// URLs

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Percent-encodes every byte of the UTF-8 form that is not unreserved (a lone surrogate becomes U+FFFD). */
export const percentEncode = (text: string, keep: RegExp = UNRESERVED) =>
  [...Buffer.from(text, 'utf8')]
    .map((byte) =>
      byte < 0x80 && keep.test(String.fromCharCode(byte))
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

/** Text as it might appear in a URL: encoded properly, or raw with '+' for spaces, or with broken percent-escapes. */
const urlText = (text: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 6, arbitrary: text.map((value) => percentEncode(value)) },
    { weight: 1, arbitrary: text.map((value) => percentEncode(value, /[A-Za-z0-9\-._~!$'()*,;:@/]/).replace(/%20/g, '+')) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(text, fc.constantFrom('%', '%z', '%zz', '%C3', '%E2%82', '%ED%A0%80', '%FF', '%00', '%25', '%2', '\u00e9', '\u00ff'))
        .map(([value, broken]) => `${percentEncode(value)}${broken}`),
    },
  );

const LIMIT_TEXTS = [
  '1',
  '2',
  '20',
  '99',
  '100',
  '0',
  '101',
  '-1',
  '+1',
  '1.5',
  '1.0',
  '1e2',
  '01',
  '007',
  'abc',
  '',
  ' 5',
  '5 ',
  '\uff15',
  '\u0661',
  '9007199254740993',
  '100000000000000000000',
  'null',
  'undefined',
  'NaN',
  '0x10',
  '10,20',
];
const STATUS_TEXTS = [
  'available',
  'pending',
  'sold',
  'Available',
  'SOLD',
  '',
  'sold,pending',
  'available ',
  'unknown',
  'null',
  'sold\u0000',
];

/** One query parameter as decoded text, before encoding. */
const queryParameter = (cursors: readonly string[]) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.tuple(fc.constant('limit'), fc.oneof(fc.constantFrom(...LIMIT_TEXTS), numberText, oddString(6))) },
    {
      weight: 4,
      arbitrary: fc.tuple(fc.constant('status'), fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...STATUS_TEXTS) }, oddString(10))),
    },
    {
      weight: 3,
      arbitrary: fc.tuple(
        fc.constant('cursor'),
        fc.oneof(
          fc.constantFrom(...cursors),
          fc
            .tuple(fc.constantFrom(...cursors), fc.nat(), fc.constantFrom('A', 'z', '0', '.', '-', '_', '='))
            .map(([cursor, at, to]) => `${cursor.slice(0, at % cursor.length)}${to}${cursor.slice((at % cursor.length) + 1)}`),
          fc.tuple(fc.constantFrom(...cursors), fc.nat()).map(([cursor, at]) => cursor.slice(0, at % cursor.length)),
          fc.constantFrom('', '.', 'a.b', 'e30.e30', 'x'.repeat(600), 'null'),
          oddString(30),
          secretToken,
        ),
      ),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(
        fc.oneof(
          fc.constantFrom('LIMIT', 'Status', 'limit ', 'limit[]', 'status[0]', 'api_key', '__proto__', 'constructor', 'page', 'offset', ''),
          oddString(10),
          secretToken,
        ),
        fc.oneof(fc.constantFrom('1', '', 'available'), oddString(10)),
      ),
    },
  );

export interface QueryCase {
  /** Raw query text after '?', or undefined for no '?'. */
  readonly raw: string | undefined;
  readonly secrets: readonly string[];
}

/** A query string for GET /pets: known and unknown parameters, repeats, odd values and encodings. */
export const listQuery = (cursors: readonly string[]) =>
  fc
    .tuple(
      fc.array(queryParameter(cursors), { maxLength: 4 }),
      fc.boolean(),
      fc.constantFrom('', '&', '&&'),
      fc.oneof({ weight: 5, arbitrary: fc.constant('=') }, fc.constant('')),
    )
    .chain(([parameters, repeatOne, trailing, equals]) => {
      const list = repeatOne && parameters.length > 0 ? [...parameters, parameters[0] as [string, string]] : parameters;
      if (list.length === 0)
        return fc.constantFrom<QueryCase>({ raw: undefined, secrets: [] }, { raw: '', secrets: [] }, { raw: trailing, secrets: [] });
      return fc
        .tuple(...list.map(([name, value]) => fc.tuple(urlText(fc.constant(name)), urlText(fc.constant(value)))))
        .map((encoded): QueryCase => ({
          raw:
            encoded.map(([name, value], index) => (equals === '' && index === 0 && value === '' ? name : `${name}=${value}`)).join('&') +
            trailing,
          secrets: list.flatMap(([name, value]) => [name, value]).filter((text) => text.startsWith('petstore_') && text.length > 20),
        }));
    });

/** A `{petId}` segment: ids in range and beyond 2^53, and every other kind of text, encoded in several ways. */
export const petIdSegment = (knownIds: readonly number[]) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...knownIds.map(String)) },
    { weight: 2, arbitrary: fc.maxSafeNat().map((id) => String(id)) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        ...NUMBER_TEXTS.map((text) => percentEncode(text, /[\x21-\x7e]/)),
        '9007199254740991',
        '9007199254740992',
        '00',
        '1%20',
        '%201',
        '%31',
        '%2B1',
        '1%00',
        '%EF%BC%91',
        '1;x',
        '1,2',
        '%D9%A1',
      ),
    },
    { weight: 3, arbitrary: urlText(oddString(20)) },
    { weight: 1, arbitrary: urlText(secretToken) },
    { weight: 1, arbitrary: fc.constantFrom('x'.repeat(5_000), '9'.repeat(400), '1'.repeat(17)) },
  );

/** Any HTTP method: the API's, others Node parses, lower case, and tokens it does not know. */
export const anyMethod = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('GET', 'POST') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'PUT',
      'DELETE',
      'PATCH',
      'HEAD',
      'OPTIONS',
      'TRACE',
      'PROPFIND',
      'PURGE',
      'QUERY',
      'LINK',
      'MKCOL',
      'SEARCH',
      'M-SEARCH',
    ),
  },
  // (node:http upper-cases a method before sending it, so lower-case ones cannot be sent this way.)
  { weight: 1, arbitrary: fc.constantFrom('FOO', 'BREW', 'GETS', 'G', 'POST1', 'GET_', 'PROPFIND2') },
);

const PATH_SEGMENTS = [
  'v1',
  'V1',
  'v2',
  'v1.0',
  'pets',
  'Pets',
  'PETS',
  'pet',
  'store',
  'orders',
  'Orders',
  'docs',
  '.',
  '..',
  '',
  '%2e',
  '%2E%2E',
  '.%2e',
  '%2F',
  'pets%2F1',
  '%2Fpets',
  '%5C',
  '\\',
  '%',
  '%zz',
  '%C3',
  '%00',
  '%FF',
  'pets;x',
  'pets.json',
  'pets%20',
  '1',
  '9007199254740992',
  '%F0%9F%98%80',
  '%E2%80%AE',
  '%EF%BB%BF',
  '\u00e9',
  '*',
  '~',
  '@',
  ':',
  'x'.repeat(3_000),
];

/** Odd request targets: encoded slashes, dot segments, double slashes, very long, broken escapes, unicode. */
export const oddTarget = fc
  .tuple(
    fc.constantFrom('/', '//', '/v1/', '/v1//', '/v1/pets/', '*', ''),
    fc.array(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...PATH_SEGMENTS) }, urlText(oddString(10))), { maxLength: 5 }),
    fc.constantFrom('', '/', '//', '?', '?limit=1', '?x=%', '#frag', '?a=1#b', '/.', '/..'),
  )
  .map(([start, segments, end]) => `${start}${segments.join('/')}${end}`);

// ---------------------------------------------------------------------------------------------
// Stored pets

/** A pet as a listing test stores it: an id, a status, and the page of a walk after which it is created (0: before the walk). */
export interface StoredPet {
  readonly id: number;
  readonly status: PetStatus;
  readonly createdAfterPage: number;
}

/** Pets with distinct ids, some created before a listing's walk and some during it, between its pages. */
export const storedPets = ({ maxLength, pages }: { maxLength: number; pages: number }) =>
  fc.uniqueArray(
    fc.record({
      id: fc.integer({ min: 1, max: 100_000 }),
      status: fc.constantFrom(...PetStatus.options),
      createdAfterPage: fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: pages })),
    }),
    { maxLength, selector: (pet) => pet.id },
  );
