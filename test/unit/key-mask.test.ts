/**
 * The key mask every tool prints through (tools/key-mask.ts): no key, and no 8-character part of
 * one, comes out of it, however a broken server or a slip of the operator cuts, cases, spaces out
 * or disguises it; text without keys comes out as it went in, hidden characters escaped.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { API_KEY_PREFIX, generateApiKey } from '../../shared/api-keys';
import { keysIn, maskKeys, maskSecretRuns } from '../../tools/key-mask';
import { oddString } from '../support/arbitraries';

const RUNS = 500;
const SEED = 20_260_701;

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** A key as generateApiKey makes them: the prefix, 43 characters of base64url. */
const generatedKey = fc
  .string({ unit: fc.constantFrom(...BASE64URL), minLength: 43, maxLength: 43 })
  .map((body) => `${API_KEY_PREFIX}${body}`);

/** Every 8 characters of `key` past the prefix (which every key shares), in lower case. */
const partsOf = (key: string): string[] =>
  [...Array(key.length - 7).keys()]
    .filter((start) => start >= API_KEY_PREFIX.length)
    .map((start) => key.slice(start, start + 8).toLowerCase());

/**
 * What a reader sees of `output`, independently of the mask's own reading: compatibility forms
 * as their letters, no mark or invisible character between letters, in lower case.
 */
const asRead = (output: string): string =>
  output
    .normalize('NFKC')
    .replace(/[\p{M}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu, '')
    .toLowerCase();

const expectNoPartOf = (output: string, key: string) => {
  const seen = asRead(output);
  for (const part of partsOf(key)) expect(seen, `${JSON.stringify(part)} in ${JSON.stringify(output)}`).not.toContain(part);
};

const FULLWIDTH_OFFSET = 0xff01 - 0x21;
/** How a broken server or a terminal might pass a part of a key on: as it is, in another case, fullwidth, or with invisible marks between its characters. */
const disguises: Array<(part: string) => string> = [
  (part) => part,
  (part) => part.toUpperCase(),
  (part) => part.toLowerCase(),
  (part) => [...part].map((character) => String.fromCharCode(character.charCodeAt(0) + FULLWIDTH_OFFSET)).join(''),
  (part) => [...part].join('\u200b'),
  (part) => [...part].join('\u0301'),
  (part) => [...part].join('\u00ad'),
];

/** A part of a key of 8 characters or more, beyond its prefix, disguised: [end, length, disguise]. */
const keyPart = fc.tuple(fc.nat(), fc.integer({ min: 8, max: 52 }), fc.nat({ max: disguises.length - 1 }));

/** Text with parts of a key among odd strings: the parts as [end, length, disguise], with whatever surrounds them. */
const echoes = fc.array(fc.tuple(oddString(20), keyPart), { minLength: 1, maxLength: 5 });

const echoed = (key: string, pieces: ReadonlyArray<[string, [number, number, number]]>, tail = ''): string =>
  pieces
    .map(([around, [end, length, disguise]]) => {
      // Ends 8 characters or more past the prefix (which names no key), at least 8 characters long.
      const to = API_KEY_PREFIX.length + 8 + (end % (key.length - API_KEY_PREFIX.length - 7));
      const part = key.slice(Math.max(0, to - length), to);
      return `${around}${disguises[disguise]?.(part) ?? part}`;
    })
    .join('') + tail;

describe('maskKeys', () => {
  it('masks every part of 8 characters or more of a key it holds, wherever and however it is echoed', () => {
    fc.assert(
      fc.property(generatedKey, echoes, oddString(20), (key, pieces, tail) => {
        const output = maskKeys(echoed(key, pieces, tail), [key]);
        expectNoPartOf(output, key);
        expect(output).toContain('…');
      }),
      { numRuns: RUNS, seed: SEED },
    );
  });

  it('masks a key it does not hold, whole or cut short after its prefix, and its body alone', () => {
    fc.assert(
      fc.property(generatedKey, oddString(20), fc.integer({ min: 1, max: 43 }), (key, around, length) => {
        const body = key.slice(API_KEY_PREFIX.length);
        for (const text of [key, key.toUpperCase(), `${API_KEY_PREFIX}${body.slice(0, length)}`, body, `Bearer ${body}`]) {
          expect(maskKeys(`${around} ${text} ${around}`)).not.toContain(text.slice(API_KEY_PREFIX.length - 1, API_KEY_PREFIX.length + 7));
        }
        expectNoPartOf(maskKeys(`${around}"${body}"${around}`), key);
      }),
      { numRuns: RUNS, seed: SEED + 1 },
    );
  });

  it('masks a key of any other form it holds, a run of 8 characters or more', () => {
    const key = `smoke-operator-key.${'0123456789'.repeat(4)}`;
    expect(maskKeys(`a ${key.slice(5, 13)} b ${key.slice(30, 37)} c`, [key])).toBe(`a … b ${key.slice(30, 37)} c`);
    expect(maskKeys(`${key}${key}`, [key])).toBe('…');
  });

  it('leaves what holds no key as it is, its hidden characters escaped', () => {
    // A key whose first characters after the prefix are those of a word in the texts: "PETSTORE_API_KEY" stays.
    const key = `${API_KEY_PREFIX}API${generateApiKey().slice(API_KEY_PREFIX.length + 3)}`;
    for (const text of [
      'Smoke test of http://127.0.0.1:3000/v1',
      'npm run smoke: give an API key, with --key or in PETSTORE_API_KEY: see npm run smoke -- --help',
      'No keys table pet-store-prod-api-keys in this region (--stage prod): check --table, --stage and --region.',
      'petstore store PetStore-prod 5bf2a087678f',
      'id\tname\tscopes\nnext',
    ]) {
      expect(maskKeys(text, [key])).toBe(text);
    }
    expect(maskKeys('a\u202eb\u200bc\u0000d\u001b[2Je\r\u2028')).toBe('a\\u202eb\\u200bc\\u0000d\\u001b[2Je\\u000d\\u2028');
  });

  it('prints no character that does not show, and stays one line for a line', () => {
    fc.assert(
      fc.property(fc.array(oddString(), { maxLength: 4 }), generatedKey, (parts, key) => {
        const text = parts.join(' ').replace(/\n/g, ' ');
        const output = maskKeys(text, [key]);
        expect(output).not.toMatch(/(?![\t])[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u);
        expect(output).not.toContain('\n');
      }),
      { numRuns: RUNS, seed: SEED + 2 },
    );
  });

  it('keeps --json output JSON, with the same text but for the masks', () => {
    const key = generateApiKey();
    const document = JSON.stringify({ detail: `name ${key} \u202e\u{e0061}`, key: key.slice(9, 30) });
    expect(JSON.parse(maskKeys(document, [key]))).toEqual({ detail: 'name … \u202e\u{e0061}', key: '…' });
  });
});

describe('maskSecretRuns', () => {
  it('masks the runs of the secrets only, leaving key shapes (data such as a cursor) and the rest as they came', () => {
    const key = generateApiKey();
    // Sharing the prefix and, in about one in thirty-five, a first character with the key: too little of it to mask.
    const other = `${key.slice(0, API_KEY_PREFIX.length + 1)}${generateApiKey().slice(API_KEY_PREFIX.length + 1)}`;
    const text = `${key.slice(12, 30)} ${other} \u200b`;
    expect(maskSecretRuns(text, [key])).toBe(`… ${other} \u200b`);
    expect(maskSecretRuns(`Bearer ${key}`, [key], '...')).toBe('Bearer ...');
  });
});

describe('keysIn', () => {
  it('finds the keys pasted in a command line, wherever they are in a value', () => {
    const key = generateApiKey();
    const body = key.slice(API_KEY_PREFIX.length);
    expect(keysIn(['list', '--table', key])).toContain(key);
    expect(keysIn([`--${key}`])).toContain(key);
    expect(keysIn([`--table=${key}`])).toContain(key);
    expect(keysIn(['--plan', body])).toContain(body);
    expect(keysIn(['list', '--table', 'pet-store-prod-api-keys', 'petstore_', '5bf2a087678f'])).toEqual([]);
  });
});
