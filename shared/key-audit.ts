/**
 * The audit trail of API keys: what one change to the keys table means, as one JSON line. The
 * keys table's DynamoDB stream (new and old images) gives every write; `auditEntryOf` turns one
 * stream record into at most one entry: who changed which key, how, when, and each attribute's
 * value before and after. Never the key (it is not stored) and never its hash: only its id.
 */
import type { AttributeValue as StreamAttributeValue, DynamoDBRecord } from 'aws-lambda';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { NumberValueImpl, unmarshall } from '@aws-sdk/util-dynamodb';
import { keyIdOf } from './api-keys';
import { PROJECT_NAME } from './project';

/** What a change did to a key, by the first that applies in this order (see `actionOf`). */
export const AUDIT_ACTIONS = [
  'created',
  'rolled',
  'revoked',
  'expired',
  'scopes_changed',
  'expiry_set',
  'expiry_removed',
  'renamed',
  'changed',
  'deleted',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** An attribute's value as the audit line shows it: a String Set as a sorted list, absent as null. */
export type AuditValue = string | number | boolean | null | readonly AuditValue[] | { readonly [name: string]: AuditValue };

export interface AttributeChange {
  readonly from: AuditValue;
  readonly to: AuditValue;
}

export interface KeyAuditEntry {
  /** When the change was made (ISO 8601). */
  readonly at: string;
  readonly keyId: string;
  readonly name: string;
  readonly action: AuditAction;
  /** The `changedBy` the write recorded (an ARN, `local:<user>`, `system:key-expiry`), or "unknown" (the console). */
  readonly by: string;
  /** Each attribute the change touched, but the ones below. */
  readonly changes: Readonly<Record<string, AttributeChange>>;
}

/** Who an entry names when the write did not say: an edit in the console, or any other writer. */
export const UNKNOWN_ACTOR = 'unknown';

/**
 * Attributes never listed in `changes`: the hash (a key's secret stands behind it), the
 * authorizer's use stamp (a busy key would fill the trail), and who-and-when (the entry says it).
 */
const UNAUDITED = new Set(['keyHash', 'lastUsedAt', 'changedBy', 'changedAt']);

/** The audit log group of a keys table: the key-audit function writes it, `npm run keys -- audit` reads it. */
export const auditLogGroupName = (keysTableName: string): string => `/${PROJECT_NAME}/key-audit/${keysTableName}`;

type Item = Record<string, unknown>;

/** A stream image as plain values. The aws-lambda and SDK attribute-value types are the same JSON shape. */
const imageOf = (image: Record<string, StreamAttributeValue> | undefined): Item | undefined =>
  image && unmarshall(image as Record<string, AttributeValue>, { wrapNumbers: true });

/** A value as JSON can carry it, comparable by its JSON text. */
const auditValue = (value: unknown): AuditValue => {
  if (value === undefined || value === null) return null;
  if (value instanceof NumberValueImpl) return value.toString();
  if (value instanceof Set) return [...value].map(auditValue).sort((a, b) => String(a).localeCompare(String(b)));
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(auditValue);
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, auditValue(inner)]));
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return String(value);
};

const changesBetween = (before: Item, after: Item): Record<string, AttributeChange> => {
  const changes: Record<string, AttributeChange> = {};
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((name) => !UNAUDITED.has(name)).sort();
  for (const name of names) {
    const from = auditValue(before[name]);
    const to = auditValue(after[name]);
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[name] = { from, to };
  }
  return changes;
};

/** A MODIFY's action: the most telling of the attributes it changed. */
const modifyAction = (changes: Record<string, AttributeChange>): AuditAction => {
  const set = (name: string) => changes[name] !== undefined && changes[name].to !== null;
  if (set('revokedAt') && changes.revokedAt?.from === null) return 'revoked';
  if (set('expiredAt')) return 'expired';
  if (changes.scopes) return 'scopes_changed';
  if (changes.expiresAt) return changes.expiresAt.to === null ? 'expiry_removed' : 'expiry_set';
  if (changes.name) return 'renamed';
  return 'changed';
};

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** ApproximateCreationDateTime is in epoch seconds (as the stream record documents it). */
const streamTime = (record: DynamoDBRecord, now: Date): string => {
  const seconds = record.dynamodb?.ApproximateCreationDateTime;
  return (typeof seconds === 'number' && Number.isFinite(seconds) ? new Date(seconds * 1000) : now).toISOString();
};

/**
 * The audit entry of one stream record of the keys table (StreamViewType NEW_AND_OLD_IMAGES), or
 * undefined when the write changed nothing audited (the authorizer's `lastUsedAt`).
 *
 * `by` is the new image's `changedBy` when this write changed `changedAt`: the key tool and the
 * expiry sweep set both on each change. A write that leaves `changedAt` as it was is someone
 * else's (an edit in the console), and is "unknown", even though the item still names the last
 * known changer. `at` is then the stream's own time of the change.
 */
export const auditEntryOf = (record: DynamoDBRecord, now = new Date()): KeyAuditEntry | undefined => {
  const before = imageOf(record.dynamodb?.OldImage) ?? {};
  const after = imageOf(record.dynamodb?.NewImage) ?? {};
  const changes = changesBetween(before, after);

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
      action = modifyAction(changes);
      break;
    default:
      return undefined;
  }

  const changedAt = text(after.changedAt);
  const changedBy = text(after.changedBy);
  const known = record.eventName !== 'REMOVE' && changedAt !== undefined && changedBy !== undefined && changedAt !== text(before.changedAt);
  const item = record.eventName === 'REMOVE' ? before : after;
  const keyHash = text(item.keyHash) ?? text(before.keyHash) ?? '';
  return {
    at: known ? changedAt : streamTime(record, now),
    keyId: text(item.keyId) ?? keyIdOf(keyHash),
    name: text(item.name) ?? text(before.name) ?? '',
    action,
    by: known ? changedBy : UNKNOWN_ACTOR,
    changes,
  };
};
