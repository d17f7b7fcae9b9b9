/**
 * API keys: how they look, how they are hashed, and how a bearer credential is read.
 * A key is shown once when created; only its SHA-256 hash is stored.
 */
import { hash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'petstore_';
/** 32 random bytes: 256 bits, well over the 128 the API promises. */
const KEY_BYTES = 32;
/** The characters after the prefix of a generated key: its bytes in base64url, unpadded (43). */
export const API_KEY_BODY_LENGTH = Math.ceil((KEY_BYTES * 8) / 6);

/** What a key supplied by an operator (e.g. `API_KEY` for the local server) must look like. */
export const API_KEY_PATTERN = /^[A-Za-z0-9._~-]{20,512}$/;

/**
 * A bearer credential as RFC 7235 writes it: the scheme, case-insensitive, then a token68.
 * API Gateway refuses anything else before the authorizer runs (its identity validation
 * expression), and so does the local server. Written without flags so API Gateway can use it.
 */
export const BEARER_PATTERN = '^[Bb][Ee][Aa][Rr][Ee][Rr] +[A-Za-z0-9._~+/-]+=*$';
const bearer = new RegExp(BEARER_PATTERN);

export const generateApiKey = (): string => API_KEY_PREFIX + randomBytes(KEY_BYTES).toString('base64url');

/** One-shot `hash` (Node 20.12+): about half the time of a `createHash` object, on every cache miss. */
export const hashApiKey = (key: string): string => hash('sha256', key, 'hex');

/** A short, stable, non-secret name for a key: the start of its hash. Safe to log. */
export const keyIdOf = (keyHash: string): string => keyHash.slice(0, 12);

/** What a key id looks like (keyIdOf): the tools echo nothing else, since it may be a key. */
export const KEY_ID_PATTERN = /^[0-9a-f]{12}$/;

export const isKeyId = (value: string): boolean => KEY_ID_PATTERN.test(value);

/** The characters after the prefix of a key generateApiKey makes (base64url). */
const GENERATED_KEY_CHARACTERS = '[A-Za-z0-9_-]';
/** A key as generateApiKey makes them, anywhere in a text (a name, a list of scopes) where it was pasted by mistake. */
const GENERATED_KEY = new RegExp(`${API_KEY_PREFIX}${GENERATED_KEY_CHARACTERS}{20,}`);

/** Whether a value an operator typed holds a generated key: the tools refuse it without printing it. */
export const looksLikeApiKey = (value: string): boolean => GENERATED_KEY.test(value);

/** `text` with every generated key (as looksLikeApiKey finds one) replaced by what `replace` makes of it. */
export const replaceApiKeys = (text: string, replace: (key: string) => string): string =>
  text.replace(new RegExp(GENERATED_KEY.source, 'g'), replace);

/** The key from an `Authorization` value, or undefined when it is not a Bearer credential. */
export const bearerKey = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined || !bearer.test(authorization)) return undefined;
  return authorization.slice('bearer'.length).trim();
};
