/** Reading the headers the API's promises rest on: Link (RFC 8288), Retry-After (RFC 9110), Deprecation (RFC 9745), Sunset (RFC 8594). */

/** The URL of a `Link` entry with this relation type, if any. */
export const linkOf = (headers: Headers, rel: string): string | undefined => {
  for (const [, url, params] of (headers.get('link') ?? '').matchAll(/<([^>]*)>([^,]*)/g)) {
    const rels = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;\s]+))/i.exec(params ?? '');
    if ((rels?.[1] ?? rels?.[2] ?? '').split(/\s+/).includes(rel)) return url;
  }
  return undefined;
};

/** Seconds a `Retry-After` asks to wait (a number of seconds, or an HTTP date from `now`). */
export const retryAfterSeconds = (value: string | null, now: number): number | undefined => {
  const text = value?.trim() ?? '';
  if (/^\d+$/.test(text)) return Number(text);
  const at = /[a-z]/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
};

/** An instant: `@<unix seconds>` (RFC 9745) or an HTTP date. */
export const instantOf = (value: string | null): Date | undefined => {
  if (value === null) return undefined;
  const at = value.startsWith('@') ? Number(value.slice(1)) * 1000 : Date.parse(value);
  return Number.isFinite(at) ? new Date(at) : undefined;
};
