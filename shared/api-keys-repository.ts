/**
 * The API-keys table. One item per key, found by the key's SHA-256 hash; every attribute is a
 * plain type an operator can read and edit in the DynamoDB console:
 *
 * - `keyHash` (S, the partition key), `keyId` (S, the hash's first 12 digits), `name` (S, a
 *   KeyName: shared/key-names.ts);
 * - `scopes` (SS): what the key may do; an item without it (deleted by hand) grants nothing;
 * - `createdAt`, `expiresAt`, `revokedAt` (S, ISO 8601 UTC): a key is refused from its `expiresAt`
 *   on, and once it has any `revokedAt`;
 * - `replaces` / `replacedBy` (S, key ids): the two ends of a roll; `replacesKeyHash` /
 *   `replacedByKeyHash` (S): the same two ends by their hashes, so that the keys of a roll, which
 *   share a usage key, are read by their item's key, strongly consistent, never found by a scan;
 * - `changedBy`, `changedAt` (S): who made the latest change through the key tool, and when; a
 *   change that leaves `changedAt` as it was was made by someone else (the console);
 * - `changedInRegion` (S): the region that change was written in (the repository's `region`): in a
 *   global table every replica's stream sees every write, and the audit trail records a change in
 *   the region that made it only (shared/key-audit.ts, logsChangeHere);
 * - `expiredAt` (S): the `expiresAt` the expiry sweep has recorded as reached;
 * - `plan` (S): the usage plan the key is metered on;
 * - `usageKeyId`, `usageKey` (S): the key's own API Gateway API key (its id, and its value, which
 *   the authorizer returns as `usageIdentifierKey`): a random value, never the bearer key;
 * - `regionUsageKeyIds` (M, region -> S): in a stage of several regions, the ids of the API keys
 *   of the same value in its other regions (API Gateway's API keys and usage plans are regional),
 *   `usageKeyId` being the home region's; absent in a stage of one region;
 * - `usageKeyBinding` (S): what ties that usage key, in every region, to this key (shared/plan-policy.ts);
 * - `expiryQueue`, `expiryDueAt` (S): the key's place in the expiry index (shared/tables.ts) while
 *   its expiry is yet to be marked: written with `expiresAt` by the key tool, removed by the sweep
 *   once marked, and by a revoke. An expiry the console gives a key that had none is not in it:
 *   the authorizer refuses the key from then all the same, but the sweep does not mark it.
 * - `usageKeyRelease` (S): the key's place in the usage-key release index (shared/tables.ts):
 *   written by a revoke and by the sweep's expiry mark, removed once its usage key is deleted or
 *   found still in use by another live key of its rolls;
 * - `usageKeyDeletedAt` (S): when its usage key was deleted, no live key using it any more (API
 *   Gateway holds at most 10,000 API keys per account and region): the record stays.
 *
 * Every key is created with its scopes, a plan and a usage key of its own; the authorizer refuses
 * an item without its plan or usage key, or whose usage key was not written for it (meteringOf).
 *
 * A key's last use, `lastUsedAt` (S, ISO 8601 UTC), is no attribute of its item: it is the item of
 * the key's hash in the last-use table (shared/tables.ts apiKeyLastUseTable), the one table the
 * authorizer writes, so that no write of the authorizer's can touch a key's item (in a global
 * table, undo a revoke made in another region). The key tool reads the two together (findById,
 * list); a `lastUsedAt` edited onto a key's item in the console is not its last use, and is not read.
 *
 * The authorizer reads the keys table; the key tool, the local server and the expiry sweep write
 * it. An item edited in the console may hold other types (a Number, NULL, a
 * Boolean) where a text is documented: reading one must not break the tools for every other key,
 * and a key with one fails closed (keyState).
 */
import {
  GetCommand,
  paginateQuery,
  paginateScan,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
} from '@aws-sdk/lib-dynamodb';
import { dynamoDBOptions, tableNames } from './config';
import {
  callDatabase,
  cancellationReasons,
  classifyCancellation,
  createDocumentClient,
  DatabaseUnavailable,
  isConditionFailure,
} from './dynamodb';
import { hashApiKey, isKeyId, keyIdOf } from './api-keys';
import { apiKeysExpiryIndex, apiKeysIdIndex, apiKeysUsageKeyReleaseIndex, EXPIRY_QUEUE, USAGE_KEY_RELEASE_QUEUE } from './tables';
import { parseInstant } from './instants';
import { keyReads, recordOf, type KeyTableNames } from './key-reads';
import { checkKeyName } from './key-names';
import { keyState, type KeyState } from './key-state';
import { DEFAULT_PLAN, meteringOf, usageKeyBinding, type RegionUsageKeyIds } from './plan-policy';
import { grantedScopes, SCOPES, type Scope } from './scopes';

export interface ApiKeyRecord {
  readonly keyHash: string;
  readonly keyId: string;
  readonly name: string;
  /** The scopes the key grants (none for an item without a `scopes` attribute). */
  readonly scopes: readonly Scope[];
  readonly createdAt: string;
  readonly expiresAt?: string;
  readonly revokedAt?: string;
  /** When the key was last used, as the last-use table holds it (read by findById and list, not by find). */
  readonly lastUsedAt?: string;
  /** The id of the key this one was rolled from. */
  readonly replaces?: string;
  /** The id of the key this one was rolled to. */
  readonly replacedBy?: string;
  /** The hash of the key this one was rolled from: its item's key. */
  readonly replacesKeyHash?: string;
  /** The hash of the key this one was rolled to: its item's key. */
  readonly replacedByKeyHash?: string;
  readonly changedBy?: string;
  readonly changedAt?: string;
  /** The region the latest declared change was written in. */
  readonly changedInRegion?: string;
  readonly expiredAt?: string;
  /** The usage plan the key is on. Written at creation; absent only on an item changed by hand. */
  readonly plan?: string;
  readonly usageKeyId?: string;
  readonly usageKey?: string;
  /** Its ids in the stage's other regions, by region: none in a stage of one region. */
  readonly regionUsageKeyIds?: RegionUsageKeyIds;
  readonly usageKeyBinding?: string;
  /** When its usage key was deleted, as no live key used it any more. */
  readonly usageKeyDeletedAt?: string;
}

/** A key's own API Gateway API key: what meters it on its plan. */
export interface UsageKey {
  /** API Gateway's id of the API key (locally, an id of the local gateway's own). */
  readonly usageKeyId: string;
  /** The API key's value: what the authorizer returns as `usageIdentifierKey`. */
  readonly usageKey: string;
  /**
   * In a stage of several regions, the ids of the API keys of the same value in its other regions,
   * by region (`usageKeyId` is the home region's); none in a stage of one region.
   */
  readonly regionUsageKeyIds?: RegionUsageKeyIds;
}

export { LAST_USE_RESOLUTION_MS } from './key-state';

export { LAST_USE_DEADLINE_MS, type KeyTableNames } from './key-reads';

/** Who makes a change, as `changedBy` records it: an AWS identity's ARN, or `local:<user>`. */
export type Actor = string;

export interface RegisterOptions {
  /** By default all of them; at least one, as a String Set cannot be empty. */
  readonly scopes?: readonly Scope[];
  /** ISO 8601; none by default. */
  readonly expiresAt?: string;
  /** The usage plan; `default` by default. */
  readonly plan?: string;
  /** The key's own API key in that plan. */
  readonly usage: UsageKey;
  readonly changedBy: Actor;
}

export interface RollOptions {
  /** How long the old key keeps working, in milliseconds: 0 ends it now. An earlier expiry it has stays. */
  readonly graceMs: number;
  /** The new key's expiry (ISO 8601); none by default. */
  readonly expiresAt?: string;
  readonly changedBy: Actor;
  readonly now?: Date;
}

export interface RolledKeys {
  /** The old key, with the expiry the roll gave it. */
  readonly previous: ApiKeyRecord;
  readonly next: ApiKeyRecord;
}

/**
 * What stands in the way of a change: no such key; one revoked, expired or rolled already; one whose
 * stored scopes grant nothing (a new key needs one); one whose item cannot be metered (meteringOf:
 * its successor would not be either); or one that kept changing meanwhile.
 */
export type KeyStateRefusal = Exclude<KeyState, 'active'> | 'rolled' | 'missing' | 'unscoped' | 'unmetered' | 'changing';

const REFUSALS: Readonly<Record<KeyStateRefusal, (keyId: string) => string>> = {
  missing: (keyId) => `No key has the id ${keyId}.`,
  revoked: (keyId) => `Key ${keyId} is revoked.`,
  expired: (keyId) => `Key ${keyId} is expired.`,
  rolled: (keyId) => `Key ${keyId} is rolled.`,
  unscoped: (keyId) => `Key ${keyId} has no scope this API knows in its stored scopes.`,
  unmetered: (keyId) => `Key ${keyId} has no plan, or no usage key of its own, in its item.`,
  changing: (keyId) => `Key ${keyId} kept changing meanwhile.`,
};

/** A change the key's state does not allow. */
export class KeyStateError extends Error {
  override readonly name = 'KeyStateError';

  constructor(
    readonly keyId: string,
    readonly state: KeyStateRefusal,
  ) {
    super(REFUSALS[state](keyId));
  }
}

/**
 * A write whose answer was lost (the connection dropped after DynamoDB took it), and whose item
 * could not be read again to learn whether it landed: the message says which keys to look at.
 */
export class WriteOutcomeUnknown extends Error {
  override readonly name = 'WriteOutcomeUnknown';
}

/** A revocation, and whether this call wrote it (false: the key was revoked before). */
export type RevokedKey = ApiKeyRecord & { readonly revokedNow: boolean };

/** A roll chain's revocation: the key named, and the other keys of its chain this call revoked, oldest first. */
export interface RevokedChain {
  readonly named: RevokedKey;
  readonly others: readonly RevokedKey[];
}

/** The most keys one revocation of a roll chain writes: DynamoDB's TransactWriteItems takes 100 actions. */
export const MAX_CHAIN_REVOKE = 100;

/** Expired keys the sweep could not mark; the others were marked. Names the keys and the errors' kinds only. */
export class KeysNotMarked extends Error {
  override readonly name = 'KeysNotMarked';

  constructor(
    readonly failures: ReadonlyArray<{ readonly keyId: string; readonly reason: string }>,
    readonly marked: readonly ApiKeyRecord[],
  ) {
    super(`${failures.length} expired key(s) not marked: ${failures.map(({ keyId, reason }) => `${keyId} (${reason})`).join(', ')}.`);
  }
}

/** The kind of a failure, never its message: an SDK message may quote the table or the item's key. */
const failureKind = (error: unknown): string =>
  error instanceof Error ? ((error as Error & { reason?: unknown }).reason?.toString() ?? error.name) : typeof error;

/**
 * Whether a key can be rolled: it must be active, not marked expired by the sweep at its current
 * expiry (the sweep's clock may be ahead of this one), and not rolled already (its successor is the
 * one to roll).
 */
const rollState = (record: ApiKeyRecord, now: Date): KeyState | 'rolled' => {
  const state = keyState(record, now);
  if (state === 'active' && record.expiresAt !== undefined && record.expiredAt === record.expiresAt) return 'expired';
  return state === 'active' && record.replacedBy !== undefined ? 'rolled' : state;
};

/**
 * A condition that an attribute still holds the value read (absent when it was read absent), as
 * stored: a value of another type than documented (a console edit) is compared as it is.
 */
const unchangedSince = (attribute: 'expiresAt' | 'plan' | 'usageKeyId' | 'usageKey' | 'usageKeyBinding', value: unknown) => {
  const names = { [`#${attribute}`]: attribute };
  return value === undefined
    ? { condition: `attribute_not_exists(#${attribute})`, names, values: {} }
    : { condition: `#${attribute} = :${attribute}AsRead`, names, values: { [`:${attribute}AsRead`]: value } };
};

/**
 * The conditions that a key read active is still unexpired when the roll writes, at `writtenAt`:
 * the expiry sweep has not marked its expiry (`expiredAt`, on the sweep's clock), and, its expiry
 * stored as the key tool writes one (ISO 8601 in UTC, whose text sorts as time does), that expiry
 * is after `writtenAt`. Between the roll's read and its write the key may expire and the sweep
 * release its usage key (deleted, no live key of its rolls using it yet): the successor would hold
 * an API key that is gone. An expiry the console wrote in another form is held to the sweep's mark only.
 */
const unexpiredAtWrite = (expiresAt: unknown, writtenAt: Date) => {
  if (expiresAt === undefined) return [];
  const names = { '#expiredAt': 'expiredAt' };
  const notMarked = {
    condition: '(attribute_not_exists(#expiredAt) OR #expiredAt <> :expiryAsRead)',
    names,
    values: { ':expiryAsRead': expiresAt },
  };
  const instant = parseInstant(expiresAt);
  const inUtc = instant !== undefined && instant.toISOString() === expiresAt;
  return inUtc
    ? [
        notMarked,
        { condition: '#expiresAt > :writtenAt', names: { '#expiresAt': 'expiresAt' }, values: { ':writtenAt': writtenAt.toISOString() } },
      ]
    : [notMarked];
};

/** Attempts at a roll that meets concurrent changes to the same key. */
const MAX_ROLL_ATTEMPTS = 3;

export interface ApiKeysRepository {
  /**
   * Stores a key's hash under a name. Registering a key that exists leaves it as it is. Throws
   * InvalidKeyName, writing nothing, for a name KeyName refuses.
   */
  register(key: string, name: string, options: RegisterOptions): Promise<ApiKeyRecord>;
  /** The key's record, whatever its state (keyState tells it): its item alone, without its last use (lastUseOf). */
  find(key: string): Promise<ApiKeyRecord | undefined>;
  /** The key's record (as find's) when it exists and is active at `now` (neither revoked nor expired). */
  findActive(key: string, now?: Date): Promise<ApiKeyRecord | undefined>;
  /**
   * The record with this id, whatever its state, read strongly consistent; with its last use when
   * asked (to show it): the commands that change a key need the key's item alone.
   */
  findById(keyId: string, options?: { readonly withLastUse?: boolean }): Promise<ApiKeyRecord | undefined>;
  /** Every key, with its last use. */
  list(): Promise<ApiKeyRecord[]>;
  /** Every key's item, without its last use: what counting keys needs (the keys table alone). */
  listItems(): Promise<ApiKeyRecord[]>;
  /**
   * The key's last use as the last-use table holds it: undefined when none is recorded. The
   * authorizer's read (shared/key-reads.ts): eventually consistent, one attempt within LAST_USE_DEADLINE_MS, as the write.
   */
  lastUseOf(key: string): Promise<ApiKeyRecord['lastUsedAt']>;
  /**
   * Records that the key was used at `now`, unless its `lastUsedAt` as just read (findById,
   * lastUseOf) is less than an hour old (one in the future, a typo or a skewed clock, is stale).
   * Writes the last-use table only, never the key's item. The update is conditional on that value,
   * so of concurrent callers one writes. One attempt, within LAST_USE_DEADLINE_MS. Returns whether it wrote.
   */
  recordUse(record: ApiKeyRecord, now?: Date): Promise<boolean>;
  /**
   * Revokes the key with this id; undefined when there is no such key. Revoking twice keeps the
   * first time (and `revokedNow` is false).
   */
  revoke(keyId: string, changedBy: Actor): Promise<RevokedKey | undefined>;
  /**
   * Revokes the key with this id and every key of its roll chain (linked by `replaces` and
   * `replacedBy`, both ways) that still works, in one transaction: all of them, or none. Each is
   * revoked on the condition that it is not revoked yet and not rolled meanwhile (a roll that
   * lengthened the chain): otherwise the chain is read again and revoked as it is then, a few
   * times. Keys of the chain that have ended (revoked, expired) are left as they are. Undefined
   * when there is no such key.
   */
  revokeRollChain(keyId: string, changedBy: Actor): Promise<RevokedChain | undefined>;
  /** Revokes every active key of this name but the one with the id `keep`; returns the ids revoked. */
  revokeOthersNamed(name: string, keep: string, changedBy: Actor): Promise<string[]>;
  /**
   * Replaces an active key by `newKey`, in one transaction: the new key gets the old one's name,
   * scopes, plan and usage key, and the old one expires `graceMs` from now. The transaction holds
   * only if the old key is still as read; otherwise it is read again and rolled as it is then, a
   * few times. Throws KeyStateError otherwise, and InvalidKeyName for a stored name KeyName refuses
   * (one the console wrote), writing nothing.
   */
  roll(keyId: string, newKey: string, options: RollOptions): Promise<RolledKeys>;
  /** Puts the key on a plan; it keeps its API key (the caller moves it). Throws KeyStateError for a missing or revoked key. */
  setPlan(keyId: string, plan: string, options: { readonly changedBy: Actor }): Promise<ApiKeyRecord>;
  /**
   * The other keys, not revoked nor expired, metered by the same API key: those of its rolls (the
   * two ends of a roll in its grace), found through `replacesKeyHash` and `replacedByKeyHash` and
   * read strongly consistent, so a successor written a moment ago is among them.
   */
  othersSharingUsageKey(record: ApiKeyRecord, now?: Date): Promise<ApiKeyRecord[]>;
  /**
   * Marks each key whose expiry has passed by `now` with `expiredAt` (once per expiry, and never a
   * key read as revoked), so that the audit trail records it. Reads the keys the expiry index has as due,
   * and no other. Returns the records marked. A key it cannot mark does not stop the others: once
   * all are tried, it throws KeysNotMarked naming those.
   */
  markExpired(now: Date, changedBy: Actor): Promise<ApiKeyRecord[]>;
  /** The keys the usage-key release index holds (revoked or expired, their usage key not deleted yet), each read strongly consistent. */
  usageKeysToRelease(): Promise<ApiKeyRecord[]>;
  /**
   * Records that the key's usage key was deleted (`usageKeyDeletedAt`, an audited change) and takes
   * it out of the release index; once, on the condition that the key is still there. The release
   * read the item strongly consistent just before (the usage key it deleted is the one it read); a
   * console edit of `usageKeyId` in the milliseconds between is not told apart.
   */
  recordUsageKeyDeleted(record: ApiKeyRecord, changedBy: Actor, now?: Date): Promise<void>;
  /** Takes the key out of the release index, its usage key kept: another live key uses it, or it has none. */
  keepUsageKey(record: ApiKeyRecord): Promise<void>;
}

export interface ApiKeysRepositoryOptions {
  readonly client?: DynamoDBDocumentClient;
  /** @default the configured names (shared/config.ts) */
  readonly tables?: KeyTableNames;
  /** How long the authorizer's `lastUsedAt` read, and its write, may each take. @default LAST_USE_DEADLINE_MS */
  readonly lastUseDeadlineMs?: number;
  /**
   * The region the writes are made in, which each change stamps as `changedInRegion`: by default
   * the client's (a function's AWS_REGION, the key tool's target region); locally, the region the
   * local server stands for.
   */
  readonly region?: string;
}

/** The attributes that place a key in the expiry index: no part of its record. */
interface ExpiryIndexAttributes {
  readonly expiryQueue?: unknown;
  readonly expiryDueAt?: unknown;
  readonly usageKeyRelease?: unknown;
}

/** A key the expiry index has as due: its record, and its place in the index as read. */
interface DueKey {
  readonly record: ApiKeyRecord;
  readonly dueAsRead: unknown;
}

/** An item as stored: `scopes` a String Set, read back as a Set (or anything else a console edit left). */
type ApiKeyItem = Omit<ApiKeyRecord, 'scopes'> & { readonly scopes?: unknown } & ExpiryIndexAttributes;

/** The expiry index's attributes of a key expiring at `expiresAt`: its instant in UTC, whose text sorts as time does. */
const expiryIndexOf = (expiresAt: unknown) => {
  const due = parseInstant(expiresAt);
  return due === undefined ? {} : { expiryQueue: EXPIRY_QUEUE, expiryDueAt: due.toISOString() };
};

/** The record as an item: scopes as a String Set, and in the expiry index when it has an expiry. */
const itemOf = (record: ApiKeyRecord) => ({ ...record, scopes: new Set(record.scopes), ...expiryIndexOf(record.expiresAt) });

/** A record with the last use read for it (none recorded: without one). */
const withLastUse = ({ lastUsedAt: _asItWas, ...record }: ApiKeyRecord, lastUsedAt: ApiKeyRecord['lastUsedAt']): ApiKeyRecord =>
  lastUsedAt === undefined ? record : { ...record, lastUsedAt };

/** The update that takes a key out of the expiry index. */
const LEAVE_EXPIRY_INDEX = 'REMOVE expiryQueue, expiryDueAt';

/** What puts a key in the usage-key release index: a SET clause, and its value. */
const ENTER_RELEASE_INDEX = {
  set: `, ${apiKeysUsageKeyReleaseIndex.partitionKey.name} = :release`,
  values: { ':release': USAGE_KEY_RELEASE_QUEUE },
};

/** What a stored hash must look like to be read as an item's key: a link edited in the console may hold anything. */
const KEY_HASH = /^[0-9a-f]{64}$/;
const isKeyHash = (value: unknown): value is string => typeof value === 'string' && KEY_HASH.test(value);

/** What a declared change writes besides itself: who, when, and in which region (none known: no stamp). */
const changeValues = (changedBy: Actor, at: string, region: string | undefined) => ({
  set: `, changedBy = :changedBy, changedAt = :changedAt${region === undefined ? '' : ', changedInRegion = :changedInRegion'}`,
  values: { ':changedBy': changedBy, ':changedAt': at, ...(region === undefined ? {} : { ':changedInRegion': region }) },
});

/** The region a client sends its requests to, or undefined when it cannot say (a stand-in client). */
const regionOfClient = async (client: DynamoDBDocumentClient): Promise<string | undefined> => {
  const region: unknown = (client as { config?: { region?: unknown } }).config?.region;
  const resolved: unknown = typeof region === 'function' ? await (region as () => Promise<unknown>)() : region;
  return typeof resolved === 'string' && resolved !== '' ? resolved : undefined;
};

/** Orders records by creation; a `createdAt` of another type (a console edit) sorts by its text, an absent one first. */
const byCreation = (a: ApiKeyRecord, b: ApiKeyRecord): number => String(a.createdAt ?? '').localeCompare(String(b.createdAt ?? ''));

export const apiKeysRepository = ({
  client,
  tables = tableNames(),
  lastUseDeadlineMs,
  region,
}: ApiKeysRepositoryOptions = {}): ApiKeysRepository => {
  const { apiKeys: tableName, apiKeyLastUse: lastUseTableName } = tables;
  const db = client ?? createDocumentClient(dynamoDBOptions());
  // The authorizer's reads and write, on the same client.
  const reads = keyReads({ client: db, tables, ...(lastUseDeadlineMs === undefined ? {} : { lastUseDeadlineMs }) });
  /** The region each change stamps, resolved once. */
  let writeRegion: Promise<string | undefined> | undefined;
  const regionOfWrites = () => (writeRegion ??= region === undefined ? regionOfClient(db) : Promise.resolve(region));
  /** A change by `changedBy` at `at`, in this repository's region. */
  const changeBy = async (changedBy: Actor, at: string) => changeValues(changedBy, at, await regionOfWrites());

  /** The item of a hash; strongly consistent for the key tool's reads, which must see the writes just made. */
  const get = async (keyHash: string, { consistent = false } = {}): Promise<ApiKeyRecord | undefined> => {
    const { Item } = await callDatabase(() =>
      db.send(new GetCommand({ TableName: tableName, Key: { keyHash }, ...(consistent ? { ConsistentRead: true } : {}) })),
    );
    return Item && recordOf(Item as ApiKeyItem);
  };

  /** The last use of a hash as the key tool reads it, strongly consistent. */
  const latestLastUseOf = async (keyHash: string): Promise<ApiKeyRecord['lastUsedAt']> => {
    const { Item } = await callDatabase(() =>
      db.send(new GetCommand({ TableName: lastUseTableName, Key: { keyHash }, ConsistentRead: true })),
    );
    return Item?.lastUsedAt as ApiKeyRecord['lastUsedAt'];
  };

  const getLatest = (keyHash: string) => get(keyHash, { consistent: true });

  /** The key tool's read of a key to show: its item and its last use, at once, strongly consistent. */
  const getLatestWithLastUse = async (keyHash: string): Promise<ApiKeyRecord | undefined> => {
    const [record, lastUsedAt] = await Promise.all([getLatest(keyHash), latestLastUseOf(keyHash)]);
    return record && withLastUse(record, lastUsedAt);
  };

  const newRecord = (
    key: string,
    name: string,
    options: RegisterOptions,
    now: Date,
    changedInRegion: string | undefined,
    extra: Partial<ApiKeyRecord> = {},
  ): ApiKeyRecord => {
    checkKeyName(name);
    const scopes = options.scopes ?? SCOPES;
    if (scopes.length === 0) throw new Error('A key needs at least one scope.');
    const keyHash = hashApiKey(key);
    const createdAt = now.toISOString();
    const { usageKeyId, usageKey, regionUsageKeyIds } = options.usage;
    return {
      keyHash,
      keyId: keyIdOf(keyHash),
      name,
      scopes: grantedScopes(scopes),
      createdAt,
      ...(options.expiresAt === undefined ? {} : { expiresAt: options.expiresAt }),
      plan: options.plan ?? DEFAULT_PLAN,
      usageKeyId,
      usageKey,
      ...(regionUsageKeyIds === undefined ? {} : { regionUsageKeyIds }),
      usageKeyBinding: usageKeyBinding(keyHash, usageKeyId, usageKey, regionUsageKeyIds),
      changedBy: options.changedBy,
      changedAt: createdAt,
      ...(changedInRegion === undefined ? {} : { changedInRegion }),
      ...extra,
    };
  };

  /**
   * After a write whose answer was lost: the item of `keyHash` as it is now, read strongly
   * consistent, or undefined when the write did not land. The hash is of a key made for this write
   * (random, 256 bits), so an item under it is this write's: the key is the request's token.
   */
  const landedItem = async (keyHash: string, unknown: () => string): Promise<ApiKeyRecord | undefined> => {
    try {
      return await getLatest(keyHash);
    } catch {
      throw new WriteOutcomeUnknown(unknown());
    }
  };

  const register = async (key: string, name: string, options: RegisterOptions): Promise<ApiKeyRecord> => {
    const record = newRecord(key, name, options, new Date(), await regionOfWrites());
    try {
      await callDatabase(() =>
        db.send(new PutCommand({ TableName: tableName, Item: itemOf(record), ConditionExpression: 'attribute_not_exists(keyHash)' })),
      );
      return record;
    } catch (error) {
      if (isConditionFailure(error)) return (await getLatest(record.keyHash)) ?? record;
      if (!(error instanceof DatabaseUnavailable)) throw error;
      // The answer may be lost after the write landed: read it again to know.
      const landed = await landedItem(
        record.keyHash,
        () =>
          `DynamoDB did not answer the write of key ${record.keyId}, nor the read that would tell whether it landed: ` +
          `its key was shown to no one. Revoke it: npm run keys -- revoke ${record.keyId}`,
      );
      if (landed === undefined) throw error;
      return landed;
    }
  };

  const find = (key: string): Promise<ApiKeyRecord | undefined> => get(hashApiKey(key));

  const lastUseOf = reads.lastUseOf;

  const findActive = async (key: string, now = new Date()): Promise<ApiKeyRecord | undefined> => {
    const record = await find(key);
    return record && keyState(record, now) === 'active' ? record : undefined;
  };

  /** Every item of a table, read whole. */
  const scanTable = async (TableName: string, consistent: boolean): Promise<Array<Record<string, unknown>>> => {
    const items: Array<Record<string, unknown>> = [];
    await callDatabase(async () => {
      for await (const page of paginateScan({ client: db }, { TableName, ...(consistent ? { ConsistentRead: true } : {}) })) {
        items.push(...(page.Items ?? []));
      }
    });
    return items;
  };

  /** Every key with its last use: the two tables read whole, at once. */
  const scan = async ({ consistent = false } = {}): Promise<ApiKeyRecord[]> => {
    const [keyItems, lastUseItems] = await Promise.all([scanTable(tableName, consistent), scanTable(lastUseTableName, consistent)]);
    const lastUses = new Map(lastUseItems.map((item) => [item.keyHash, item.lastUsedAt as ApiKeyRecord['lastUsedAt']]));
    return (keyItems as unknown as ApiKeyItem[]).map((item) => withLastUse(recordOf(item), lastUses.get(item.keyHash))).sort(byCreation);
  };

  // An operator's listing shows every key: it reads the table whole.
  const list = (): Promise<ApiKeyRecord[]> => scan();
  const listItems = async (): Promise<ApiKeyRecord[]> =>
    (await scanTable(tableName, false)).map((item) => recordOf(item as unknown as ApiKeyItem)).sort(byCreation);

  /** The hashes the id index has for an id (one, but for a hash-prefix collision), those whose id it is only. */
  const hashesOfId = async (keyId: string): Promise<string[]> => {
    const { Items } = await callDatabase(() =>
      db.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: apiKeysIdIndex.indexName,
          KeyConditionExpression: '#keyId = :keyId',
          ExpressionAttributeNames: { '#keyId': apiKeysIdIndex.partitionKey.name },
          ExpressionAttributeValues: { ':keyId': keyId },
        }),
      ),
    );
    return (Items ?? [])
      .map((item) => item.keyHash as unknown)
      .filter((keyHash) => isKeyHash(keyHash) && keyIdOf(keyHash) === keyId) as string[];
  };

  /**
   * The key of an id: found through the id index, then read by its hash, strongly consistent. An id
   * the index does not have (a key created a moment ago, the index being eventually consistent, or
   * one whose `keyId` the console edited or removed) is looked for in the whole table, strongly
   * consistent: a key that exists is always found, and only an id no key has costs a scan.
   */
  const findById = async (keyId: string, { withLastUse: shown = false } = {}): Promise<ApiKeyRecord | undefined> => {
    // What is not an id is no key's (keyIdOf), and the index would refuse an empty one.
    if (!isKeyId(keyId)) return undefined;
    const read = shown ? getLatestWithLastUse : getLatest;
    for (const keyHash of await hashesOfId(keyId)) {
      const record = await read(keyHash);
      if (record) return record;
    }
    const found = (await scanTable(tableName, true))
      .map((item) => recordOf(item as unknown as ApiKeyItem))
      .find((record) => record.keyId === keyId);
    return found && shown ? getLatestWithLastUse(found.keyHash) : found;
  };

  const recordUse = reads.recordUse;

  const revokeRecord = async (record: ApiKeyRecord, changedBy: Actor): Promise<RevokedKey> => {
    const at = new Date().toISOString();
    const change = await changeBy(changedBy, at);
    let revokedNow = true;
    const { Attributes } = await callDatabase(() =>
      db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { keyHash: record.keyHash },
          // Revoking twice keeps the first time, and the first revoker.
          // A revoked key is never marked expired: it leaves the expiry index. Its usage key is
          // released (deleted unless a live key of its rolls uses it) by the sweep, if not before.
          UpdateExpression: `SET revokedAt = :now${change.set}${ENTER_RELEASE_INDEX.set} ${LEAVE_EXPIRY_INDEX}`,
          ConditionExpression: 'attribute_exists(keyHash) AND attribute_not_exists(revokedAt)',
          ExpressionAttributeValues: { ':now': at, ...change.values, ...ENTER_RELEASE_INDEX.values },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    ).catch(async (error: unknown) => {
      if (!isConditionFailure(error)) throw error;
      revokedNow = false;
      return { Attributes: await getLatest(record.keyHash) };
    });
    return { ...(Attributes ? withLastUse(recordOf(Attributes as ApiKeyItem), record.lastUsedAt) : record), revokedNow };
  };

  const revoke = async (keyId: string, changedBy: Actor): Promise<RevokedKey | undefined> => {
    const record = await findById(keyId);
    return record && revokeRecord(record, changedBy);
  };

  /**
   * The keys one revocation of `record`'s roll chain writes, as read now: the key itself unless it
   * is revoked already, and every other key of its chain that still works at `now`.
   */
  const chainToRevoke = async (record: ApiKeyRecord, now: Date, keyId: string) => {
    const named = record.revokedAt === undefined ? [record] : [];
    const others: ApiKeyRecord[] = [];
    // Counted as the chain is walked: a chain past the limit is refused without reading the rest of it.
    for await (const other of walkRolls(record)) {
      if (keyState(other, now) !== 'active') continue;
      others.push(other);
      if (named.length + others.length > MAX_CHAIN_REVOKE) {
        throw new Error(
          `Key ${keyId}'s roll chain has more than ${MAX_CHAIN_REVOKE} keys that still work, more than one revocation writes: revoke some with --only-this-key first.`,
        );
      }
    }
    others.sort(byCreation);
    return { others, targets: [...named, ...others] };
  };

  /** A key's revocation as one action of a transaction: not revoked yet, and its successor the one read (none: not rolled meanwhile). */
  const revokeAction = (record: ApiKeyRecord, at: string, change: ReturnType<typeof changeValues>) => {
    const successor =
      record.replacedBy === undefined
        ? { condition: 'attribute_not_exists(replacedBy)', values: {} }
        : { condition: 'replacedBy = :successorAsRead', values: { ':successorAsRead': record.replacedBy } };
    return {
      Update: {
        TableName: tableName,
        Key: { keyHash: record.keyHash },
        UpdateExpression: `SET revokedAt = :now${change.set}${ENTER_RELEASE_INDEX.set} ${LEAVE_EXPIRY_INDEX}`,
        ConditionExpression: `attribute_exists(keyHash) AND attribute_not_exists(revokedAt) AND ${successor.condition}`,
        ExpressionAttributeValues: { ':now': at, ...change.values, ...ENTER_RELEASE_INDEX.values, ...successor.values },
      },
    };
  };

  const revokeRollChain = async (keyId: string, changedBy: Actor): Promise<RevokedChain | undefined> => {
    const found = await findById(keyId);
    if (!found) return undefined;
    const region = await regionOfWrites();
    for (let attempt = 1; ; attempt += 1) {
      const now = new Date();
      const at = now.toISOString();
      const change = changeValues(changedBy, at, region);
      const record = (await getLatest(found.keyHash)) ?? found;
      const { others, targets } = await chainToRevoke(record, now, keyId);
      const revokedHere = (revoked: ApiKeyRecord): RevokedKey => ({
        ...revoked,
        revokedAt: at,
        changedBy,
        changedAt: at,
        ...(region === undefined ? {} : { changedInRegion: region }),
        revokedNow: true,
      });
      const result = (): RevokedChain => ({
        named: record.revokedAt === undefined ? revokedHere(record) : { ...record, revokedNow: false },
        others: others.map(revokedHere),
      });
      if (targets.length === 0) return result();
      try {
        await callDatabase(() =>
          db.send(new TransactWriteCommand({ TransactItems: targets.map((target) => revokeAction(target, at, change)) })),
        );
        return result();
      } catch (error) {
        // A lost answer: the revocation is this call's when every key now holds its time.
        if (error instanceof DatabaseUnavailable) {
          const asNow = await Promise.all(targets.map((target) => getLatest(target.keyHash))).catch(() => undefined);
          if (asNow?.every((target) => target?.revokedAt === at)) return result();
        }
        const reasons = cancellationReasons(error);
        const conflict = reasons.some((reason) => reason?.Code === 'TransactionConflict');
        if (!conflict && !reasons.some((reason) => reason?.Code === 'ConditionalCheckFailed')) throw classifyCancellation(error, reasons);
        // Revoked, rolled or changed meanwhile: the chain is read again and revoked as it is now, a few times.
        if (attempt >= MAX_ROLL_ATTEMPTS) throw new KeyStateError(keyId, 'changing');
        if (conflict) await new Promise((resolve) => setTimeout(resolve, 20 * attempt * Math.random()));
      }
    }
  };

  // The local server's start, on its own table: it reads the table whole.
  const revokeOthersNamed = async (name: string, keep: string, changedBy: Actor): Promise<string[]> => {
    const others = (await list()).filter((record) => record.name === name && record.revokedAt === undefined && record.keyId !== keep);
    for (const record of others) await revokeRecord(record, changedBy);
    return others.map((record) => record.keyId);
  };

  /**
   * One attempt at a roll of the key of this hash: the new key and the old key's expiry, in one
   * transaction. `now` is the roll's instant, which its read of the key is judged at; `writtenAt`
   * the clock when the write is made, which the old key must still be unexpired at.
   */
  const rollOnce = async (
    keyId: string,
    keyHash: string,
    newKey: string,
    { graceMs, expiresAt, changedBy, now }: RollOptions & { readonly now: Date },
    writtenAt: () => Date,
  ) => {
    const previous = await getLatest(keyHash);
    if (!previous) throw new KeyStateError(keyId, 'missing');
    const state = rollState(previous, now);
    if (state !== 'active') throw new KeyStateError(keyId, state);
    // Its stored scopes are all unknown ones (a console edit): a new key needs one it can use.
    if (previous.scopes.length === 0) throw new KeyStateError(keyId, 'unscoped');
    // The successor keeps the plan and the API key that meters it, so the quota already used
    // carries over: only those written for the old key, never a usage key it was given by hand.
    const metering = meteringOf(previous);
    if ('refused' in metering) throw new KeyStateError(keyId, 'unmetered');
    const usage = {
      usageKeyId: metering.usageKeyId,
      usageKey: metering.usageIdentifierKey,
      ...(metering.regionUsageKeyIds === undefined ? {} : { regionUsageKeyIds: metering.regionUsageKeyIds }),
    };

    const graceEnd = new Date(now.getTime() + Math.max(0, graceMs));
    // An earlier expiry the old key already has stays: a roll never lengthens a key's life. Compared
    // as instants: the console may write one in another zone, whose text sorts otherwise. (An
    // active key's expiry, when it has one, is an instant: keyState said so.)
    const earlier = parseInstant(previous.expiresAt);
    const end = earlier !== undefined && earlier < graceEnd ? (previous.expiresAt as string) : graceEnd.toISOString();
    // Each end names the other by its hash too: a revoke reads the keys sharing the usage key by them.
    const changedInRegion = await regionOfWrites();
    const next = newRecord(
      newKey,
      previous.name,
      { scopes: previous.scopes, expiresAt, plan: metering.plan, usage, changedBy },
      now,
      changedInRegion,
      { replaces: previous.keyId, replacesKeyHash: previous.keyHash },
    );
    const endsInIndex = expiryIndexOf(end);
    const change = changeValues(changedBy, now.toISOString(), changedInRegion);
    // What the successor copies must be what the old key still has when the roll writes: a
    // set-plan in between would otherwise leave the two keys on different plans.
    const asRead = [
      unchangedSince('expiresAt', previous.expiresAt),
      unchangedSince('plan', previous.plan),
      unchangedSince('usageKeyId', previous.usageKeyId),
      unchangedSince('usageKey', previous.usageKey),
      // Its ids in the other regions, which the binding covers.
      unchangedSince('usageKeyBinding', previous.usageKeyBinding),
      ...unexpiredAtWrite(previous.expiresAt, writtenAt()),
    ];
    await db.send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: tableName, Item: itemOf(next), ConditionExpression: 'attribute_not_exists(keyHash)' } },
          {
            Update: {
              TableName: tableName,
              Key: { keyHash: previous.keyHash },
              UpdateExpression: `SET expiresAt = :end, replacedBy = :next, replacedByKeyHash = :nextHash, expiryQueue = :queue, expiryDueAt = :due${change.set}`,
              // Still as read: not revoked, rolled, given another expiry, plan or usage key meanwhile.
              ConditionExpression: [
                'attribute_exists(keyHash) AND attribute_not_exists(revokedAt) AND attribute_not_exists(replacedBy)',
                ...asRead.map((part) => part.condition),
              ].join(' AND '),
              ExpressionAttributeNames: Object.assign({}, ...asRead.map((part) => part.names)),
              ExpressionAttributeValues: Object.assign(
                {
                  ':end': end,
                  ':next': next.keyId,
                  ':nextHash': next.keyHash,
                  ':queue': endsInIndex.expiryQueue,
                  ':due': endsInIndex.expiryDueAt,
                  ...change.values,
                },
                ...asRead.map((part) => part.values),
              ),
            },
          },
        ],
      }),
    );
    const previousNow: ApiKeyRecord = {
      ...previous,
      expiresAt: end,
      replacedBy: next.keyId,
      replacedByKeyHash: next.keyHash,
      changedBy,
      changedAt: now.toISOString(),
      ...(changedInRegion === undefined ? {} : { changedInRegion }),
    };
    return { previous: previousNow, next };
  };

  /**
   * The roll to `newKey`, when its transaction landed though its answer was lost (or its retry was
   * refused by the change it made itself): both keys as they are now, read strongly consistent.
   */
  const rollLanded = async (previousHash: string, keyId: string, newKey: string): Promise<RolledKeys | undefined> => {
    const nextHash = hashApiKey(newKey);
    const nextId = keyIdOf(nextHash);
    const unknown = () =>
      `DynamoDB did not answer the roll of key ${keyId} to ${nextId}, nor the read that would tell whether it landed: ` +
      `npm run keys -- show ${keyId} tells; if it names ${nextId} as its successor, revoke ${nextId}, whose key was shown to no one, and create a key to replace ${keyId}.`;
    const next = await landedItem(nextHash, unknown);
    const previous = next && (await landedItem(previousHash, unknown));
    return next && previous && { previous, next };
  };

  const roll = async (keyId: string, newKey: string, options: RollOptions): Promise<RolledKeys> => {
    // The roll's instant, before any read: the clock (or the one given) when each write is made.
    const now = options.now ?? new Date();
    const writtenAt = () => options.now ?? new Date();
    const found = await findById(keyId);
    if (!found) throw new KeyStateError(keyId, 'missing');
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await callDatabase(() => rollOnce(keyId, found.keyHash, newKey, { ...options, now }, writtenAt));
      } catch (error) {
        // A lost answer, or a retry refused as the old key is rolled already: by this roll, if its new key exists.
        if (error instanceof DatabaseUnavailable || cancellationReasons(error).length > 0) {
          const landed = await rollLanded(found.keyHash, keyId, newKey);
          if (landed) return landed;
        }
        const reasons = cancellationReasons(error);
        const conflict = reasons.some((reason) => reason?.Code === 'TransactionConflict');
        if (!conflict && !reasons.some((reason) => reason?.Code === 'ConditionalCheckFailed')) throw classifyCancellation(error, reasons);
        if (!conflict) {
          // Changed since it was read: roll it as it is now, or say why not.
          const current = await getLatest(found.keyHash);
          const state = current ? rollState(current, options.now ?? new Date()) : 'missing';
          if (state !== 'active') throw new KeyStateError(keyId, state);
        }
        // Another change to the same key at the same moment: read it again and decide anew, a few times.
        if (attempt >= MAX_ROLL_ATTEMPTS) throw new KeyStateError(keyId, 'changing');
        if (conflict) await new Promise((resolve) => setTimeout(resolve, 20 * attempt * Math.random()));
      }
    }
  };

  /** The keys the expiry index has as due by `now`, as the index holds them (every attribute), each with its due time as read. */
  const dueKeys = async (now: Date): Promise<DueKey[]> => {
    const due: DueKey[] = [];
    const { partitionKey, sortKey } = apiKeysExpiryIndex;
    await callDatabase(async () => {
      const pages = paginateQuery(
        { client: db },
        {
          TableName: tableName,
          IndexName: apiKeysExpiryIndex.indexName,
          KeyConditionExpression: '#queue = :queue AND #due <= :now',
          ExpressionAttributeNames: { '#queue': partitionKey.name, '#due': sortKey.name },
          ExpressionAttributeValues: { ':queue': EXPIRY_QUEUE, ':now': now.toISOString() },
        },
      );
      for await (const page of pages) {
        due.push(...((page.Items ?? []) as ApiKeyItem[]).map((item) => ({ record: recordOf(item), dueAsRead: item.expiryDueAt })));
      }
    });
    return due;
  };

  /**
   * What the sweep writes of a key the index has as due, by what its item says as read (the
   * console may have changed it since): its expiry marked, and the key out of the index; or, its
   * expiry moved later, the index's time moved with it; or, revoked, marked already or without an
   * expiry, the key out of the index only. Each on the condition that the key is still in the
   * index at the time read (the key tool's revoke takes it out, a roll that changes its expiry
   * moves it): a condition reads only what the sweep writes, so its role may name neither
   * expiresAt nor revokedAt (docs/architecture.md, least privilege).
   */
  const sweepWriteOf = ({ record, dueAsRead }: DueKey, now: Date, change: ReturnType<typeof changeValues>) => {
    const state = keyState(record, now);
    const inIndexAsRead = 'expiryDueAt = :dueAsRead';
    const asRead = { ':dueAsRead': dueAsRead };
    if (state === 'revoked' || record.expiresAt === undefined) {
      return { marks: false, update: LEAVE_EXPIRY_INDEX, condition: inIndexAsRead, values: asRead };
    }
    const expiryAsRead = { ...asRead, ':expiresAt': record.expiresAt };
    if (state === 'active') {
      const { expiryDueAt } = expiryIndexOf(record.expiresAt);
      return { marks: false, update: 'SET expiryDueAt = :due', condition: inIndexAsRead, values: { ...asRead, ':due': expiryDueAt } };
    }
    if (record.expiredAt === record.expiresAt) {
      return { marks: false, update: LEAVE_EXPIRY_INDEX, condition: `${inIndexAsRead} AND expiredAt = :expiresAt`, values: expiryAsRead };
    }
    return {
      marks: true,
      update: `SET expiredAt = :expiresAt${change.set}${ENTER_RELEASE_INDEX.set} ${LEAVE_EXPIRY_INDEX}`,
      condition: `${inIndexAsRead} AND (attribute_not_exists(expiredAt) OR expiredAt <> :expiresAt)`,
      values: { ...expiryAsRead, ...change.values, ...ENTER_RELEASE_INDEX.values },
    };
  };

  const markExpired = async (now: Date, changedBy: Actor): Promise<ApiKeyRecord[]> => {
    // An expiresAt of another type (NULL, a Boolean: a console edit) is marked too, by its value as stored.
    const marked: ApiKeyRecord[] = [];
    const failures: Array<{ keyId: string; reason: string }> = [];
    const change = await changeBy(changedBy, now.toISOString());
    for (const due of await dueKeys(now)) {
      const { record } = due;
      const { marks, update, condition, values } = sweepWriteOf(due, now, change);
      try {
        await callDatabase(() =>
          db.send(
            new UpdateCommand({
              TableName: tableName,
              Key: { keyHash: record.keyHash },
              UpdateExpression: update,
              ConditionExpression: condition,
              ExpressionAttributeValues: values,
            }),
          ),
        );
        if (marks) marked.push({ ...record, expiredAt: record.expiresAt });
      } catch (error) {
        // A condition failure: changed meanwhile, the next sweep sees it as it is. Anything else
        // stops this key only: the others are marked all the same.
        if (!isConditionFailure(error)) failures.push({ keyId: record.keyId, reason: failureKind(error) });
      }
    }
    if (failures.length > 0) throw new KeysNotMarked(failures, marked);
    return marked;
  };

  const setPlan = async (keyId: string, plan: string, { changedBy }: { changedBy: Actor }) => {
    const record = await findById(keyId);
    if (!record) throw new KeyStateError(keyId, 'missing');
    if (record.revokedAt !== undefined) throw new KeyStateError(keyId, 'revoked');
    const at = new Date().toISOString();
    const change = await changeBy(changedBy, at);
    try {
      const { Attributes } = await callDatabase(() =>
        db.send(
          new UpdateCommand({
            TableName: tableName,
            Key: { keyHash: record.keyHash },
            UpdateExpression: `SET #plan = :plan${change.set}`,
            ConditionExpression: 'attribute_exists(keyHash) AND attribute_not_exists(revokedAt)',
            ExpressionAttributeNames: { '#plan': 'plan' },
            ExpressionAttributeValues: { ':plan': plan, ...change.values },
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return withLastUse(recordOf(Attributes as ApiKeyItem), record.lastUsedAt);
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const current = await getLatest(record.keyHash);
      throw new KeyStateError(keyId, !current ? 'missing' : current.revokedAt !== undefined ? 'revoked' : 'changing');
    }
  };

  /**
   * The keys of a key's rolls, before and after it, each read by its hash, strongly consistent. A
   * roll only chains them: a key is rolled once, and the keys of a chain share its usage key. A
   * revoked or expired key in between still leads to the next.
   */
  /** The other keys of `record`'s rolls, read one at a time along the chain: back to the first, then on to the newest. */
  async function* walkRolls(record: ApiKeyRecord): AsyncGenerator<ApiKeyRecord> {
    const seen = new Set([record.keyHash]);
    for (const link of ['replacesKeyHash', 'replacedByKeyHash'] as const) {
      for (let keyHash: unknown = record[link]; isKeyHash(keyHash) && !seen.has(keyHash);) {
        seen.add(keyHash);
        const other = await getLatest(keyHash);
        if (!other) break;
        yield other;
        keyHash = other[link];
      }
    }
  }

  const rollsOf = async (record: ApiKeyRecord): Promise<ApiKeyRecord[]> => {
    const found: ApiKeyRecord[] = [];
    for await (const other of walkRolls(record)) found.push(other);
    return found;
  };

  const othersSharingUsageKey = async (record: ApiKeyRecord, now = new Date()) =>
    record.usageKeyId === undefined
      ? []
      : (await rollsOf(record)).filter((other) => other.usageKeyId === record.usageKeyId && keyState(other, now) === 'active');

  const usageKeysToRelease = async (): Promise<ApiKeyRecord[]> => {
    const keyHashes: unknown[] = [];
    await callDatabase(async () => {
      const pages = paginateQuery(
        { client: db },
        {
          TableName: tableName,
          IndexName: apiKeysUsageKeyReleaseIndex.indexName,
          KeyConditionExpression: '#release = :release',
          ExpressionAttributeNames: { '#release': apiKeysUsageKeyReleaseIndex.partitionKey.name },
          ExpressionAttributeValues: { ':release': USAGE_KEY_RELEASE_QUEUE },
        },
      );
      for await (const page of pages) keyHashes.push(...(page.Items ?? []).map((item) => item.keyHash as unknown));
    });
    const records: ApiKeyRecord[] = [];
    // The index is eventually consistent: each item is read as it is now.
    for (const keyHash of keyHashes.filter(isKeyHash)) {
      const record = await getLatest(keyHash);
      if (record) records.push(record);
    }
    return records;
  };

  const recordUsageKeyDeleted = async (record: ApiKeyRecord, changedBy: Actor, now = new Date()): Promise<void> => {
    const change = await changeBy(changedBy, now.toISOString());
    await callDatabase(() =>
      db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { keyHash: record.keyHash },
          UpdateExpression: `SET usageKeyDeletedAt = :now${change.set} REMOVE #release`,
          // Reads only what the sweep writes (its role names no other attribute, IAM's
          // dynamodb:Attributes counting a condition's too): not `usageKeyId`, which it may then not write.
          ConditionExpression: 'attribute_exists(keyHash) AND attribute_not_exists(usageKeyDeletedAt)',
          ExpressionAttributeNames: { '#release': apiKeysUsageKeyReleaseIndex.partitionKey.name },
          ExpressionAttributeValues: { ':now': now.toISOString(), ...change.values },
        }),
      ),
    ).catch((error: unknown) => {
      // Recorded already (a sweep and a revoke at once), or the item deleted by hand: nothing to record.
      if (!isConditionFailure(error)) throw error;
    });
  };

  const keepUsageKey = async (record: ApiKeyRecord): Promise<void> => {
    await callDatabase(() =>
      db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { keyHash: record.keyHash },
          UpdateExpression: 'REMOVE #release',
          ConditionExpression: 'attribute_exists(keyHash)',
          ExpressionAttributeNames: { '#release': apiKeysUsageKeyReleaseIndex.partitionKey.name },
        }),
      ),
    ).catch((error: unknown) => {
      if (!isConditionFailure(error)) throw error;
    });
  };

  return {
    register,
    find,
    findActive,
    findById,
    listItems,
    list,
    lastUseOf,
    recordUse,
    revoke,
    revokeRollChain,
    revokeOthersNamed,
    roll,
    setPlan,
    othersSharingUsageKey,
    markExpired,
    usageKeysToRelease,
    recordUsageKeyDeleted,
    keepUsageKey,
  };
};
