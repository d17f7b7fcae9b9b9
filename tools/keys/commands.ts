/**
 * The key tool's commands, each once its input is checked: create, list, show, roll, revoke.
 * Each prints through `print` and returns the exit status; a refusal the operator can fix (an id
 * no key has, a key that cannot be rolled) is a UsageError of one line.
 */
import { generateApiKey } from '../../shared/api-keys';
import { KeyStateError, type Actor, type ApiKeyRecord, type ApiKeysRepository } from '../../shared/api-keys-repository';
import { keyState } from '../../shared/key-state';
import { parseInstant } from '../../shared/instants';
import type { Scope } from '../../shared/scopes';
import { UsageError } from '../cli';
import { attributeText, fullKeyJson, keyJson, LIST_HEADER, listLine, showLines } from './output';

export interface CommandContext {
  readonly keys: ApiKeysRepository;
  readonly print: (line: string) => void;
  readonly json: boolean;
  /** Who makes the changes; asked only before a write (on AWS it calls STS). */
  readonly caller: () => Promise<Actor>;
}

const CACHE_NOTE = 'within the authorizer cache TTL';

const describeNew = (record: ApiKeyRecord): string =>
  `${record.name}, scopes ${record.scopes.join(',')}${record.expiresAt === undefined ? '' : `, expires ${record.expiresAt}`}`;

const noSuchKey = (keyId: string): UsageError => new UsageError(`No key has the id ${keyId} (npm run keys -- list shows them).`);

export interface CreateInput {
  readonly name: string;
  readonly scopes: readonly Scope[];
  readonly expiresAt?: string;
}

export const createKey = async ({ keys, print, json, caller }: CommandContext, input: CreateInput): Promise<number> => {
  const changedBy = await caller();
  const key = generateApiKey();
  const record = await keys.register(key, input.name, { scopes: input.scopes, expiresAt: input.expiresAt, changedBy });
  if (json) {
    print(keyJson(record, key));
    return 0;
  }
  print(`Created key ${record.keyId} (${describeNew(record)}). It is shown only this once:`);
  print(key);
  return 0;
};

/** Every key, or with `unusedMs` the active ones not used (or, never used, not created) for that long. */
export const listKeys = async ({ keys, print, json }: CommandContext, { unusedMs }: { unusedMs?: number }): Promise<number> => {
  const now = new Date();
  const records = (await keys.list()).filter((record) => {
    if (unusedMs === undefined) return true;
    const seen = parseInstant(record.lastUsedAt ?? record.createdAt)?.getTime() ?? Number.NaN;
    // A last use that is no timestamp (a console edit) says nothing recent: shown.
    return keyState(record, now) === 'active' && !(now.getTime() - seen < unusedMs);
  });
  if (json) {
    for (const record of records) print(keyJson(record));
    return 0;
  }
  print(LIST_HEADER);
  for (const record of records) print(listLine(record, now));
  return 0;
};

export const showKey = async ({ keys, print, json }: CommandContext, keyId: string): Promise<number> => {
  const record = await keys.findById(keyId);
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
const rollRefusal = (keyId: string, { state }: KeyStateError): Error => {
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
    case 'changing':
      return new Error(
        `Key ${keyId} kept changing while it was rolled (another change at the same moment): nothing was rolled; roll it again.`,
      );
    default:
      return new UsageError(`Key ${keyId} is ${state}: only an active key can be rolled.`);
  }
};

/** A new key in place of `keyId`, printed once; the old one keeps working for the grace. */
export const rollKey = async ({ keys, print, json, caller }: CommandContext, keyId: string, input: RollInput): Promise<number> => {
  const changedBy = await caller();
  const key = generateApiKey();
  const { previous, next } = await keys.roll(keyId, key, { ...input, changedBy }).catch((error: unknown) => {
    throw error instanceof KeyStateError ? rollRefusal(keyId, error) : error;
  });
  if (json) {
    print(keyJson(next, key));
    print(keyJson(previous));
    return 0;
  }
  print(`Rolled key ${keyId} to ${next.keyId} (${describeNew(next)}). The new key is shown only this once:`);
  print(key);
  const ended = (parseInstant(previous.expiresAt)?.getTime() ?? Number.NaN) <= Date.now();
  print(
    ended
      ? `The old key ${keyId} expired at ${previous.expiresAt}: callers still using it are refused ${CACHE_NOTE}.`
      : `The old key ${keyId} expires at ${previous.expiresAt}: both work until then.`,
  );
  return 0;
};

export const revokeKey = async ({ keys, print, json, caller }: CommandContext, keyId: string): Promise<number> => {
  const changedBy = await caller();
  const record = await keys.revoke(keyId, changedBy);
  if (!record) throw noSuchKey(keyId);
  if (json) print(keyJson(record));
  // Revoking twice keeps the first time, and the first revoker.
  else if (!record.revokedNow) print(`Key ${keyId} was already revoked at ${attributeText(record.revokedAt)}.`);
  else print(`Revoked key ${keyId}. Callers using it are refused ${CACHE_NOTE}.`);
  return 0;
};
