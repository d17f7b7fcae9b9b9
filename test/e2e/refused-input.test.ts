/**
 * Input the API refuses over HTTP, through the local server as API Gateway passes it on: a body
 * that repeats a member name, a body that is not UTF-8, a name with a control character or a lone
 * surrogate, a query on GET /pets/{petId}, a body compressed or labelled with another charset, and
 * a path a URL parser would rewrite. Each is a 4xx that names the problem, and nothing is stored.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccessLogLine } from '../../shared/access-log';
import { GATEWAY_REQUEST_ID_HEADER } from '../../shared/gateway-responses';
import { errorCodeOf, rawClient, type RawClient, type RawRequest } from '../support/hostile-http';
import { allPets, expectError, startLocalApi, type LocalApi } from '../support/local-api';

let api: LocalApi;
let raw: RawClient;
let rex: { id: number };
const accessLines: AccessLogLine[] = [];
beforeAll(async () => {
  api = await startLocalApi({ accessLog: (line) => void accessLines.push(line) });
  raw = rawClient(api.url);
  rex = await api.petStore.pets.create({ name: 'Rex', categoryId: 1 });
});
afterAll(async () => {
  raw?.close();
  await api?.close();
});

const post = (body: string | Uint8Array) => api.call('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
const storedPets = () => allPets(api, { pageSize: 100 });

/** Sends a create the API must refuse, checks the 400 and its message, and that no pet appeared. */
const expectRefusedCreate = async (body: string | Uint8Array, code: string, message: string) => {
  const before = await storedPets();
  const error = await expectError(await post(body), 400, code);
  expect(error.message).toBe(message);
  expect(await storedPets()).toEqual(before);
};

describe('a body that repeats a member name (I-JSON, RFC 7493)', () => {
  const repeats = (name: string) =>
    `The request body repeats the member name '${name}' in one object; names must be unique (I-JSON, RFC 7493).`;

  it('is 400 invalid_json, where JSON.parse would keep the last value', async () => {
    await expectRefusedCreate('{"name":"Rex","name":"Max","categoryId":1}', 'invalid_json', repeats('name'));
  });

  it('compares names after unescaping, and looks into nested objects', async () => {
    await expectRefusedCreate('{"name":"Rex","n\\u0061me":"Max","categoryId":1}', 'invalid_json', repeats('name'));
    await expectRefusedCreate('{"name":"Rex","categoryId":1,"extra":{"a":1,"a":2}}', 'invalid_json', repeats('a'));
  });
});

describe('a body that is not UTF-8', () => {
  it.each([
    ['Latin-1 (é as 0xE9)', [0xe9]],
    ['a stray continuation byte', [0x80]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
  ])('is 400 invalid_json for %s, rather than a pet named with U+FFFD', async (_, bytes) => {
    const body = Buffer.concat([Buffer.from('{"name":"Caf'), Buffer.from(bytes), Buffer.from('","categoryId":1}')]);
    await expectRefusedCreate(body, 'invalid_json', 'The request body is not UTF-8 text.');
  });

  it('stores UTF-8 names exactly as sent', async () => {
    const response = await post(Buffer.from('{"name":"Café 🐕","categoryId":1}', 'utf8'));
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ name: 'Café 🐕' });
  });
});

describe('a name with a control character or a lone surrogate', () => {
  const CONTROL = "Invalid field 'name': must not contain control characters (U+0000 to U+001F, U+007F to U+009F).";
  it.each([
    ['NUL', 'Rex\u0000'],
    ['a tab', 'Rex\tMax'],
    ['a line feed', 'Rex\nMax'],
    ['DEL', 'Rex\u007f'],
    ['a C1 control (U+0085)', 'Rex\u0085'],
  ])('is 400 validation_failed for %s', async (_, name) => {
    await expectRefusedCreate(JSON.stringify({ name, categoryId: 1 }), 'validation_failed', CONTROL);
  });

  it('is 400 validation_failed for a lone surrogate (escaped, so the body itself is UTF-8)', async () => {
    const body = JSON.stringify({ name: 'Rex\ud800', categoryId: 1 });
    expect(body).toContain('\\ud800');
    await expectRefusedCreate(body, 'validation_failed', "Invalid field 'name': must be well-formed Unicode (no lone surrogates).");
  });
});

describe('a query on GET /pets/{petId}', () => {
  it('is 400 validation_failed naming an unknown parameter', async () => {
    expect((await expectError(await api.call(`/pets/${rex.id}?x=1`), 400, 'validation_failed')).message).toBe(
      "Unknown query parameter 'x'.",
    );
  });

  it('is 400 validation_failed for a repeated parameter', async () => {
    expect((await expectError(await api.call(`/pets/${rex.id}?x=1&x=2`), 400, 'validation_failed')).message).toBe(
      "Query parameter 'x' must not be repeated.",
    );
  });

  it('still answers the pet without a query, or with an empty one', async () => {
    expect((await api.call(`/pets/${rex.id}`)).status).toBe(200);
    expect((await api.call(`/pets/${rex.id}?`)).status).toBe(200);
  });
});

describe('a body sent compressed, or labelled with a charset other than UTF-8', () => {
  const PET = '{"name":"Rex","categoryId":1}';
  /** A raw create (fetch would set its own framing), its answer's status, code and message, and whether a pet appeared. */
  const rawCreate = async (headers: RawRequest['headers'], body: string | Uint8Array) => {
    const before = await storedPets();
    const answer = await raw.send({
      method: 'POST',
      target: '/v1/pets',
      headers: { Authorization: `Bearer ${api.key}`, ...headers },
      body,
    });
    const message = answer.status >= 300 ? (JSON.parse(answer.text) as { message: string }).message : undefined;
    return { status: answer.status, code: errorCodeOf(answer), message, stored: (await storedPets()).length - before.length };
  };
  const compressed = {
    status: 400,
    code: 'unsupported_media_type',
    message: 'The request body must be sent as it is, without a Content-Encoding (not compressed).',
    stored: 0,
  };

  it('is 400 unsupported_media_type for a gzip body: the API enables no compression, so it is never read as JSON', async () => {
    expect(await rawCreate({ 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, gzipSync(PET))).toEqual(compressed);
  });

  it('is 400 unsupported_media_type for any content coding, sent in one header or two, even over plain JSON', async () => {
    expect(await rawCreate({ 'Content-Type': 'application/json', 'Content-Encoding': 'deflate' }, PET)).toEqual(compressed);
    expect(await rawCreate({ 'Content-Type': 'application/json', 'Content-Encoding': ['identity', 'gzip'] }, PET)).toEqual(compressed);
  });

  it('is 400 unsupported_media_type for charset=utf-16 over a UTF-8 body, which would otherwise be stored as read', async () => {
    expect(await rawCreate({ 'Content-Type': 'application/json; charset=utf-16' }, PET)).toEqual({
      status: 400,
      code: 'unsupported_media_type',
      message: "The request body must be UTF-8 JSON: send 'Content-Type: application/json', with no other charset.",
      stored: 0,
    });
  });

  it('still stores a pet sent with Content-Encoding: identity and charset=UTF-8', async () => {
    const answer = await rawCreate({ 'Content-Type': 'application/json; charset=UTF-8', 'Content-Encoding': 'identity' }, PET);
    expect({ status: answer.status, stored: answer.stored }).toEqual({ status: 201, stored: 1 });
  });
});

describe('a path a URL parser would rewrite (a dot segment or a backslash)', () => {
  it.each(['/v1\\pets', '/v1/x/%2e%2e/pets', '/v1/x/../pets', '/v1/./pets', '/v1/pets/%2E%2E', '/v1/pets/..'])(
    '%s is 404 not_found, not the route it resolves to, and its access line names no route',
    async (path) => {
      const answer = await raw.send({ method: 'GET', target: `${path}?limit=1`, headers: { Authorization: `Bearer ${api.key}` } });
      expect({ status: answer.status, code: errorCodeOf(answer) }).toEqual({ status: 404, code: 'not_found' });
      const line = accessLines.find(({ requestId }) => requestId === answer.headers.get(GATEWAY_REQUEST_ID_HEADER));
      expect(line).toMatchObject({ resourcePath: '-', status: '404', gatewayResponse: 'MISSING_AUTHENTICATION_TOKEN' });
    },
  );
});
