/**
 * The audit trail of API keys: what one change to the keys table means, as one JSON line. The
 * keys table's DynamoDB stream (new and old images) gives every write; `auditEntryOf` turns one
 * stream record into at most one entry: who changed which key, how, when, and each attribute's
 * value before and after. Never the key (it is not stored) and never its hash: only its id.
 */
import type { AttributeValue as StreamAttributeValue, DynamoDBRecord } from 'aws-lambda';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { keyIdOf } from './api-keys';
import { keyState } from './key-state';
import { PROJECT_NAME } from './project';
import { grantedScopes, type Scope } from './scopes';

/** What a change did to a key, by the first that applies in this order (see `actionOf`). */
export const AUDIT_ACTIONS = [
  'created',
  'rolled',
  'revoked',
  'unrevoked',
  'expired',
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
  /** Each attribute the change touched, but the ones below. */
  readonly changes: Readonly<Record<string, AttributeChange>>;
  /** When the table's stream recorded the write (ISO 8601; to the second, DynamoDB Local to the minute). */
  readonly streamAt: string;
  /** The stream record's id: a record handed twice gives two lines with the same id, one change. */
  readonly eventId: string;
  /** The record's place in its shard: a key's changes are in this order. */
  readonly sequenceNumber: string;
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

/** Who an entry names when the write did not say: an edit in the console, or any other writer. */
export const UNKNOWN_ACTOR = 'unknown';

/**
 * Attributes never listed in `changes`: the hash (a key's secret stands behind it), the value of
 * its API Gateway API key (not a credential here, but `show` keeps it out of sight too; its id,
 * `usageKeyId`, is listed), the authorizer's use stamp (a busy key would fill the trail), and
 * who-and-when (the entry says it).
 */
const UNAUDITED = new Set(['keyHash', 'usageKey', 'lastUsedAt', 'changedBy', 'changedAt']);

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

/** An attribute as the line shows it (AuditValue), comparable by its JSON text. */
const auditValue = (attribute: StreamAttributeValue | undefined): AuditValue => {
  if (attribute === undefined) return null;
  if (attribute.S !== undefined) return attribute.S;
  if (attribute.SS !== undefined) return [...attribute.SS].sort((a, b) => a.localeCompare(b));
  return plain(attribute);
};

/** The scopes an image grants, as the authorizer decides them; none without an item. */
const grantsOf = (item: Item | undefined): Scope[] => (item === undefined ? [] : grantedScopes(item.scopes));

const changesBetween = (
  [rawBefore, before]: [RawImage | undefined, Item | undefined],
  [rawAfter, after]: [RawImage | undefined, Item | undefined],
): Record<string, AttributeChange> => {
  const changes: Record<string, AttributeChange> = {};
  const names = [...new Set([...Object.keys(rawBefore ?? {}), ...Object.keys(rawAfter ?? {})])].filter((name) => !UNAUDITED.has(name));
  for (const name of names) {
    const from = auditValue(rawBefore?.[name]);
    const to = auditValue(rawAfter?.[name]);
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[name] = { from, to };
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
const declaredBy = (before: Item, after: Item, streamAt: Date | undefined): { by: string; at: string } | undefined => {
  const changedAt = text(after.changedAt);
  const changedBy = text(after.changedBy);
  if (changedAt === undefined || changedBy === undefined || changedAt === text(before.changedAt) || streamAt === undefined)
    return undefined;
  const declared = Date.parse(changedAt);
  return Math.abs(declared - streamAt.getTime()) <= DECLARED_TIME_TOLERANCE_MS ? { by: changedBy, at: changedAt } : undefined;
};

/**
 * The audit entry of one stream record of the keys table (StreamViewType NEW_AND_OLD_IMAGES), or
 * undefined when the write changed nothing audited (the authorizer's `lastUsedAt`).
 *
 * `by` is the new image's `changedBy` when this write changed `changedAt` to within
 * DECLARED_TIME_TOLERANCE_MS of the stream's time: the key tool and the expiry sweep set both on
 * each change. A write that leaves `changedAt` as it was is someone else's (an edit in the
 * console), and is "unknown", even though the item still names the last known changer; so is a
 * copied item, whose `changedAt` is the original's. `at` is then the stream's own time.
 */
export const auditEntryOf = (record: DynamoDBRecord, now = new Date()): KeyAuditEntry | undefined => {
  const rawBefore = record.dynamodb?.OldImage;
  const rawAfter = record.dynamodb?.NewImage;
  const changes = changesBetween([rawBefore, itemOf(rawBefore)], [rawAfter, itemOf(rawAfter)]);
  const before = itemOf(rawBefore) ?? {};
  const after = itemOf(rawAfter) ?? {};
  const recorded = streamTime(record);

  let action: AuditAction;
  switch (record.eventName) {
    case 'INSERT':
      action = text(after.replaces) === undefined ? 'created' : 'rolled';
      break;
    case 'REMOVE':
      action = 'deleted';
      break;
    case 'MODIFY':
      if (Object.keys(changes).length === 0) return undefined;
      action = modifyAction(changes, before, after, recorded ?? now);
      break;
    default:
      return undefined;
  }

  const streamAt = (recorded ?? now).toISOString();
  const declared = record.eventName === 'REMOVE' ? undefined : declaredBy(before, after, recorded);
  const item = record.eventName === 'REMOVE' ? before : after;
  const keyHash = text(item.keyHash) ?? text(before.keyHash) ?? '';
  const sequenceNumber = sequenceNumberOf(record);
  return {
    at: declared?.at ?? streamAt,
    keyId: text(item.keyId) ?? keyIdOf(keyHash),
    name: text(item.name) ?? text(before.name) ?? '',
    action,
    by: declared?.by ?? UNKNOWN_ACTOR,
    changes,
    streamAt,
    eventId: record.eventID ?? sequenceNumber,
    sequenceNumber,
  };
};
