/**
 * What an instant is, wherever one is read: a stored `expiresAt` or `lastUsedAt` (the console
 * writes them as text), or the key tool's --expires-at. ISO 8601 with its zone only: a text
 * without one (`2030-01-31 12:00`) or in another form (`1/2/2030`) names no instant, since
 * reading it would depend on the machine's zone (the local server's and Lambda's differ).
 */

/**
 * The offsets zones have: from -12:00 to +14:00, minutes 00 to 59. The pattern alone would take
 * +99:00, which names no instant anyone meant (nor does RFC 3339 allow hours beyond 23).
 */
const ZONE_OFFSET = /^[+-](\d{2}):(\d{2})$/;
const OFFSET_MINUTES = { min: -12 * 60, max: 14 * 60 } as const;

/** Minutes east of UTC of a zone written `Z` or `±hh:mm`; undefined for an offset no zone has (+99:00, +05:75, -13:00). */
const offsetMinutesOf = (zone: string): number | undefined => {
  if (/^[Zz]$/.test(zone)) return 0;
  const [, hours, minutes] = ZONE_OFFSET.exec(zone) ?? [];
  if (hours === undefined || minutes === undefined || Number(minutes) > 59) return undefined;
  const offset = (zone.startsWith('-') ? -1 : 1) * (Number(hours) * 60 + Number(minutes));
  return offset >= OFFSET_MINUTES.min && offset <= OFFSET_MINUTES.max ? offset : undefined;
};

/** Whether `zone` (`Z` or `±hh:mm`) is an offset a zone has: from -12:00 to +14:00. */
export const isZoneOffset = (zone: string): boolean => offsetMinutesOf(zone) !== undefined;

/** `date`, or `date T hh:mm[:ss[.fraction]]` then `Z` or `±hh:mm`. */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:\d{2}))?$/;

/**
 * The instant an ISO 8601 text names, or undefined when it names none (or is no text: a console
 * item may hold any type). A day that does not exist (2025-02-30) or a zone offset no zone has
 * (+99:00) is refused rather than rolled over; a date alone is midnight UTC; a fraction finer than
 * milliseconds is cut to them.
 */
export const parseInstant = (value: unknown): Date | undefined => {
  const match = typeof value === 'string' ? INSTANT.exec(value) : null;
  if (!match) return undefined;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '0', zone = 'Z'] = match;
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  const utc = new Date(Date.UTC(y, mo - 1, d, h, mi, s, Number(fraction.slice(0, 3).padEnd(3, '0'))));
  utc.setUTCFullYear(y); // Date.UTC reads years 0-99 as 1900-1999
  const exists = utc.getUTCFullYear() === y && utc.getUTCMonth() === mo - 1 && utc.getUTCDate() === d && h < 24 && mi < 60 && s < 60;
  const offsetMinutes = offsetMinutesOf(zone);
  if (!exists || offsetMinutes === undefined) return undefined;
  return new Date(utc.getTime() - offsetMinutes * 60_000);
};
