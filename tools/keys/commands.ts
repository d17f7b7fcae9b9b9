/**
 * The key tool's commands, each once its input is checked: create, list, show, roll, set-plan,
 * revoke, capacity. Each prints through `print` and returns the exit status; a refusal the operator can fix
 * (an id no key has, a key that cannot be rolled) is a UsageError of one line.
 */
import { generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';
import { KeyStateError, type Actor, type ApiKeyRecord, type ApiKeysRepository, type RevokedKey } from '../../shared/api-keys-repository';
import { parseInstant } from '../../shared/instants';
import { InvalidKeyName } from '../../shared/key-names';
import { keyState } from '../../shared/key-state';
import { DEFAULT_PLAN, meteringOf, type MeteringRefusal } from '../../shared/plan-policy';
import type { Scope } from '../../shared/scopes';
import { UsageError } from '../cli';
import type { AuthorizerCache } from './authorizer-cache';
import { attributeText, fullKeyJson, keyJson, LIST_HEADER, listLine, listUsageJson, printable, showLines } from './output';
import { usageDay } from '../local-server/usage-plans';
import { releaseUsageKey, type UsageKeyRelease } from '../../shared/usage-key-release';
import { ApiKeysFull, type MeteredKey, type StrayApiKey, type UsageKeys, type UsedToday } from './usage-keys';

export interface CommandContext {
  readonly keys: ApiKeysRepository;
  /** The API keys that meter keys on their plans: API Gateway's on a stage, local ones otherwise. */
  readonly usageKeys: UsageKeys;
  /** The stage's authorizer cache, flushed after a change that narrows what a key may do. */
  readonly authorizerCache: AuthorizerCache;
  /** Prints a line through the key mask (tools/keys/printer.ts). */
  readonly print: (line: string) => void;
  /** Prints the lines that show a new key, the key unmasked; rejects when they could not be written. */
  readonly showNewKey: (key: string, lines: readonly string[]) => Promise<void>;
  readonly json: boolean;
  /** Who makes the changes; asked only before a write (on AWS it calls STS). */
  readonly caller: () => Promise<Actor>;
}

/**
 * A new key as its line names it. Every stored value a line or an error of the tool prints goes
 * through attributeText (printable): a name, a plan or an id a console edit wrote cannot start a
 * line, hide a character or drive the terminal.
 */
const describeNew = (record: ApiKeyRecord): string =>
  `${attributeText(record.name)}, scopes ${record.scopes.join(',')}${record.expiresAt === undefined ? '' : `, expires ${attributeText(record.expiresAt)}`}`;

const describePlan = (record: ApiKeyRecord): string => `plan ${attributeText(record.plan)}`;

/** What is wrong with the item of a key the authorizer refuses for it (meteringOf), as the operator reads it. */
const UNMETERED: Readonly<Record<MeteringRefusal, string>> = {
  'no-usage-key': 'names no usage key of its own',
  'usage-key-mismatch': 'holds a usage key that was not written for it',
  'no-plan': 'names no plan',
};

/** The one line for a key whose item was changed by hand so that it cannot be metered: it is refused, and stays so. */
export const unmeteredKey = (keyId: string, reason: MeteringRefusal, what: string): UsageError =>
  new UsageError(
    `Key ${keyId} ${UNMETERED[reason]} (its item was changed by hand), so the authorizer refuses it and it cannot ${what}: ` +
      'revoke it and create a new key.',
  );

export const noSuchKey = (keyId: string): UsageError => new UsageError(`No key has the id ${keyId} (npm run keys -- list shows them).`);

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * After a change that narrows what a key may do: the authorizer cache flushed where the tool can,
 * and the line that says when the change takes effect (not with --json, whose lines are the keys).
 */
const takeEffect = async ({ authorizerCache, print, json }: CommandContext): Promise<void> => {
  const line = await authorizerCache.afterChange();
  if (!json) print(line);
};

/**
 * Runs `write` (of the keys table); when it fails, `undo` puts API Gateway back as it was before,
 * and the write's error is thrown, with the undo's when that fails too.
 */
const undoneOnFailure = async <T>(write: () => Promise<T>, undo: () => Promise<unknown>): Promise<T> => {
  try {
    return await write();
  } catch (error) {
    await undo().catch((undoError: unknown) => {
      throw new Error(`${messageOf(error)} Then ${messageOf(undoError)}`);
    });
    throw error;
  }
};

export interface CreateInput {
  readonly name: string;
  readonly scopes: readonly Scope[];
  readonly expiresAt?: string;
  /** The usage plan; `default` when absent. */
  readonly plan?: string;
}

/** A release whose delete API Gateway refused: the key stays in the release index, and the sweep deletes it. */
type Release = UsageKeyRelease | { readonly outcome: 'failed'; readonly reason: string };

/**
 * Revokes a key, and deletes its API key unless another live key still uses it (the other end of
 * a roll), so that the API key no longer counts against API Gateway's quota. A delete that fails
 * is left to the expiry sweep: the revoke holds all the same.
 */
const revokeWithUsageKey = async ({ keys, usageKeys }: CommandContext, keyId: string, changedBy: Actor) => {
  const record = await keys.revoke(keyId, changedBy);
  if (!record) throw noSuchKey(keyId);
  const release: Release = await releaseUsageKey(
    keys,
    record,
    (usageKeyId, region) => usageKeys.remove(usageKeyId, region),
    changedBy,
    new Date(),
    usageKeys.homeRegion,
  ).catch((error: unknown) => ({ outcome: 'failed' as const, reason: messageOf(error) }));
  return { record, release };
};

/**
 * Shows the new `key` (of id `keyId`) in `lines`. A key that could not be shown (its output closed)
 * is in no one's hands: it does not stay active, it is revoked, and the error says so.
 */
const shownOrRevoked = async (context: CommandContext, keyId: string, key: string, lines: string[], changedBy: Actor) => {
  try {
    await context.showNewKey(key, lines);
  } catch (error) {
    const revoked = await revokeWithUsageKey(context, keyId, changedBy).then(
      () => ': it is revoked',
      (revokeError: unknown) => `, and revoking it failed (${messageOf(revokeError)}): revoke it with npm run keys -- revoke ${keyId}`,
    );
    throw new Error(`new key ${keyId} could not be shown, as ${messageOf(error)}${revoked}.`);
  }
};

/** The live keys of the table: revoked and expired ones hold no usage key for long. */
const liveKeys = async (keys: ApiKeysRepository, now = new Date()): Promise<number> =>
  (await keys.listItems()).filter((record) => keyState(record, now) === 'active').length;

/** The one line for a create API Gateway has no room for: what is full, how many keys are live, and the way past. */
const noRoomForKey = async ({ keys }: CommandContext, full: ApiKeysFull): Promise<Error> =>
  new Error(
    `No room for a new key: ${full.message} ${await liveKeys(keys)} keys of this table are live. ` +
      'Revoke the keys no client uses (npm run keys -- list --unused 90d), or serve new clients from another cell ' +
      '(docs/architecture.md, Scaling).',
  );

export const createKey = async (context: CommandContext, input: CreateInput): Promise<number> => {
  const { keys, usageKeys, json, caller } = context;
  const changedBy = await caller();
  const key = generateApiKey();
  const plan = input.plan ?? DEFAULT_PLAN;
  // The API key that meters it, made first so that the record names it; deleted if the record is not written.
  const usage = await usageKeys.create(keyIdOf(hashApiKey(key)), plan).catch(async (error: unknown) => {
    throw error instanceof ApiKeysFull ? await noRoomForKey(context, error) : error;
  });
  const record = await undoneOnFailure(
    () => keys.register(key, input.name, { scopes: input.scopes, expiresAt: input.expiresAt, plan, usage, changedBy }),
    () => usageKeys.discard(usage),
  );
  const lines = json
    ? [keyJson(record, key)]
    : [`Created key ${record.keyId} (${describeNew(record)}) on ${describePlan(record)}. It is shown only this once:`, key];
  await shownOrRevoked(context, record.keyId, key, lines, changedBy);
  return 0;
};

/** Every key's requests today, by key id: for the keys metered on a plan, each plan's use asked once. */
const usedToday = async (usageKeys: UsageKeys, records: readonly ApiKeyRecord[], now: Date): Promise<ReadonlyMap<string, UsedToday>> => {
  const metered = records.flatMap((record): Array<MeteredKey & { keyId: string }> => {
    const metering = meteringOf(record);
    if ('refused' in metering) return [];
    const { usageKeyId, regionUsageKeyIds, plan } = metering;
    return [{ keyId: record.keyId, usageKeyId, plan, ...(regionUsageKeyIds === undefined ? {} : { regionUsageKeyIds }) }];
  });
  const used = await usageKeys.usedOn(metered, usageDay(now.getTime()));
  return new Map(
    metered.flatMap(({ keyId, usageKeyId }): Array<[string, UsedToday]> => {
      const count = used.get(usageKeyId);
      return count === undefined ? [] : [[keyId, count]];
    }),
  );
};

/** A key's requests today in `list --usage`: the sum, and in a stage of several regions each region's. */
const usedTodayText = (used: UsedToday | undefined): string => {
  if (used === undefined) return '-';
  const { requests, byRegion } = used;
  return byRegion === undefined
    ? String(requests)
    : `${requests} (${byRegion.map((each) => `${each.region} ${each.requests}`).join(', ')})`;
};

/**
 * Every key, or with `unusedMs` the active ones not used (or, never used, not created) for that
 * long; with `usage`, each with its requests today.
 */
export const listKeys = async (
  { keys, usageKeys, print, json }: CommandContext,
  { unusedMs, usage = false }: { unusedMs?: number; usage?: boolean },
): Promise<number> => {
  const now = new Date();
  const records = (await keys.list()).filter((record) => {
    if (unusedMs === undefined) return true;
    const seen = parseInstant(record.lastUsedAt ?? record.createdAt)?.getTime() ?? Number.NaN;
    // A last use that is no timestamp (a console edit) says nothing recent: shown.
    return keyState(record, now) === 'active' && !(now.getTime() - seen < unusedMs);
  });
  const today = usage ? await usedToday(usageKeys, records, now) : undefined;
  if (json) {
    for (const record of records) print(today ? listUsageJson(record, today.get(record.keyId)) : keyJson(record));
    return 0;
  }
  print(today ? `${LIST_HEADER}\ttoday` : LIST_HEADER);
  for (const record of records)
    print(today ? `${listLine(record, now)}\t${usedTodayText(today.get(record.keyId))}` : listLine(record, now));
  return 0;
};

export const showKey = async ({ keys, print, json }: CommandContext, keyId: string): Promise<number> => {
  const record = await keys.findById(keyId, { withLastUse: true });
  if (!record) throw noSuchKey(keyId);
  const now = new Date();
  if (json) print(fullKeyJson(record, now));
  else for (const line of showLines(record, now)) print(line);
  return 0;
};

export interface RollInput {
  readonly graceMs: number;
  /** The new key's expiry. */
  readonly expiresAt?: string;
}

/** Why a key cannot be rolled, in one line: a UsageError for what the operator can fix, an Error for a busy key. */
const rollRefusal = (keyId: string, { state }: KeyStateError, record: ApiKeyRecord | undefined): Error => {
  switch (state) {
    case 'missing':
      return noSuchKey(keyId);
    case 'rolled':
      return new UsageError(`Key ${keyId} has been rolled already: roll its successor (npm run keys -- show ${keyId} names it).`);
    case 'unscoped':
      return new UsageError(
        `Key ${keyId} has no scope this API knows in its stored scopes, so its successor would have none: ` +
          'give it valid scopes in the console, or create a new key with --scopes.',
      );
    case 'unmetered': {
      const metering = record && meteringOf(record);
      return unmeteredKey(keyId, metering && 'refused' in metering ? metering.refused : 'no-usage-key', 'be rolled');
    }
    case 'changing':
      return new Error(
        `Key ${keyId} kept changing while it was rolled (another change at the same moment): nothing was rolled; roll it again.`,
      );
    default:
      return new UsageError(`Key ${keyId} is ${state}: only an active key can be rolled.`);
  }
};

/** A new key in place of `keyId`, printed once; the old one keeps working for the grace. */
export const rollKey = async (context: CommandContext, keyId: string, input: RollInput): Promise<number> => {
  const { keys, json, caller } = context;
  const changedBy = await caller();
  const key = generateApiKey();
  const { previous, next } = await keys.roll(keyId, key, { ...input, changedBy }).catch(async (error: unknown) => {
    if (error instanceof InvalidKeyName) {
      // A name the console wrote: the successor would carry it.
      throw new UsageError(
        `Key ${keyId} cannot be rolled: its successor would take its stored name. ${error.message} Rename it in the console first.`,
      );
    }
    if (!(error instanceof KeyStateError)) throw error;
    // What is wrong with an unmetered key's item is read again, to name it.
    throw rollRefusal(keyId, error, error.state === 'unmetered' ? await keys.findById(keyId) : undefined);
  });
  const ended = (parseInstant(previous.expiresAt)?.getTime() ?? Number.NaN) <= Date.now();
  const lines = json
    ? [keyJson(next, key), keyJson(previous)]
    : [
        `Rolled key ${keyId} to ${next.keyId} (${describeNew(next)}) on ${describePlan(next)}. The new key is shown only this once:`,
        key,
        ended
          ? `The old key ${keyId} expired at ${attributeText(previous.expiresAt)}: callers still using it are refused.`
          : `The old key ${keyId} expires at ${attributeText(previous.expiresAt)}: both work until then.`,
      ];
  await shownOrRevoked(context, next.keyId, key, lines, changedBy).catch(async (error: unknown) => {
    // Its predecessor is not given back its time: it ends as the roll said, and cannot be rolled again.
    const old = ended ? `the old key ${keyId} has ended` : `the old key ${keyId} still ends at ${attributeText(previous.expiresAt)}`;
    // Ended, its cached answers go all the same.
    const flush = ended
      ? await context.authorizerCache.afterChange().then(
          () => '',
          (flushError: unknown) => ` ${messageOf(flushError)}`,
        )
      : '';
    throw new Error(`${messageOf(error).replace(/\.$/, '')}; ${old}: create a key to replace it.${flush}`);
  });
  // Ended now (--grace 0): its cached answers would let it in for the rest of the TTL.
  if (ended) await takeEffect(context);
  return 0;
};

/** A refusal of the keys table's setPlan, as the operator reads it. */
const planRefusal = (keyId: string, error: unknown): unknown => {
  if (!(error instanceof KeyStateError)) return error;
  if (error.state === 'missing') return noSuchKey(keyId);
  if (error.state === 'changing') return new UsageError(`Key ${keyId} changed meanwhile: run set-plan again.`);
  return new UsageError(`Key ${keyId} is ${error.state}: only an active key can be put on another plan.`);
};

/**
 * Puts a key on another plan: its API key is moved between the usage plans, and the keys that
 * share it (the other end of a roll in its grace) follow.
 */
export const setKeyPlan = async (context: CommandContext, keyId: string, plan: string): Promise<number> => {
  const { keys, usageKeys, print, json, caller } = context;
  const record = await keys.findById(keyId);
  if (!record) throw noSuchKey(keyId);
  const state = keyState(record, new Date());
  if (state !== 'active') throw new UsageError(`Key ${keyId} is ${state}: only an active key can be put on another plan.`);
  if (record.replacedBy !== undefined) {
    const successor = attributeText(record.replacedBy);
    throw new UsageError(`Key ${keyId} has been rolled to ${successor}, which shares its usage key: set the plan of ${successor}.`);
  }
  const metering = meteringOf(record);
  if ('refused' in metering) throw unmeteredKey(keyId, metering.refused, 'be put on another plan');
  const from = metering.plan;
  if (from === plan) {
    if (json) print(keyJson(record));
    else print(`Key ${keyId} is on plan ${plan} already.`);
    return 0;
  }
  const changedBy = await caller();
  const followers: string[] = [];
  await usageKeys.move(metering, from, plan);
  const updated = await undoneOnFailure(
    async () => {
      const moved = await keys.setPlan(keyId, plan, { changedBy }).catch((error: unknown) => {
        throw planRefusal(keyId, error);
      });
      for (const other of await keys.othersSharingUsageKey(moved)) {
        await keys.setPlan(other.keyId, plan, { changedBy });
        followers.push(other.keyId);
      }
      return moved;
    },
    () => usageKeys.move(metering, plan, from),
  );
  if (json) print(keyJson(updated));
  else {
    const along = followers.length === 0 ? '' : ` Key ${followers.join(', ')}, which shares its usage key, moved with it.`;
    print(`Moved key ${keyId} from plan ${attributeText(from)} to plan ${plan}.${along}`);
  }
  // The cached answers name the old plan.
  await takeEffect(context);
  return 0;
};

/** What a revoke says of its usage key, if anything. */
const releaseLine = (release: Release, { onApiGateway, homeRegion }: UsageKeys): string | undefined => {
  switch (release.outcome) {
    case 'deleted': {
      if (!onApiGateway) return undefined;
      const others = Object.entries(release.regionUsageKeyIds ?? {});
      if (others.length === 0) return `Its API Gateway API key ${attributeText(release.usageKeyId)} is deleted.`;
      const each = [[homeRegion ?? '', release.usageKeyId], ...others]
        .map(([region, id]) => `${attributeText(id)} in ${attributeText(region)}`)
        .join(', ');
      return `Its API Gateway API keys are deleted in every region: ${each}.`;
    }
    case 'shared': {
      const others = release.sharing.map((other) => other.keyId).join(', ');
      // A roll made meanwhile (or before) left a key of the same name and scopes that still lets its callers in.
      return onApiGateway
        ? `Its API Gateway API key ${attributeText(release.usageKeyId)} stays: key ${others} shares it.`
        : `Key ${others}, of a roll of the same key (same name and scopes), stays active.`;
    }
    case 'failed':
      return `${printable(release.reason).replace(/\.$/, '')}: the expiry sweep deletes it within a minute.`;
    default:
      return undefined;
  }
};

/** What a revoke says of a key: revoked now, or (revoking twice keeps the first time, and the first revoker) before. */
const revokedLine = (record: RevokedKey, ofChain: boolean): string =>
  record.revokedNow
    ? `Revoked key ${record.keyId}${ofChain ? ', of the same roll chain' : ''}. Callers using it are refused.`
    : `Key ${record.keyId} was already revoked at ${attributeText(record.revokedAt)}.`;

/**
 * Releases the usage key of each revoked key, in order: deleted unless another live key still uses
 * it. The keys of a roll chain share one: it is deleted once (API Gateway's call made once), and
 * each key records it.
 */
const releaseEach = async ({ keys, usageKeys }: CommandContext, records: readonly RevokedKey[], changedBy: Actor): Promise<Release[]> => {
  const deleted = new Set<string>();
  const remove = async (usageKeyId: string, region?: string) => {
    const deletion = `${region ?? ''}/${usageKeyId}`;
    if (deleted.has(deletion)) return;
    await usageKeys.remove(usageKeyId, region);
    deleted.add(deletion);
  };
  const releases: Release[] = [];
  for (const record of records) {
    releases.push(
      await releaseUsageKey(keys, record, remove, changedBy, new Date(), usageKeys.homeRegion).catch((error: unknown) => ({
        outcome: 'failed' as const,
        reason: messageOf(error),
      })),
    );
  }
  return releases;
};

/**
 * Revokes a key and, unless `onlyThisKey`, every key of its roll chain that still works (the other
 * end of a roll in its grace, and any roll after it), all at once or none; prints each key revoked.
 * Their API key goes too, unless another active key still uses it. A revoke run again (the key
 * revoked already) deletes it again, in case the first could not. The stage's authorizer cache is
 * flushed once, after.
 */
export const revokeKey = async (context: CommandContext, keyId: string, { onlyThisKey = false } = {}): Promise<number> => {
  const { keys, usageKeys, print, json, caller } = context;
  const changedBy = await caller();
  let revoked: RevokedKey[];
  let releases: Release[];
  if (onlyThisKey) {
    const { record, release } = await revokeWithUsageKey(context, keyId, changedBy);
    [revoked, releases] = [[record], [release]];
  } else {
    const chain = await keys.revokeRollChain(keyId, changedBy).catch((error: unknown) => {
      throw error instanceof KeyStateError && error.state === 'changing'
        ? new Error(
            `Key ${keyId}'s roll chain kept changing while it was revoked (a roll at the same moment): nothing was revoked; revoke it again.`,
          )
        : error;
    });
    if (!chain) throw noSuchKey(keyId);
    revoked = [chain.named, ...chain.others];
    releases = await releaseEach(context, revoked, changedBy);
  }
  if (json) for (const record of revoked) print(keyJson(record));
  else {
    revoked.forEach((record, index) => print(revokedLine(record, index > 0)));
    // The keys of a chain share one usage key: its line once.
    for (const line of new Set(releases.map((release) => releaseLine(release, usageKeys)))) if (line !== undefined) print(line);
  }
  // Flushed again by a revoke run again, in case the first flush could not be made.
  await takeEffect(context);
  return 0;
};

/**
 * The API keys held against API Gateway's quota, and the keys of this table that are live. A stage
 * in several regions holds its API keys in each region, each against that region's quota: one line
 * a region, and with --json the fullest region's count as `apiKeys`, each region's in `apiKeysByRegion`.
 */
export const showCapacity = async ({ keys, usageKeys, print, json }: CommandContext): Promise<number> => {
  const items = await keys.listItems();
  const [counts, strays] = [await usageKeys.count(), await usageKeys.strays(items)];
  const now = new Date();
  const live = items.filter((record) => keyState(record, now) === 'active').length;
  const { limit } = usageKeys;
  const share = (held: number) => `${Math.floor((held / limit) * 100)}% of the quota`;
  const [only] = counts;
  const unheldApiKeys = strays.map(({ region, id, name }) => ({ id, name, ...(region === undefined ? {} : { region }) }));
  if (counts.length === 1 && only !== undefined && only.region === undefined) {
    const where = usageKeys.onApiGateway ? 'in this account and region (every stage, and any made by hand)' : 'by the local gateway';
    if (json) print(JSON.stringify({ apiKeys: only.held, limit, liveKeys: live, unheldApiKeys }));
    else print(`API keys: ${only.held} of ${limit} held ${where}, ${share(only.held)}; ${live} keys of this table are live.`);
  } else if (json) {
    const apiKeysByRegion = Object.fromEntries(counts.map(({ region, held }) => [region, held]));
    print(JSON.stringify({ apiKeys: Math.max(...counts.map(({ held }) => held)), apiKeysByRegion, limit, liveKeys: live, unheldApiKeys }));
  } else {
    for (const { region, held } of counts) {
      print(
        `API keys in ${region}: ${held} of ${limit} held in this account and region (every stage, and any made by hand), ${share(held)}.`,
      );
    }
    print(`${live} keys of this table are live; each holds an API key in every region.`);
  }
  if (!json && strays.length > 0) for (const line of strayLines(strays)) print(line);
  return 0;
};

/**
 * The API keys named as this stage's usage keys that no key item holds, and how to delete them: a
 * create stopped part-way leaves them (its undo runs only while it runs). A create running now is
 * among them until it writes its key: hence "once no create is running" (then run capacity again).
 */
const strayLines = (strays: readonly StrayApiKey[]): string[] => [
  `${strays.length} API keys named as this stage's usage keys are held by no key (left by a create stopped part-way); ` +
    'each counts against its region until deleted:',
  ...strays.map(({ region, id, name }) => `  ${id} (${name})${region === undefined ? '' : ` in ${region}`}`),
  'Delete each once no create is running (run capacity again then): aws apigateway delete-api-key --api-key ID' +
    (strays.some(({ region }) => region !== undefined) ? ' --region REGION' : ''),
];
