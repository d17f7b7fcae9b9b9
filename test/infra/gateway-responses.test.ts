/**
 * The deployed gateway responses and the local server must answer alike. Each synthesized
 * AWS::ApiGateway::GatewayResponse is rendered as API Gateway would render it for a request,
 * and compared with what the local server sends for a request that provokes the same type.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { GATEWAY_REQUEST_ID_HEADER, type GatewayResponseType } from '../../shared/gateway-responses';
import { startLocalServer, type LocalServer } from '../../tools/local-server/server';
import { GATEWAY_MAX_BODY_BYTES } from '../../tools/local-server/gateway';
import { functionsClient } from '../support/database';
import { startLocalApi, type LocalApi } from '../support/local-api';
import { resourcesOf, synthStage } from './synth';

interface Rendered {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const { template: stagingTemplate } = synthStage('staging');

/** API Gateway's rendering: static values unquoted, request parameters read from the request. */
const render = (type: GatewayResponseType, requestHeaders: Record<string, string>, template = stagingTemplate): Rendered => {
  const resource = resourcesOf(template, 'AWS::ApiGateway::GatewayResponse').find(({ properties }) => properties.ResponseType === type);
  if (!resource) throw new Error(`no gateway response for ${type}`);
  const { StatusCode, ResponseParameters, ResponseTemplates } = resource.properties as {
    StatusCode: string;
    ResponseParameters: Record<string, string>;
    ResponseTemplates: Record<string, string>;
  };
  const headers: Record<string, string> = {};
  for (const [parameter, value] of Object.entries(ResponseParameters)) {
    const name = parameter.replace(/^gatewayresponse\.header\./, '').toLowerCase();
    const fromRequest = /^method\.request\.header\.(.+)$/.exec(value)?.[1];
    headers[name] = fromRequest === undefined ? value.replace(/^'(.*)'$/, '$1') : (requestHeaders[fromRequest] ?? '');
  }
  return { status: Number(StatusCode), headers, body: ResponseTemplates['application/json'] ?? '' };
};

/** Headers HTTP itself adds, on both sides, and the request id API Gateway adds to every answer. */
const TRANSPORT = new Set([
  'date',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  GATEWAY_REQUEST_ID_HEADER.toLowerCase(),
]);

const received = async (response: Response): Promise<Rendered> => ({
  status: response.status,
  headers: Object.fromEntries([...response.headers].filter(([name]) => !TRANSPORT.has(name))),
  body: await response.text(),
});

let api: LocalApi;
let throttled: LocalApi;
let keysDown: LocalServer;

beforeAll(async () => {
  api = await startLocalApi();
  throttled = await startLocalApi({ throttle: { rate: 0.001, burst: 1 } });
  keysDown = await startLocalServer({
    client: functionsClient(inject('dynamodbEndpoint')),
    port: 0,
    tables: { ...api.tables, apiKeys: 'no-such-keys-table' },
  });
});
afterAll(async () => {
  await Promise.all([api.close(), throttled.close(), keysDown.close()]);
});

describe('gateway responses: the stack renders what the local server sends', () => {
  it('MISSING_AUTHENTICATION_TOKEN: an unknown route', async () => {
    const response = await api.call('/no-such-route');
    expect(await received(response)).toEqual(render('MISSING_AUTHENTICATION_TOKEN', {}));
  });

  it('UNAUTHORIZED: no key, a malformed key, an unknown key', async () => {
    const headerSets: Array<Record<string, string>> = [
      {},
      { Authorization: 'Basic dXNlcjpwYXNz' },
      { Authorization: 'Bearer petstore_unknownunknownunknown' },
    ];
    for (const headers of headerSets) {
      const response = await api.call('/pets', { auth: false, headers });
      expect(await received(response)).toEqual(render('UNAUTHORIZED', headers));
    }
  });

  it('THROTTLED: over the stage rate', async () => {
    await throttled.call('/pets');
    const response = await throttled.call('/pets');
    expect(await received(response)).toEqual(render('THROTTLED', {}));
  });

  it("REQUEST_TOO_LARGE: a body over API Gateway's 10 MB", async () => {
    const response = await api.call('/pets', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: 'x'.repeat(GATEWAY_MAX_BODY_BYTES + 1),
    });
    expect(await received(response)).toEqual(render('REQUEST_TOO_LARGE', {}));
  });

  it('AUTHORIZER_CONFIGURATION_ERROR: the keys table cannot be read, so the authorizer throws; a 503 to retry', async () => {
    const response = await fetch(`${keysDown.url}/pets`, { headers: { Authorization: `Bearer ${api.key}` } });
    const rendered = render('AUTHORIZER_CONFIGURATION_ERROR', {});
    expect(await received(response)).toEqual(rendered);
    expect(rendered.status).toBe(503);
    expect(rendered.headers['retry-after']).toBe('1');
  });

  it('with several CORS origins, the error tells the browser its own origin may read it', () => {
    const { template } = synthStage('staging', { corsAllowedOrigins: ['https://a.example.com', 'https://b.example.com'] });
    const rendered = render('UNAUTHORIZED', { Origin: 'https://b.example.com' }, template);
    expect(rendered.headers).toMatchObject({
      'access-control-allow-origin': 'https://b.example.com',
      'access-control-expose-headers': expect.stringContaining('WWW-Authenticate'),
      vary: 'Origin',
      'www-authenticate': 'Bearer realm="pet-store"',
    });
  });
});
