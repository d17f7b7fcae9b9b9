/**
 * What a key's name may be: who or what the key is for, as every listing and the audit trail print
 * it. Every writer of a name checks it here (the key tool, the local server's registration, the
 * repository's register and roll), so one rule holds everywhere. A name written otherwise (the
 * DynamoDB console) is still read, and the tools escape what it holds when they print it.
 */
import * as z from 'zod/mini';
import { looksLikeApiKey } from './api-keys';

/** The most characters (code points) a key name has: a line of a listing, never a page. */
export const KEY_NAME_MAX_LENGTH = 128;

/** C0 (U+0000–U+001F: tab, line breaks, ESC), DEL and C1 (U+0080–U+009F): Unicode's Cc. */
const CONTROL_CHARACTER = /[\u0000-\u001F\u007F-\u009F]/;
/**
 * The characters that reorder or break a line as a terminal shows it: the bidirectional marks,
 * embeddings, overrides and isolates (U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), and the line
 * and paragraph separators (U+2028, U+2029). A name holding one could show another id, or another
 * line, than the one printed.
 */
const BIDI_OR_SEPARATOR = /[\u200E\u200F\u202A-\u202E\u2066-\u2069\u2028\u2029]/;
/** In a `u` regex a paired surrogate is one code point, so `\p{Cs}` matches only a lone one. */
const LONE_SURROGATE = /\p{Cs}/u;

const codePoints = (text: string): number => {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
};

/**
 * A key name: 1 to KEY_NAME_MAX_LENGTH characters, not blank, without control characters (a line
 * break or a terminal escape would forge the tools' output), bidirectional or line-separator
 * characters (they would reorder or break what is printed around them) or lone surrogates, and
 * not holding an API key (it would be printed by every listing). No message repeats the name.
 */
export const KeyName = z.string({ error: 'must be a string' }).check(
  z.refine((name: string) => name.length > 0, { error: 'must not be empty', abort: true }),
  z.refine((name: string) => codePoints(name) <= KEY_NAME_MAX_LENGTH, {
    error: `must be at most ${KEY_NAME_MAX_LENGTH} characters`,
    abort: true,
  }),
  z.refine((name: string) => !CONTROL_CHARACTER.test(name), {
    error: 'must not contain control characters (U+0000 to U+001F, U+007F to U+009F: line breaks, tabs, terminal escapes)',
    abort: true,
  }),
  z.refine((name: string) => !BIDI_OR_SEPARATOR.test(name), {
    error:
      'must not contain bidirectional or line-separator characters (U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069, U+2028, U+2029)',
    abort: true,
  }),
  z.refine((name: string) => !LONE_SURROGATE.test(name), { error: 'must be well-formed Unicode (no lone surrogates)', abort: true }),
  z.refine((name: string) => name.trim().length > 0, { error: 'must not be blank', abort: true }),
  z.refine((name: string) => !looksLikeApiKey(name), {
    error: 'holds what looks like an API key (not shown here): name the key by who or what it is for',
    abort: true,
  }),
);

/** A name KeyName refuses; `problem` says why ("must not be empty"), never what the name is. */
export class InvalidKeyName extends Error {
  override readonly name = 'InvalidKeyName';

  constructor(readonly problem: string) {
    super(`A key name ${problem}.`);
  }
}

/** The name, when KeyName accepts it; otherwise throws InvalidKeyName. */
export const checkKeyName = (name: unknown): string => {
  const parsed = z.safeParse(KeyName, name);
  if (parsed.success) return parsed.data;
  throw new InvalidKeyName(parsed.error.issues[0]?.message ?? 'is not valid');
};
