/**
 * The `Idempotency-Key` request header (IETF httpapi-idempotency-key draft). The draft's value
 * is an RFC 8941 sf-string (`"8e03978e-…"`); many clients send the key bare, so a bare key of
 * the same safe characters is accepted too, and names the same key as its quoted form. A key is
 * 1 to 255 characters of printable ASCII; a repeated header, parameters, or anything else is 400.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { ApiError } from '../errors';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** RFC 8941 sf-string: printable ASCII in quotes, with `\"` and `\\` the only escapes. */
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;
/** A bare key: letters, digits and `-._~:/+=` (UUIDs, ULIDs, base64), no quotes, spaces or commas. */
const BARE_KEY = /^[A-Za-z0-9\-._~:/+=]+$/;

const malformed = (detail: string) =>
  new ApiError(
    'validation_failed',
    `Header '${IDEMPOTENCY_KEY_HEADER}' ${detail}: send one key of 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters, quoted ("…") or bare.`,
  );

/** The key a header value names, or a 400. */
export const parseIdempotencyKey = (value: string): string => {
  const trimmed = value.trim();
  const quoted = SF_STRING.exec(trimmed);
  const key = quoted ? (quoted[1] ?? '').replace(/\\(["\\])/g, '$1') : BARE_KEY.test(trimmed) ? trimmed : undefined;
  if (key === undefined) throw malformed('is malformed');
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH) throw malformed('has the wrong length');
  return key;
};

const valuesOf = (event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>): string[] => {
  const wanted = IDEMPOTENCY_KEY_HEADER.toLowerCase();
  const values: string[] = [];
  for (const [name, list] of Object.entries(event.multiValueHeaders ?? {})) {
    if (name.toLowerCase() === wanted) values.push(...(list ?? []));
  }
  if (values.length > 0) return values;
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (name.toLowerCase() === wanted && value !== undefined) values.push(value);
  }
  return values;
};

/** The request's idempotency key, undefined without the header; 400 when repeated or malformed. */
export const idempotencyKeyOf = (event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>): string | undefined => {
  const values = valuesOf(event);
  if (values.length === 0) return undefined;
  if (values.length > 1) throw malformed('must not be repeated');
  return parseIdempotencyKey(values[0] ?? '');
};

const nonEmpty = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * Which client it is: the idempotency scope. A client is the lineage of keys a roll keeps, named by
 * the id of their own usage key (a roll hands it to the successor), so a create retried with the
 * successor of a rolled key replays; two keys with different usage keys never share a scope (the
 * authorizer admits a key only with the usage key written for it). Never one scope for every
 * caller: without it, fail.
 */
export const callerOf = (event: Pick<APIGatewayProxyEvent, 'requestContext'>): string => {
  const usageKeyId = nonEmpty(event.requestContext.authorizer?.usageKeyId);
  if (usageKeyId) return `usage-key:${usageKeyId}`;
  throw new Error('The authorizer context names no caller.');
};

/** On a replayed answer: this 201 is the stored answer of an earlier request (as Stripe does). */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
