/**
 * The audit trail of API keys: what one change to the keys table means, as one JSON line. The
 * keys table's DynamoDB stream (new and old images) gives every write; `auditEntryOf` turns one
 * stream record into at most one entry: who changed which key, how, when, and each attribute's
 * value before and after. Every write that changes an attribute has its entry, but the
 * authorizer's own record of a use. Never the key (it is not stored), its hash, or a secret-like
 * value: only a fingerprint of one (`fingerprintOf`).
 */
import { hash } from 'node:crypto';
import type { AttributeValue as StreamAttributeValue, DynamoDBRecord } from 'aws-lambda';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { keyIdOf, replaceApiKeys } from './api-keys';
import { keyState } from './key-state';
import { PROJECT_NAME } from './project';
import { grantedScopes, type Scope } from './scopes';
import { SWEEP_INDEX_ATTRIBUTES } from './tables';

/** What a change did to a key, by the first that applies in this order (see `actionOf`). */
export const AUDIT_ACTIONS = [
  'created',
  'rolled',
  'revoked',
  'unrevoked',
  'expired',
  'usage_key_deleted',
  'scopes_changed',
  'expiry_set',
  'expiry_removed',
  'renamed',
  'changed',
  'deleted',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/**
 * An attribute's value as the audit line shows it: a String as itself, a String Set as a sorted
 * list, absent as null, and any other type as its raw attribute value (`{"NULL": true}`,
 * `{"N": "3"}`), so that a value of another type is never mistaken for an absent one.
 */
export type AuditValue = string | number | boolean | null | readonly AuditValue[] | { readonly [name: string]: AuditValue };

export interface AttributeChange {
  readonly from: AuditValue;
  readonly to: AuditValue;
  /**
   * Of a `scopes` change only: the scopes the key is granted before and after (grantedScopes). An
   * absent attribute grants none, and so does no item.
   */
  readonly grants?: { readonly from: readonly Scope[]; readonly to: readonly Scope[] };
}

export interface KeyAuditEntry {
  /** When the change was made (ISO 8601): the writer's `changedAt` when `by` is known, else `streamAt`. */
  readonly at: string;
  readonly keyId: string;
  readonly name: string;
  readonly action: AuditAction;
  /**
   * The `changedBy` the write declared (an ARN, `local:<user>`, `system:key-expiry`), or "unknown":
   * the console, or a write whose `changedAt` is unchanged or not within DECLARED_TIME_TOLERANCE_MS
   * of the stream's time. A writer declares it; CloudTrail data events on the table prove it.
   */
  readonly by: string;
  /**
   * The region the change was made in, as the write declared it (`changedInRegion`, with `by`);
   * absent for a change that did not declare one (the console).
   */
  readonly region?: string;
  /** Each attribute the change touched, but the ones below. */
  readonly changes: Readonly<Record<string, AttributeChange>>;
  /** When the table's stream recorded the write (ISO 8601; to the second, DynamoDB Local to the minute). */
  readonly streamAt: string;
  /** The stream record's id: a record handed twice gives two lines with the same id, one change. */
  readonly eventId: string;
  /** The record's place in its shard: a key's changes are in this order. */
  readonly sequenceNumber: string;
  /**
   * Only on an entry too long for one log event (fitAuditEntry): its long texts are cut, each
   * ending in TRUNCATION_MARK, and the changes that did not fit are left out.
   */
  readonly truncated?: true;
  /** Of a truncated entry: how many attribute changes it leaves out. */
  readonly omittedChanges?: number;
}

/** The message of every audit line in the log group, which `npm run keys -- audit` filters on. */
export const AUDIT_MESSAGE = 'key change';

/**
 * The level the audit lines are written at, fixed for the key-audit function alone (its logger
 * and its Lambda log level), so that lowering the other functions' level to cut noise cannot
 * silently stop the trail.
 */
export const AUDIT_LOG_LEVEL = 'INFO';

/**
 * How far a write's declared `changedAt` may be from the stream's time of the write for its
 * `changedBy` to be believed: a few seconds deployed; DynamoDB Local gives the stream time rounded
 * down to the minute. A copied item (a console "duplicate") or a replayed stamp is further off.
 */
export const DECLARED_TIME_TOLERANCE_MS = 2 * 60 * 1000;

/**
 * How many times a stream record whose line fails is tried again before it is set aside: deployed,
 * the event source mapping's retry attempts (the batch halved each time), then the FailedBatches
 * queue; locally the same count, then the local audit log's failed records.
 */
export const AUDIT_STREAM_RETRY_ATTEMPTS = 10;

/**
 * Environment variable that tells each region's key-audit function the stage's home region, where
 * a change no region stamped is logged; unset for a stage in one region.
 */
export const HOME_REGION_VARIABLE = 'HOME_REGION';

/** Who an entry names when the write did not say: an edit in the console, or any other writer. */
export const UNKNOWN_ACTOR = 'unknown';

/**
 * The item's key, never listed in `changes`: a write cannot change it (another hash is another
 * item), and the entry's `keyId` is derived from it. The hash itself stays out of the trail.
 */
const ITEM_KEY = 'keyHash';

/**
 * A key's place in the indexes the sweep reads (shared/tables.ts), never listed in `changes`: it says when the
 * sweep looks at the key, nothing the key may do; a write of it alone (the sweep moving or taking
 * a key out of the index) is no change of the key, and the trail leaves it out.
 */
const SWEEP_INDEX_KEYS: ReadonlySet<string> = new Set(SWEEP_INDEX_ATTRIBUTES);

/**
 * Attributes whose values are secret-like, listed in `changes` by fingerprint only: `usageKey`,
 * the value of the key's API Gateway API key, which whoever holds it can spend the key's quota
 * with (its id, `usageKeyId`, is listed as it is).
 */
const FINGERPRINTED = new Set(['usageKey']);

/** Who, when and where a writer declares: listed in `changes` only when the entry's `by`, `at` and `region` do not say them. */
const DECLARATION = ['changedBy', 'changedAt', 'changedInRegion'] as const;

/** A secret-like value as the trail shows it: `sha256:` and the first 8 hex digits of its SHA-256. */
export const fingerprintOf = (value: string): string => `sha256:${hash('sha256', value, 'hex').slice(0, 8)}`;

/** A SHA-256 in hex, as a key's hash is stored: secret-like wherever it appears. */
const HEX_DIGEST = /(?<![0-9A-Fa-f])[0-9A-Fa-f]{64}(?![0-9A-Fa-f])/g;

/**
 * A text as the trail shows it: an API key or a key's hash pasted into it (a name, a note, even an
 * attribute's name) replaced by `[secret sha256:…]`, its fingerprint.
 */
const withoutSecrets = (text: string): string => {
  const secret = (found: string) => `[secret ${fingerprintOf(found)}]`;
  return replaceApiKeys(text, secret).replace(HEX_DIGEST, secret);
};

/** The audit log group of a keys table: the key-audit function writes it, `npm run keys -- audit` reads it. */
export const auditLogGroupName = (keysTableName: string): string => `/${PROJECT_NAME}/key-audit/${keysTableName}`;

/** A stream image in raw attribute values. The aws-lambda and SDK attribute-value types are the same JSON shape. */
type RawImage = Record<string, StreamAttributeValue>;
/** A stream image as the repository and the authorizer read the item (the document client's values). */
type Item = Record<string, unknown>;

const itemOf = (image: RawImage | undefined): Item | undefined =>
  image && unmarshall(image as Record<string, AttributeValue>, { wrapNumbers: true });

/** A raw value as JSON carries it: binary (a Uint8Array from the SDK's Streams client) as base64. */
const plain = (value: unknown): AuditValue => {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, plain(inner)]));
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return null;
};

/** An attribute's value, comparable by its JSON text: what a change is decided on (never written as it is). */
const storedValue = (attribute: StreamAttributeValue | undefined): AuditValue => {
  if (attribute === undefined) return null;
  if (attribute.S !== undefined) return attribute.S;
  if (attribute.SS !== undefined) return [...attribute.SS].sort((a, b) => a.localeCompare(b));
  return plain(attribute);
};

/** A value with `transform` applied to every text in it, the names in a map too. */
const mapTexts = (value: AuditValue, transform: (text: string) => string): AuditValue => {
  if (typeof value === 'string') return transform(value);
  if (Array.isArray(value)) return value.map((inner: AuditValue) => mapTexts(inner, transform));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([name, inner]) => [transform(name), mapTexts(inner, transform)]));
  }
  return value;
};

/** Every text in a value (the names in a map too) without secrets. */
const shownValue = (value: AuditValue): AuditValue => mapTexts(value, withoutSecrets);

/**
 * An attribute as the line shows it (AuditValue): a secret-like one by fingerprint (a String as
 * `sha256:…`, another type as its type and the fingerprint of its JSON, e.g. {"N": "sha256:…"}).
 */
const auditValue = (name: string, attribute: StreamAttributeValue | undefined): AuditValue => {
  const value = storedValue(attribute);
  if (!FINGERPRINTED.has(name) || value === null) return shownValue(value);
  if (typeof value === 'string') return fingerprintOf(value);
  const [type = '?', inner] = Object.entries(attribute ?? {}).find(([, typed]) => typed !== undefined) ?? [];
  return { [type]: fingerprintOf(JSON.stringify(plain(inner))) };
};

/** The scopes an image grants, as the authorizer decides them; none without an item. */
const grantsOf = (item: Item | undefined): Scope[] => (item === undefined ? [] : grantedScopes(item.scopes));

/** The names of the attributes the write changed (by their stored values, never by what the line shows), the item's key aside. */
const changedNames = (rawBefore: RawImage | undefined, rawAfter: RawImage | undefined): string[] =>
  [...new Set([...Object.keys(rawBefore ?? {}), ...Object.keys(rawAfter ?? {})])]
    .filter((name) => name !== ITEM_KEY && !SWEEP_INDEX_KEYS.has(name))
    .filter((name) => JSON.stringify(storedValue(rawBefore?.[name])) !== JSON.stringify(storedValue(rawAfter?.[name])));

const changesBetween = (
  names: readonly string[],
  [rawBefore, before]: [RawImage | undefined, Item | undefined],
  [rawAfter, after]: [RawImage | undefined, Item | undefined],
): Record<string, AttributeChange> => {
  const changes: Record<string, AttributeChange> = {};
  for (const name of names) {
    changes[withoutSecrets(name)] = { from: auditValue(name, rawBefore?.[name]), to: auditValue(name, rawAfter?.[name]) };
  }
  // What the key may do changed even when the attribute did not: a key created or deleted without one.
  const grants = { from: grantsOf(before), to: grantsOf(after) };
  if (changes.scopes || JSON.stringify(grants.from) !== JSON.stringify(grants.to)) {
    changes.scopes = { ...(changes.scopes ?? { from: null, to: null }), grants };
  }
  return Object.fromEntries(Object.entries(changes).sort(([a], [b]) => a.localeCompare(b)));
};

/** Revoked as the authorizer sees it: any `revokedAt`, of any type (keyState). */
const isRevoked = (item: Item, now: Date): boolean =>
  keyState({ revokedAt: item.revokedAt as string | undefined, expiresAt: undefined }, now) === 'revoked';

/** A MODIFY's action: the most telling of the attributes it changed. */
const modifyAction = (changes: Record<string, AttributeChange>, before: Item, after: Item, now: Date): AuditAction => {
  const set = (name: string) => changes[name] !== undefined && changes[name].to !== null;
  if (!isRevoked(before, now) && isRevoked(after, now)) return 'revoked';
  if (isRevoked(before, now) && !isRevoked(after, now)) return 'unrevoked';
  if (set('expiredAt')) return 'expired';
  if (set('usageKeyDeletedAt')) return 'usage_key_deleted';
  if (changes.scopes) return 'scopes_changed';
  if (changes.expiresAt) return changes.expiresAt.to === null ? 'expiry_removed' : 'expiry_set';
  if (changes.name) return 'renamed';
  return 'changed';
};

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * ApproximateCreationDateTime: epoch seconds as Lambda hands it, or an ISO string as the AWS CLI
 * prints a record read back by hand (recovering a failed batch); undefined without one.
 */
const streamTime = (record: DynamoDBRecord): Date | undefined => {
  const value: unknown = record.dynamodb?.ApproximateCreationDateTime;
  const time = typeof value === 'number' ? value * 1000 : typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isFinite(time) ? new Date(time) : undefined;
};

/** A record's place in its shard (the id Lambda's partial batch response names). */
export const sequenceNumberOf = (record: DynamoDBRecord): string => record.dynamodb?.SequenceNumber ?? record.eventID ?? '';

/**
 * Who a write declared it was made by, when that can be believed: the write changed `changedAt`
 * (the key tool and the expiry sweep set both on each change) to a time close to the stream's.
 */
const declaredBy = (
  before: Item,
  after: Item,
  streamAt: Date | undefined,
): { by: string; at: string; region: string | undefined } | undefined => {
  const changedAt = text(after.changedAt);
  const changedBy = text(after.changedBy);
  if (changedAt === undefined || changedBy === undefined || changedAt === text(before.changedAt) || streamAt === undefined)
    return undefined;
  const declared = Date.parse(changedAt);
  return Math.abs(declared - streamAt.getTime()) <= DECLARED_TIME_TOLERANCE_MS
    ? { by: changedBy, at: changedAt, region: text(after.changedInRegion) }
    : undefined;
};

/**
 * The audit entry of one stream record of the keys table (StreamViewType NEW_AND_OLD_IMAGES), or
 * undefined when the write changed no attribute. Every other change is in `changes`, secret-like
 * values by fingerprint. (The authorizer's record of a key's use is no write of the keys table: it
 * is in the last-use table, which has no stream.)
 *
 * `by` is the new image's `changedBy` when this write changed `changedAt` to within
 * DECLARED_TIME_TOLERANCE_MS of the stream's time: the key tool and the expiry sweep set both on
 * each change. A write that leaves `changedAt` as it was is someone else's (an edit in the
 * console), and is "unknown", even though the item still names the last known changer; so is a
 * copied item, whose `changedAt` is the original's. `at` is then the stream's own time, and a
 * change of `changedBy` or `changedAt` is listed in `changes` like any other; so is one that is
 * the write's only change. `keyId` is the item key's (its hash's) id, as the tools derive it: a
 * `keyId` attribute written otherwise is a change of that attribute, not another key.
 */
export const auditEntryOf = (record: DynamoDBRecord, now = new Date()): KeyAuditEntry | undefined => {
  const rawBefore = record.dynamodb?.OldImage;
  const rawAfter = record.dynamodb?.NewImage;
  const before = itemOf(rawBefore) ?? {};
  const after = itemOf(rawAfter) ?? {};
  const recorded = streamTime(record);
  const declared = record.eventName === 'REMOVE' ? undefined : declaredBy(before, after, recorded);
  let names = changedNames(rawBefore, rawAfter);
  if (record.eventName === 'MODIFY' && names.length === 0) return undefined;
  // A declaration believed is the entry's `by` and `at`, unless it is all the write changed.
  const undeclared = names.filter((name) => !(DECLARATION as readonly string[]).includes(name));
  if (declared !== undefined && undeclared.length > 0) names = undeclared;
  const changes = changesBetween(names, [rawBefore, itemOf(rawBefore)], [rawAfter, itemOf(rawAfter)]);

  let action: AuditAction;
  switch (record.eventName) {
    case 'INSERT':
      action = text(after.replaces) === undefined ? 'created' : 'rolled';
      break;
    case 'REMOVE':
      action = 'deleted';
      break;
    case 'MODIFY':
      action = modifyAction(changes, before, after, recorded ?? now);
      break;
    default:
      return undefined;
  }

  const streamAt = (recorded ?? now).toISOString();
  const keys = record.dynamodb?.Keys as RawImage | undefined;
  const keyHash = keys?.[ITEM_KEY]?.S ?? rawAfter?.[ITEM_KEY]?.S ?? rawBefore?.[ITEM_KEY]?.S ?? '';
  const item = record.eventName === 'REMOVE' ? before : after;
  const sequenceNumber = sequenceNumberOf(record);
  return {
    at: declared?.at ?? streamAt,
    keyId: keyIdOf(keyHash),
    name: withoutSecrets(text(item.name) ?? text(before.name) ?? ''),
    action,
    by: withoutSecrets(declared?.by ?? UNKNOWN_ACTOR),
    ...(declared?.region === undefined ? {} : { region: withoutSecrets(declared.region) }),
    changes,
    streamAt,
    eventId: record.eventID ?? sequenceNumber,
    sequenceNumber,
  };
};

/**
 * Where a key-audit function runs: its own region (AWS_REGION), the stage's home region (none: one
 * region), and the stage's regions (STAGE_REGIONS, the home region first).
 */
export interface AuditRegion {
  readonly region: string | undefined;
  readonly homeRegion: string | undefined;
  /**
   * The stage's regions: a stamp that names none of them is no region's, and the home region
   * records the change. None given (a setting left out): the regions known here, this one and the
   * home region, so that a change stamped with another region of the stage is recorded twice, never lost.
   */
  readonly stageRegions?: readonly string[];
}

/** The region a stream record's change was written in, as the write stamped it: the new image's `changedInRegion`, a REMOVE's old image's. */
export const changedInRegionOf = (record: DynamoDBRecord): string | undefined => {
  const image = record.eventName === 'REMOVE' ? record.dynamodb?.OldImage : record.dynamodb?.NewImage;
  return text(image?.changedInRegion?.S);
};

/**
 * The region whose audit records a change: the region it was stamped with, when that is one of the
 * stage's; otherwise (no stamp: the console's edit, or a stamp naming no region of the stage, which
 * only an edit by hand writes) the home region. A stamp no region answers to would otherwise leave
 * the change recorded nowhere, while the caches it flushes make it take effect everywhere.
 */
const recordingRegionOf = (record: DynamoDBRecord, { region, homeRegion, stageRegions = [] }: AuditRegion): string | undefined => {
  const stamp = changedInRegionOf(record);
  const known = stageRegions.length > 0 ? stageRegions : [homeRegion, region];
  return stamp !== undefined && known.includes(stamp) ? stamp : homeRegion;
};

/**
 * Whether this region's audit records the change: each replica of a global table streams every
 * write, wherever it was made, so each change is recorded once, by the region it was stamped with;
 * an unstamped change, or one stamped with a region the stage does not run in, by the home region
 * (recordingRegionOf). A stage in one region (no home region) records every change. The images
 * are the item as replicated, the same in every region's stream, so the regions agree on which of
 * them records it.
 */
export const logsChangeHere = (record: DynamoDBRecord, here: AuditRegion): boolean =>
  here.homeRegion === undefined || recordingRegionOf(record, here) === here.region;

/**
 * The attributes an authorizer's answer is made of: whether the key is revoked or expired
 * (keyState), its scopes (grantedScopes), its plan and usage key (meteringOf); and `expiredAt`,
 * the sweep's mark of an expiry reached, which an answer cached before it no longer holds to.
 */
const ANSWER_ATTRIBUTES = ['revokedAt', 'expiresAt', 'expiredAt', 'scopes', 'plan', 'usageKeyId', 'usageKey', 'usageKeyBinding'] as const;

/**
 * Whether a stream record's change may make a cached answer of the authorizer wrong, so that the
 * stage's authorizer cache is flushed after it: a key deleted, or one of ANSWER_ATTRIBUTES changed
 * (a revoke, an expiry set or marked, scopes, a plan, a usage key). A new key had no answer to
 * cache; a rename, or a write of the sweep's indexes alone, changes none.
 */
export const changesAnswer = (record: DynamoDBRecord): boolean => {
  if (record.eventName === 'REMOVE') return true;
  if (record.eventName !== 'MODIFY') return false;
  const before = record.dynamodb?.OldImage ?? {};
  const after = record.dynamodb?.NewImage ?? {};
  return ANSWER_ATTRIBUTES.some((name) => JSON.stringify(storedValue(before[name])) !== JSON.stringify(storedValue(after[name])));
};

/**
 * The most bytes one audit line may have: 256 KB less the 26 bytes CloudWatch Logs counts per
 * event. That was CloudWatch Logs' event size until 2025 (it is 1 MB since), and Lambda has been
 * seen to split a function's line at it: a line within it is one event whatever applies. A split
 * line would be two lines, neither of them JSON, which no filter and no `audit` would find.
 */
export const MAX_AUDIT_LINE_BYTES = 256 * 1024 - 26;

/** Room kept in a line for the logger's own fields (level, message, timestamp, service, trace id). */
const LOGGER_FIELDS_BYTES = 2 * 1024;

/** The most bytes an entry's JSON may have, so that its line fits in MAX_AUDIT_LINE_BYTES. */
export const MAX_AUDIT_ENTRY_BYTES = MAX_AUDIT_LINE_BYTES - LOGGER_FIELDS_BYTES;

/** How many characters of a long text a truncated entry keeps, before TRUNCATION_MARK. */
export const TRUNCATED_TEXT_LENGTH = 1024;

/** What ends a text a truncated entry cut. */
export const TRUNCATION_MARK = '…[truncated]';

const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** A text cut to TRUNCATED_TEXT_LENGTH code points (never within a surrogate pair), marked when cut. */
const cutText = (text: string): string => {
  if (text.length <= TRUNCATED_TEXT_LENGTH) return text;
  let kept = '';
  let count = 0;
  for (const character of text) {
    if (count === TRUNCATED_TEXT_LENGTH) return `${kept}${TRUNCATION_MARK}`;
    kept += character;
    count += 1;
  }
  return kept;
};

/** Every text in a value cut (the names in a map too). */
const cutValue = (value: AuditValue): AuditValue => mapTexts(value, cutText);

const cutChange = (change: AttributeChange): AttributeChange => ({ ...change, from: cutValue(change.from), to: cutValue(change.to) });

/**
 * The entry as it can be written: itself when its JSON is within `maxBytes`; otherwise marked
 * `truncated`, with its key id, action, stream record and times as they are, each longer text (the
 * name, `by`, attribute names and values) cut to TRUNCATED_TEXT_LENGTH characters, and as many of
 * its changes as fit, in order, the others counted in `omittedChanges`. A line too long for its
 * log event would otherwise be split or lost, and the record retried until it is given up.
 */
export const fitAuditEntry = (entry: KeyAuditEntry, maxBytes = MAX_AUDIT_ENTRY_BYTES): KeyAuditEntry => {
  if (jsonBytes(entry) <= maxBytes) return entry;
  const { changes, ...fields } = entry;
  const base: KeyAuditEntry = {
    ...fields,
    name: cutText(entry.name),
    by: cutText(entry.by),
    changes: {},
    truncated: true,
  };
  const omittedCount = Object.keys(changes).length;
  // The empty entry, with room for the largest omittedChanges it may need.
  let size = jsonBytes({ ...base, omittedChanges: omittedCount });
  const kept: Record<string, AttributeChange> = {};
  let omitted = 0;
  for (const [name, change] of Object.entries(changes)) {
    const cutName = cutText(name);
    const cut = cutChange(change);
    // `"name":{…}` and a comma.
    const added = jsonBytes({ [cutName]: cut }) - 1;
    if (!Object.hasOwn(kept, cutName) && size + added <= maxBytes) {
      kept[cutName] = cut;
      size += added;
    } else {
      omitted += 1;
    }
  }
  return { ...base, changes: kept, ...(omitted > 0 ? { omittedChanges: omitted } : {}) };
};
