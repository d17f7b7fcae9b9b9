/** How the key tool prints a key: a listing's line, `show`'s attribute lines, and --json's object. */
import { convertToAttr } from '@aws-sdk/util-dynamodb';
import { type ApiKeyRecord } from '../../shared/api-keys-repository';
import { keyState } from '../../shared/key-state';
import type { UsedToday } from './usage-keys';

/** What an absent attribute shows as in the text output. */
const NONE = '-';

/**
 * What a terminal would not print as itself: control characters (C0, DEL, C1), format characters
 * (bidirectional overrides, zero-width ones), line and paragraph separators, lone surrogates.
 */
const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;
const NAMED_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

const escapeOf = (character: string): string => {
  const named = NAMED_ESCAPES[character];
  if (named !== undefined) return named;
  const code = character.codePointAt(0) ?? 0;
  const hex = code.toString(16);
  if (code < 0x80) return `\\x${hex.padStart(2, '0')}`;
  return code <= 0xffff ? `\\u${hex.padStart(4, '0')}` : `\\u{${hex}}`;
};

/**
 * A stored text as a cell of the text output: each non-printable character escaped (\n, \t,
 * \x1b, \u0085, \u202e), so that a name written in the console cannot start a line, shift a
 * column or drive the terminal. --json prints values exactly.
 */
export const printable = (text: string): string => text.replace(NON_PRINTABLE, escapeOf);

/**
 * A stored attribute as text. A console edit may have given it another type than a String (a
 * Number, read as a BigInt when it is large, NULL, a Boolean): that is shown as DynamoDB writes
 * it, such as {"N":"1700000000"} or {"NULL":true}, so that it is neither lost nor taken for text.
 */
const storedText = (value: unknown): string => {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(convertToAttr(value));
  } catch {
    return String(value);
  }
};

/** An attribute in the text output: absent as NONE, anything non-printable escaped. */
export const attributeText = (value: unknown): string => (value === undefined ? NONE : printable(storedText(value)));

/** An attribute in --json: absent as null, any other type as its text (JSON has no BigInt). */
const attributeJson = (value: unknown): string | null => (value === undefined ? null : storedText(value));

export const LIST_HEADER = ['id', 'name', 'scopes', 'created', 'expires', 'last used', 'state', 'plan'].join('\t');

const scopesText = (record: ApiKeyRecord): string => record.scopes.join(',') || '(none)';

/** One line of `list`, tab-separated as LIST_HEADER. */
export const listLine = (record: ApiKeyRecord, now: Date): string =>
  [
    record.keyId,
    attributeText(record.name),
    scopesText(record),
    attributeText(record.createdAt),
    attributeText(record.expiresAt),
    attributeText(record.lastUsedAt),
    keyState(record, now),
    attributeText(record.plan),
  ].join('\t');

/**
 * Every attribute of the record but its hash, its usage key's value (which API Gateway's console
 * shows beside its id) and the binding derived from them, in the stored names an operator finds in
 * the console.
 */
const SHOWN = [
  'keyId',
  'name',
  'scopes',
  'createdAt',
  'expiresAt',
  'revokedAt',
  'lastUsedAt',
  'replaces',
  'replacedBy',
  'changedBy',
  'changedAt',
  'expiredAt',
  'plan',
  'usageKeyId',
] as const satisfies ReadonlyArray<Exclude<keyof ApiKeyRecord, 'keyHash' | 'usageKey' | 'usageKeyBinding'>>;

/** `show`'s lines: the key's state, then each attribute, name and value. */
export const showLines = (record: ApiKeyRecord, now: Date): string[] => {
  const width = Math.max(...SHOWN.map((name) => name.length)) + 2;
  const value = (name: (typeof SHOWN)[number]): string => {
    if (name === 'scopes') return scopesText(record);
    return attributeText(record[name]);
  };
  return [`${'state'.padEnd(width)}${keyState(record, now)}`, ...SHOWN.map((name) => `${name.padEnd(width)}${value(name)}`)];
};

/** A key as --json prints it, absent attributes as null. */
const keyObject = (record: ApiKeyRecord) => ({
  id: record.keyId,
  name: attributeJson(record.name),
  scopes: record.scopes,
  createdAt: attributeJson(record.createdAt),
  expiresAt: attributeJson(record.expiresAt),
  revokedAt: attributeJson(record.revokedAt),
  lastUsedAt: attributeJson(record.lastUsedAt),
  plan: attributeJson(record.plan),
});

/** One key as --json prints it; `key` only for the key a create or roll made, shown that once. */
export const keyJson = (record: ApiKeyRecord, key?: string): string =>
  JSON.stringify({ ...keyObject(record), ...(key === undefined ? {} : { key }) });

/** A key as `list --usage --json` prints it: with its requests today (null when it is metered on no plan the target has). */
export const listUsageJson = (record: ApiKeyRecord, usedToday: UsedToday | undefined): string =>
  JSON.stringify({
    ...keyObject(record),
    usedToday: usedToday?.requests ?? null,
    // A stage in several regions: each region's share of the sum.
    ...(usedToday?.byRegion === undefined
      ? {}
      : { usedTodayByRegion: Object.fromEntries(usedToday.byRegion.map(({ region, requests }) => [region, requests])) }),
  });

/** `show --json`: the same object, with the key's state and the rest of its attributes (its hash excepted). */
export const fullKeyJson = (record: ApiKeyRecord, now: Date): string =>
  JSON.stringify({
    ...keyObject(record),
    state: keyState(record, now),
    replaces: attributeJson(record.replaces),
    replacedBy: attributeJson(record.replacedBy),
    changedBy: attributeJson(record.changedBy),
    changedAt: attributeJson(record.changedAt),
    expiredAt: attributeJson(record.expiredAt),
    usageKeyId: attributeJson(record.usageKeyId),
    // A stage in several regions: its API key's id in each other region, which a break-glass
    // suspension there needs (docs/keys.md, While the home region is down).
    regionUsageKeyIds: record.regionUsageKeyIds ?? null,
  });
