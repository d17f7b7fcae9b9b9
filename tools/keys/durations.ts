/**
 * The key tool's durations (--expires-in, --grace, --unused) and instants (--expires-at). An
 * expiry is stored as `toISOString()` writes it, so that expiries compare as strings.
 */
import { isZoneOffset, parseInstant } from '../../shared/instants';
import { UsageError } from '../cli';

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A whole number of one unit; a bare 0 is zero in any unit (`--grace 0`). */
const DURATION = /^(?:(\d{1,6})([smhd])|0)$/;

/** Beyond this no key duration makes sense, and the dates stay within ISO 8601's four-digit years. */
const MAX_DURATION_MS = 36_500 * UNIT_MS.d;

/** Milliseconds of a duration such as `30d`, `24h`, `90m`, `45s` or `0`; `option` names it when it is refused. */
export const parseDuration = (value: string, option: string): number => {
  const match = DURATION.exec(value);
  const refused = `${option} takes a duration: a whole number and a unit, s, m, h or d (such as 30d or 24h), at most 36500d.`;
  if (!match) throw new UsageError(refused);
  const [, amount, unit] = match;
  if (amount === undefined || unit === undefined) return 0;
  const ms = Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  if (ms > MAX_DURATION_MS) throw new UsageError(refused);
  return ms;
};

export interface ExpiryOptions {
  readonly 'expires-in'?: string;
  readonly 'expires-at'?: string;
}

/** The expiry --expires-in or --expires-at gives (ISO 8601 UTC), or undefined for none; it must be after `now`. */
export const expiryOption = (options: ExpiryOptions, now: Date): string | undefined => {
  const { 'expires-in': expiresIn, 'expires-at': expiresAt } = options;
  if (expiresIn !== undefined && expiresAt !== undefined) {
    throw new UsageError('give --expires-in or --expires-at, not both.');
  }
  if (expiresIn !== undefined) {
    const ms = parseDuration(expiresIn, '--expires-in');
    if (ms === 0) throw new UsageError('--expires-in must be more than 0: a key cannot expire as it is made.');
    return new Date(now.getTime() + ms).toISOString();
  }
  if (expiresAt === undefined) return undefined;
  const instant = parseInstant(expiresAt);
  const offset = /[Tt].*([+-]\d{2}:\d{2})$/.exec(expiresAt)?.[1];
  if (instant === undefined && offset !== undefined && !isZoneOffset(offset)) {
    throw new UsageError(`--expires-at has the zone offset ${offset}, which no zone has: offsets run from -12:00 to +14:00 (Z is UTC).`);
  }
  if (instant === undefined) {
    throw new UsageError('--expires-at takes an ISO 8601 date, or date and time with its zone (2030-01-31 or 2030-01-31T12:00:00Z).');
  }
  if (instant.getTime() <= now.getTime()) {
    throw new UsageError(`--expires-at ${instant.toISOString()} is not in the future: a key must expire after it is made.`);
  }
  if (instant.getTime() - now.getTime() > MAX_DURATION_MS) throw new UsageError('--expires-at must be within 36500 days from now.');
  return instant.toISOString();
};
