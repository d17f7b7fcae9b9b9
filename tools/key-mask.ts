/**
 * The one mask every operator tool's output goes through (npm run smoke, npm run keys, and any
 * tool's error line): no key, and no part of one long enough to matter, is ever printed.
 *
 * Masked, each run replaced by MASK:
 * - every run of KNOWN_RUN or more characters of a secret the tool holds (the smoke's key, a key
 *   the key tool made or was handed) past the prefix every key shares, and the prefix where it
 *   leads into such a run, wherever it appears;
 * - anything shaped like a generated key: the prefix and what follows it, or a body alone
 *   (API_KEY_BODY_LENGTH characters of base64url, standing on their own).
 * Characters are compared as they read: letters in either case, the compatibility forms Unicode
 * maps to them (fullwidth letters, ligatures), and without what shows no character of its own
 * between them (control, format and zero-width characters, combining marks). Those that do not
 * show at all are printed as \uXXXX escapes, so that nothing hidden can move, join or hide what
 * is printed around it.
 */
import { API_KEY_BODY_LENGTH, API_KEY_PREFIX } from '../shared/api-keys';

const MASK = '…';

/** The shortest run of a secret that is masked: 8 characters of base64url are 48 bits of the key. */
const KNOWN_RUN = 8;

const KEY_CHARACTER = '[A-Za-z0-9_-]';
/**
 * Key shapes, in the folded text: the prefix as keys have it and whatever key characters follow
 * (a key, or a key cut short); a whole key in any case, or its body on its own.
 */
const KEY_SHAPES = [
  new RegExp(`${API_KEY_PREFIX}${KEY_CHARACTER}*`, 'g'),
  new RegExp(`(?<!${KEY_CHARACTER})(?:${API_KEY_PREFIX})?${KEY_CHARACTER}{${API_KEY_BODY_LENGTH}}(?!${KEY_CHARACTER})`, 'gi'),
];
const PREFIX = API_KEY_PREFIX.toLowerCase();

/** What never reaches a terminal as it is: controls but tab and newline, format, separators, lone surrogates, the invisible. */
const HIDDEN = /(?![\t\n])[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;
/** What shows no character of its own between two others: read past when comparing. */
const UNSEEN = /^(?![\t\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{M}\p{Default_Ignorable_Code_Point}]$/u;
/** Stands for a character no key holds, in the folded text. */
const OTHER = '\uffff';

/**
 * `text` as it is compared: each character as it reads (ASCII, OTHER, or nothing when UNSEEN), and
 * `lower`, the same in lower case; `from`/`to` map each folded character back to text's.
 */
interface Folded {
  readonly text: string;
  readonly lower: string;
  readonly from: readonly number[];
  readonly to: readonly number[];
}

const foldCharacter = (character: string): string => {
  if (UNSEEN.test(character)) return '';
  if (character.charCodeAt(0) < 0x80) return character;
  const compatible = character.normalize('NFKC');
  return /^[\x20-\x7e]+$/.test(compatible) ? compatible : OTHER;
};

const fold = (text: string): Folded => {
  let folded = '';
  const from: number[] = [];
  const to: number[] = [];
  let at = 0;
  for (const character of text) {
    const reads = foldCharacter(character);
    folded += reads;
    for (let i = 0; i < reads.length; i++) {
      from.push(at);
      to.push(at + character.length);
    }
    at += character.length;
  }
  return { text: folded, lower: folded.toLowerCase(), from, to };
};

/** KNOWN_RUN characters of a secret, folded; `shared` when they start in the prefix every key has. */
interface Run {
  readonly text: string;
  readonly shared: boolean;
}

/** Every KNOWN_RUN characters of a secret (all of it when shorter). */
const runsOf = (secret: string): Run[] => {
  const folded = fold(secret).lower;
  const length = Math.min(KNOWN_RUN, folded.length);
  const prefixed = folded.startsWith(PREFIX);
  // The prefix tells nothing of a key: a run that starts in it holds fewer than KNOWN_RUN of the
  // key's own characters ("PETSTORE_API_KEY" is no part of a key "petstore_A…"). A secret with
  // fewer than KNOWN_RUN characters past its prefix has only the prefix alone shared.
  const longBody = folded.length - PREFIX.length >= KNOWN_RUN;
  const runs: Run[] = [];
  for (let start = 0; length > 0 && start + length <= folded.length; start++) {
    const shared = prefixed && (longBody ? start < PREFIX.length : start + length <= PREFIX.length);
    runs.push({ text: folded.slice(start, start + length), shared });
  }
  return runs;
};

type Range = [start: number, end: number];

/** Where `folded` holds a run of a secret (in any case), or a key shape when `shapes`: [start, end) in folded characters. */
const foundRanges = (folded: Folded, secrets: readonly string[], shapes: boolean): Range[] => {
  // By length, each run and whether it is only ever the prefix's.
  const runs = new Map<number, Map<string, boolean>>();
  for (const { text, shared } of secrets.flatMap(runsOf)) {
    const ofLength = runs.get(text.length) ?? new Map<string, boolean>();
    runs.set(text.length, ofLength.set(text, (ofLength.get(text) ?? true) && shared));
  }
  const own: Range[] = [];
  const shared: Range[] = [];
  for (const [length, known] of runs) {
    for (let start = 0; start + length <= folded.lower.length; start++) {
      const onlyShared = known.get(folded.lower.slice(start, start + length));
      if (onlyShared !== undefined) (onlyShared ? shared : own).push([start, start + length]);
    }
  }
  // The prefix names no key: it is masked where it leads into a secret's own characters (a run of
  // it touching a masked run, in turn), not alone.
  const ranges = [...own];
  const touches = ([start, end]: Range) => ranges.some(([maskedStart, maskedEnd]) => start <= maskedEnd && maskedStart <= end);
  for (let unmasked = shared, before = -1; unmasked.length !== before;) {
    before = unmasked.length;
    ranges.push(...unmasked.filter(touches));
    unmasked = unmasked.filter((range) => !ranges.includes(range));
  }
  for (const shape of shapes ? KEY_SHAPES : []) {
    for (const match of folded.text.matchAll(shape)) ranges.push([match.index, match.index + match[0].length]);
  }
  return ranges;
};

/** `\uXXXX` for each UTF-16 unit: the escape JSON and JavaScript read, so that --json stays JSON. */
const escaped = (character: string): string =>
  [...Array(character.length).keys()].map((i) => `\\u${character.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');

/** `text` with the runs found replaced by `mask`, and what is shown between them passed through `shown`. */
const masked = (text: string, secrets: readonly string[], shapes: boolean, shown: (text: string) => string, mask = MASK): string => {
  const folded = fold(text);
  const ranges = foundRanges(folded, secrets, shapes)
    .map(([start, end]): Range => [folded.from[start] ?? 0, folded.to[end - 1] ?? text.length])
    .sort(([a], [b]) => a - b);
  // Overlapping or touching runs make one mask.
  const merged: Range[] = [];
  for (const [start, end] of ranges) {
    const last = merged.at(-1);
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
    else merged.push([start, end]);
  }
  let result = '';
  let at = 0;
  for (const [start, end] of merged) {
    result += shown(text.slice(at, start)) + mask;
    at = end;
  }
  return result + shown(text.slice(at));
};

/**
 * `text` as a tool may print it: every run of KNOWN_RUN or more characters of any of `secrets`
 * and everything shaped like a key replaced by MASK, and every hidden character escaped.
 */
export const maskKeys = (text: string, secrets: readonly string[] = []): string =>
  masked(text, secrets, true, (shown) => shown.replace(HIDDEN, escaped));

/**
 * `text` that a tool keeps and works on (a server's answer), with only the runs of `secrets`
 * masked (by `mask`: an HTTP header holds Latin-1 only) and the rest as it came: a key shape may
 * be data (a cursor). What it prints of it goes through maskKeys.
 */
export const maskSecretRuns = (text: string, secrets: readonly string[], mask = MASK): string =>
  masked(text, secrets, false, (shown) => shown, mask);

/**
 * The key-shaped parts of `values` (a command line): each one a secret, whole or in part, wherever
 * the tool might echo it. A value is read as it is and without the dashes of an option name, as a
 * key pasted as one (--petstore_…) has them in front.
 */
export const keysIn = (values: readonly string[]): string[] =>
  values
    .flatMap((value) => [value, value.replace(/^--?/, '')])
    .flatMap((value) => {
      const folded = fold(value);
      return KEY_SHAPES.flatMap((shape) =>
        [...folded.text.matchAll(shape)]
          .filter((match) => match[0].length > API_KEY_PREFIX.length)
          .map((match) => value.slice(folded.from[match.index] ?? 0, folded.to[match.index + match[0].length - 1] ?? value.length)),
      );
    });
