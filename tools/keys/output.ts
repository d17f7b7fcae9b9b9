/** How the key tool prints a key: a listing's line, `show`'s attribute lines, and --json's object. */
import { keyState, type ApiKeyRecord } from '../../shared/api-keys-repository';
import { DEFAULT_PLAN } from '../../shared/plans';

/** What an absent attribute shows as in the text output. */
const NONE = '-';

export const LIST_HEADER = ['id', 'name', 'scopes', 'created', 'expires', 'last used', 'state', 'plan'].join('\t');

/**
 * Whether the key is metered on the `default` plan's shared usage key: it has no API key of its own
 * (a key from before plans, until set-plan), or an empty one typed in the console.
 */
export const onSharedUsageKey = (record: Pick<ApiKeyRecord, 'usageKey'>): boolean => !record.usageKey;

/** The plan a key is metered on, as the authorizer names it: its `plan` with a usage key of its own, else `default`. */
export const meteredPlan = (record: Pick<ApiKeyRecord, 'plan' | 'usageKey'>): string =>
  onSharedUsageKey(record) || !record.plan ? DEFAULT_PLAN : record.plan;

const scopesText = (record: ApiKeyRecord): string => record.scopes.join(',') || '(none)';

/** One line of `list`, tab-separated as LIST_HEADER. */
export const listLine = (record: ApiKeyRecord, now: Date): string =>
  [
    record.keyId,
    record.name,
    scopesText(record),
    record.createdAt,
    record.expiresAt ?? NONE,
    record.lastUsedAt ?? NONE,
    keyState(record, now),
    meteredPlan(record),
  ].join('\t');

/**
 * Every attribute of the record but its hash and its usage key's value (which API Gateway's console
 * shows beside its id), in the stored names an operator finds in the console.
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
] as const satisfies ReadonlyArray<Exclude<keyof ApiKeyRecord, 'keyHash' | 'usageKey'>>;

const SHARED_USAGE_KEY_NOTE = `${DEFAULT_PLAN} (the shared usage key, until set-plan)`;

/** `show`'s lines: the key's state, then each attribute, name and value. */
export const showLines = (record: ApiKeyRecord, now: Date): string[] => {
  const width = Math.max(...SHOWN.map((name) => name.length)) + 2;
  const value = (name: (typeof SHOWN)[number]): string => {
    if (name === 'scopes') return scopesText(record);
    if (name === 'plan') return onSharedUsageKey(record) ? SHARED_USAGE_KEY_NOTE : meteredPlan(record);
    return record[name] ?? NONE;
  };
  return [`${'state'.padEnd(width)}${keyState(record, now)}`, ...SHOWN.map((name) => `${name.padEnd(width)}${value(name)}`)];
};

/** A key as --json prints it, absent attributes as null; `plan` is the one it is metered on, never null. */
const keyObject = (record: ApiKeyRecord) => ({
  id: record.keyId,
  name: record.name,
  scopes: record.scopes,
  createdAt: record.createdAt,
  expiresAt: record.expiresAt ?? null,
  revokedAt: record.revokedAt ?? null,
  lastUsedAt: record.lastUsedAt ?? null,
  plan: meteredPlan(record),
});

/** One key as --json prints it; `key` only for the key a create or roll made, shown that once. */
export const keyJson = (record: ApiKeyRecord, key?: string): string =>
  JSON.stringify({ ...keyObject(record), ...(key === undefined ? {} : { key }) });

/** `show --json`: the same object, with the key's state and the rest of its attributes (its hash excepted). */
export const fullKeyJson = (record: ApiKeyRecord, now: Date): string =>
  JSON.stringify({
    ...keyObject(record),
    state: keyState(record, now),
    replaces: record.replaces ?? null,
    replacedBy: record.replacedBy ?? null,
    changedBy: record.changedBy ?? null,
    changedAt: record.changedAt ?? null,
    expiredAt: record.expiredAt ?? null,
    usageKeyId: record.usageKeyId ?? null,
  });
