/**
 * What an instant is, wherever one is read: a stored `expiresAt` or `lastUsedAt` (the console
 * writes them as text), or the key tool's --expires-at. ISO 8601 with its zone only: a text
 * without one (`2030-01-31 12:00`) or in another form (`1/2/2030`) names no instant, since
 * reading it would depend on the machine's zone (the local server's and Lambda's differ).
 */

/** `date`, or `date T hh:mm[:ss[.fraction]]` then `Z` or `±hh:mm`. */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:\d{2}))?$/;

/**
 * The instant an ISO 8601 text names, or undefined when it names none (or is no text: a console
 * item may hold any type). A day that does not exist (2025-02-30) is refused rather than rolled
 * over; a date alone is midnight UTC; a fraction finer than milliseconds is cut to them.
 */
export const parseInstant = (value: unknown): Date | undefined => {
  const match = typeof value === 'string' ? INSTANT.exec(value) : null;
  if (!match) return undefined;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '0', zone = 'Z'] = match;
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  const utc = new Date(Date.UTC(y, mo - 1, d, h, mi, s, Number(fraction.slice(0, 3).padEnd(3, '0'))));
  utc.setUTCFullYear(y); // Date.UTC reads years 0-99 as 1900-1999
  const exists = utc.getUTCFullYear() === y && utc.getUTCMonth() === mo - 1 && utc.getUTCDate() === d && h < 24 && mi < 60 && s < 60;
  if (!exists) return undefined;
  const offsetMinutes = /^[Zz]$/.test(zone) ? 0 : (zone.startsWith('-') ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4)));
  return new Date(utc.getTime() - offsetMinutes * 60_000);
};
