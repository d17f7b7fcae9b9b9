/**
 * jsonBody: for operations with a JSON body. In the documented order it refuses bodies over the
 * size limit, checks the Content-Type (a JSON type, no charset but UTF-8, no content coding),
 * then reads the body as I-JSON (RFC 7493): UTF-8 text, valid JSON, no member name twice in one
 * object. The handler then sees the parsed value.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '../errors';
import { shownName } from '../validation';
import { repeatedMemberName } from './member-names';
import { headerOf } from './request';

/** Documented maximum size of a request body, in bytes. A pet is far smaller. */
export const MAX_BODY_BYTES = 16 * 1024;

type Middleware = middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult>;

/** Counts the bytes the client sent: a base64 body is counted decoded. */
const bodyLimit = (maxBytes: number = MAX_BODY_BYTES): Middleware => ({
  before: async ({ event }) => {
    const size = event.body ? Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : 0;
    if (size > maxBytes) {
      throw new ApiError('payload_too_large', `The request body is ${size} bytes; the limit is ${maxBytes} bytes.`);
    }
  },
});

/**
 * A media type in one spelling. RFC 9110 allows media types in any case, and spaces around the
 * `;` before parameters (even an empty parameter list).
 */
export const normalizeMediaType = (contentType: string): string =>
  contentType
    .toLowerCase()
    .split(';')
    .map((part) => part.trim())
    .filter((part, index) => index === 0 || part !== '')
    .join('; ');

/** `application/json` or `application/*+json`, with or without parameters. */
const JSON_MEDIA_TYPE = /^application\/(.+\+)?json($|;.+)/;
const isJsonMediaType = (contentType: string): boolean => JSON_MEDIA_TYPE.test(normalizeMediaType(contentType));

/**
 * Whether the Content-Type names a charset that is not UTF-8 (by any of its labels, as the
 * Encoding Standard knows them: `utf-8`, `UTF8`, `"utf-8"` quoted as RFC 9110 allows). JSON
 * between systems is UTF-8 (RFC 8259) and the body is read as UTF-8: a body said to be in another
 * charset is mislabelled or would be misread, so it is refused rather than guessed at.
 */
const namesOtherCharset = (contentType: string): boolean =>
  normalizeMediaType(contentType)
    .split('; ')
    .slice(1)
    .map((parameter) => /^charset\s*=\s*(.*)$/.exec(parameter)?.[1])
    .some((charset) => charset !== undefined && !isUtf8Label(charset.replace(/^"(.*)"$/, '$1')));

const isUtf8Label = (label: string): boolean => {
  try {
    return new TextDecoder(label).encoding === 'utf-8';
  } catch {
    return false; // no encoding has this label
  }
};

/**
 * The content codings the body was sent with (`Content-Encoding`, every occurrence), `identity`
 * left out. The stack enables no payload compression on the API, so API Gateway passes a
 * compressed body on as it came: undecoded here, it would be read as if it were the JSON.
 */
const contentCodings = (event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>): string[] =>
  headerValues(event, 'content-encoding')
    .flatMap((value) => value.split(','))
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');

/** Every value of a header the client sent, whatever its case: the multi-value map has the repeats. */
const headerValues = (event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>, name: string): string[] => {
  const repeated = Object.entries(event.multiValueHeaders ?? {})
    .filter(([key]) => key.toLowerCase() === name)
    .flatMap(([, values]) => values ?? []);
  if (repeated.length > 0) return repeated;
  const single = headerOf(event, name);
  return single === undefined ? [] : [single];
};

// fatal: bytes that are not UTF-8 are an error, not U+FFFD. ignoreBOM: a BOM stays in the text,
// where JSON.parse refuses it (RFC 8259 forbids sending one).
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The body as text. API Gateway passes it base64-encoded (every media type is binary to it), so
 * the bytes arrive as sent and are decoded strictly here; a body passed as text is used as it is.
 */
const textOf = ({ body, isBase64Encoded }: APIGatewayProxyEvent): string => {
  if (!body || !isBase64Encoded) return body ?? '';
  try {
    return utf8.decode(Buffer.from(body, 'base64'));
  } catch {
    throw new ApiError('invalid_json', 'The request body is not UTF-8 text.');
  }
};

const parseJson = (text: string): unknown => {
  if (text === '') throw new ApiError('invalid_json', 'The request body is empty: send a JSON object.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError('invalid_json', 'The request body is not valid JSON.');
  }
  const repeated = repeatedMemberName(text);
  if (repeated !== undefined) {
    throw new ApiError(
      'invalid_json',
      `The request body repeats the member name '${shownName(repeated)}' in one object; names must be unique (I-JSON, RFC 7493).`,
    );
  }
  return value;
};

const jsonParser = (): Middleware => ({
  before: async ({ event }) => {
    const contentType = headerOf(event, 'content-type');
    if (contentType === undefined || !isJsonMediaType(contentType)) throw new ApiError('unsupported_media_type');
    if (namesOtherCharset(contentType)) {
      throw new ApiError(
        'unsupported_media_type',
        "The request body must be UTF-8 JSON: send 'Content-Type: application/json', with no other charset.",
      );
    }
    if (contentCodings(event).length > 0) {
      throw new ApiError('unsupported_media_type', 'The request body must be sent as it is, without a Content-Encoding (not compressed).');
    }
    (event as { body: unknown }).body = parseJson(textOf(event));
    event.isBase64Encoded = false;
  },
});

export const jsonBody = (): Middleware[] => [bodyLimit(), jsonParser()];
