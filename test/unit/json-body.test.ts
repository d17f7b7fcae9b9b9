/**
 * jsonBody: what a JSON body must be before a handler sees it (size, Content-Type, UTF-8, JSON,
 * unique member names), and the 400 a client gets otherwise, through middy and the error formatter.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { errorFormatter } from '../../shared/http/error-formatter';
import { jsonBody, MAX_BODY_BYTES, normalizeMediaType } from '../../shared/http/json-body';
import { json } from '../../shared/http/response';
import { apiEvent, context, type EventInit } from '../support/events';

/** A handler that answers the parsed body it was given. */
const echo = middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
  .use(errorFormatter())
  .use(jsonBody())
  .handler(async (event) => json(200, { received: event.body as unknown }));

const send = async (init: EventInit, contentType = 'application/json') => {
  const response = await echo(apiEvent({ method: 'POST', headers: { 'content-type': contentType }, ...init }), context);
  return { status: response.statusCode, body: JSON.parse(response.body) as Record<string, unknown> };
};
const sendText = (text: string, contentType?: string) => send({ body: text }, contentType);
const sendBytes = (bytes: Uint8Array, contentType?: string) => send({ bodyBytes: bytes }, contentType);

const refusal = (code: string, message: string | RegExp) => ({
  status: 400,
  body: { code, status: 400, message: typeof message === 'string' ? message : expect.stringMatching(message) },
});

describe('repeated member names (I-JSON, RFC 7493)', () => {
  const repeated = (name: string) =>
    refusal('invalid_json', `The request body repeats the member name '${name}' in one object; names must be unique (I-JSON, RFC 7493).`);

  it('refuses a body that names a member twice, rather than keeping the last value', async () => {
    expect(await sendText('{"name":"Rex","name":"Max","categoryId":1}')).toEqual(repeated('name'));
  });

  it.each([
    ['after unescaping', '{"name":"Rex","n\\u0061me":"Max"}', 'name'],
    ['escaped both times, differently', '{"\\u0061":1,"\\u0061":2}', 'a'],
    ['in a nested object', '{"name":"Rex","categoryId":1,"tags":{"a":1,"b":{"c":1,"c":2}}}', 'c'],
    ['in an object inside an array', '{"list":[1,{"x":1,"x":1}]}', 'x'],
    ['after a nested object', '{"a":{"b":1},"b":2,"a":3}', 'a'],
    ['after an array of objects', '{"a":[{"a":1}],"a":2}', 'a'],
    ['the empty name', '{"":1,"":2}', ''],
    ['with white space around', ' { "x" : 1 ,\n\t"x" : 2 } ', 'x'],
  ])('finds the repeat %s', async (_, text, name) => {
    expect(await sendText(text)).toEqual(repeated(name));
  });

  it('shows a repeated name as it shows unknown ones: never a key, never a page of text', async () => {
    const key = `petstore_${'a'.repeat(43)}`;
    expect(await sendText(`{"${key}":1,"${key}":2}`)).toEqual(repeated('petstore_…'));
    const long = 'n'.repeat(100);
    expect(await sendText(`{"${long}":1,"${long}":2}`)).toEqual(repeated(`${'n'.repeat(64)}…`));
  });

  it.each([
    ['names that differ in case', '{"name":"Rex","Name":"Max"}', { name: 'Rex', Name: 'Max' }],
    ['one name in different objects', '[{"a":1},{"a":2},{"a":{"a":3}}]', [{ a: 1 }, { a: 2 }, { a: { a: 3 } }]],
    ['a name repeated inside a string', '{"name":"a\\",\\"name\\":{[","x":"}"}', { name: 'a","name":{[', x: '}' }],
    ['a string value equal to a name', '{"name":"name","tag":"name"}', { name: 'name', tag: 'name' }],
    ['a backslash before the closing quote', '{"a\\\\":1,"a":2}', { 'a\\': 1, a: 2 }],
    ['a value that is not an object', '"name"', 'name'],
  ])('accepts %s', async (_, text, value) => {
    expect(await sendText(text)).toEqual({ status: 200, body: { received: value } });
  });
});

describe('bodies that are not UTF-8', () => {
  const notUtf8 = refusal('invalid_json', 'The request body is not UTF-8 text.');
  const pet = (name: Buffer) => Buffer.concat([Buffer.from('{"name":"'), name, Buffer.from('","categoryId":1}')]);

  it('decodes a base64 body as UTF-8, whatever the characters', async () => {
    expect(await sendBytes(pet(Buffer.from('Rüde 🐕', 'utf8')))).toEqual({
      status: 200,
      body: { received: { name: 'Rüde 🐕', categoryId: 1 } },
    });
  });

  it.each([
    ['a Latin-1 byte', [0xe9]],
    ['a stray continuation byte', [0x80]],
    ['0xFF', [0xff]],
    ['an overlong encoding of "/"', [0xc0, 0xaf]],
    ['an encoded surrogate (CESU-8)', [0xed, 0xa0, 0x80]],
    ['a truncated sequence', [0xe2, 0x82]],
    ['a code point beyond U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ])('refuses %s with 400 invalid_json rather than storing U+FFFD', async (_, bytes) => {
    expect(await sendBytes(pet(Buffer.from(bytes)))).toEqual(notUtf8);
  });

  it('refuses a byte order mark, as JSON.parse does in text', async () => {
    expect(await sendBytes(Buffer.from('\ufeff{"name":"Rex","categoryId":1}', 'utf8'))).toEqual(
      refusal('invalid_json', 'The request body is not valid JSON.'),
    );
  });

  it('checks the Content-Type first: bytes that are not UTF-8 sent as text/plain are unsupported_media_type', async () => {
    expect((await sendBytes(pet(Buffer.from([0xff])), 'text/plain')).body.code).toBe('unsupported_media_type');
  });
});

describe('other bodies jsonBody refuses', () => {
  it.each([
    ['no body', { body: null }],
    ['an empty text body', { body: '' }],
  ])('refuses %s with 400 invalid_json', async (_, init) => {
    expect(await send(init)).toEqual(refusal('invalid_json', 'The request body is empty: send a JSON object.'));
  });

  it.each(['{"name":', 'not json', '{"name":"Rex",}', "{'name':'Rex'}"])('refuses %j with 400 invalid_json', async (text) => {
    expect(await sendText(text)).toEqual(refusal('invalid_json', 'The request body is not valid JSON.'));
    expect(await sendBytes(Buffer.from(text))).toEqual(refusal('invalid_json', 'The request body is not valid JSON.'));
  });

  it.each(['text/plain', 'application/jsonx', 'application/+json', '*/*'])(
    'refuses the Content-Type %j with 400 unsupported_media_type',
    async (contentType) => {
      expect((await sendText('{}', contentType)).body).toMatchObject({ code: 'unsupported_media_type', status: 400 });
    },
  );

  it('refuses a missing Content-Type with 400 unsupported_media_type', async () => {
    const response = await echo(apiEvent({ method: 'POST', body: '{}' }), context);
    expect(JSON.parse(response.body)).toMatchObject({ code: 'unsupported_media_type', status: 400 });
  });

  it(`counts the decoded bytes of a base64 body: ${MAX_BODY_BYTES} pass, one more is 413`, async () => {
    /** `{"a":"ééé…"}` and a space if needed: 8 bytes of JSON, 2 bytes a character (the text is shorter than its bytes). */
    const padded = (bytes: number) => {
      const characters = Math.floor((bytes - 8) / 2);
      return Buffer.from(`{"a":"${'é'.repeat(characters)}"}${' '.repeat(bytes - 8 - 2 * characters)}`, 'utf8');
    };
    expect(padded(MAX_BODY_BYTES).length).toBe(MAX_BODY_BYTES);
    expect((await sendBytes(padded(MAX_BODY_BYTES))).status).toBe(200);
    expect(padded(MAX_BODY_BYTES + 1).length).toBe(MAX_BODY_BYTES + 1);
    expect(await sendBytes(padded(MAX_BODY_BYTES + 1))).toEqual({
      status: 413,
      body: {
        code: 'payload_too_large',
        status: 413,
        message: `The request body is ${MAX_BODY_BYTES + 1} bytes; the limit is ${MAX_BODY_BYTES} bytes.`,
      },
    });
  });
});

describe('media types', () => {
  it.each([
    ['application/json ; charset=utf-8', 'application/json; charset=utf-8'],
    ['application/json;', 'application/json'],
    ['Application/JSON;Charset=UTF-8', 'application/json; charset=utf-8'],
    ['application/problem+json', 'application/problem+json'],
    ['text/plain', 'text/plain'],
  ])('normalises %j to %j', (sent, seen) => {
    expect(normalizeMediaType(sent)).toBe(seen);
  });

  it.each(['application/json ; charset=utf-8', 'application/json;', 'APPLICATION/JSON', 'application/vnd.petstore+json'])(
    'accepts the JSON Content-Type %j',
    async (contentType) => {
      expect((await sendText('{"a":1}', contentType)).status).toBe(200);
    },
  );
});

describe('charsets', () => {
  const otherCharset = refusal(
    'unsupported_media_type',
    "The request body must be UTF-8 JSON: send 'Content-Type: application/json', with no other charset.",
  );

  it.each([
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'application/json; charset="utf-8"',
    'application/json; charset=utf8',
  ])('accepts %j: UTF-8 by one of its labels', async (contentType) => {
    expect(await sendText('{"a":1}', contentType)).toEqual({ status: 200, body: { received: { a: 1 } } });
  });

  it.each([
    'application/json; charset=utf-16',
    'application/json; charset="UTF-16"',
    'application/json; charset = utf-16',
    'application/json; charset=iso-8859-1',
    'application/json; charset=latin1',
    'application/json; charset=utf-8; charset=utf-16',
    'application/json; charset=',
    'application/json; charset=no-such-charset',
    'application/problem+json; charset=us-ascii',
  ])('refuses %j with 400 unsupported_media_type, though the body is UTF-8 JSON', async (contentType) => {
    expect(await sendBytes(Buffer.from('{"a":1}', 'utf8'), contentType)).toEqual(otherCharset);
  });
});

describe('content codings', () => {
  const coded = refusal('unsupported_media_type', 'The request body must be sent as it is, without a Content-Encoding (not compressed).');
  const withEncoding = (bytes: Uint8Array, contentEncoding: string) =>
    send({ bodyBytes: bytes, headers: { 'content-type': 'application/json', 'content-encoding': contentEncoding } });

  it('refuses a gzip body, which would otherwise be read as JSON (and found not to be)', async () => {
    expect(await withEncoding(gzipSync('{"a":1}'), 'gzip')).toEqual(coded);
  });

  it.each(['gzip', 'GZIP', 'deflate', 'br', 'x-gzip', 'identity, gzip', 'no-such-coding'])(
    'refuses %j even when the body is plain JSON',
    async (contentEncoding) => {
      expect(await withEncoding(Buffer.from('{"a":1}'), contentEncoding)).toEqual(coded);
    },
  );

  it.each(['identity', 'Identity', ''])('accepts %j: the body as it is', async (contentEncoding) => {
    expect(await withEncoding(Buffer.from('{"a":1}'), contentEncoding)).toEqual({ status: 200, body: { received: { a: 1 } } });
  });
});
