/**
 * The local gateway's access line: one per answer, under the request id the client got, with the
 * fields of the stage's access log (shared/access-log.ts) filled as API Gateway fills them, `-`
 * for what a refusal never reached.
 */
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { ACCESS_LOG_FIELDS, type AccessLogLine } from '../../../shared/access-log';
import { AUTHORIZER_REFUSAL } from '../../../shared/auth-policy';
import { createGateway, type GatewayOptions, type GatewayRequest } from '../../../tools/local-server/gateway';

const KEY_ID = '0123456789ab';
const allowed: APIGatewayAuthorizerResult = {
  principalId: KEY_ID,
  usageIdentifierKey: 'usage-key',
  policyDocument: {
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: 'execute-api:Invoke', Resource: 'arn:aws:execute-api:*' }],
  },
  context: { keyId: KEY_ID, keyHash: 'f'.repeat(64), plan: 'partner' },
};

const request = (url: string, token?: string): GatewayRequest => ({
  method: 'GET',
  url,
  headers: [['User-Agent', 'curl/8.0'], ...(token === undefined ? [] : [['Authorization', `Bearer ${token}`] as const])],
  readBody: async () => Buffer.alloc(0),
  sourceIp: '203.0.113.7',
});

const gatewayLogging = (options: Partial<GatewayOptions> = {}) => {
  const lines: AccessLogLine[] = [];
  const gateway = createGateway({
    handlers: { listPets: async () => ({ statusCode: 200, headers: {}, body: '[]' }) },
    authorizer: async (event) => {
      if (event.authorizationToken.endsWith('refused_key_0000000000')) throw new Error(AUTHORIZER_REFUSAL);
      return allowed;
    },
    plans: { default: { rateLimit: 1_000, burstLimit: 1_000 }, partner: { rateLimit: 1_000, burstLimit: 1_000 } },
    accessLog: (line) => void lines.push(line),
    ...options,
  });
  /** The answer and its one access line, which must carry the answer's request id. */
  const send = async (url: string, token?: string) => {
    const before = lines.length;
    const response = await gateway(request(url, token));
    expect(lines.length - before).toBe(1);
    const line = lines.at(-1)!;
    expect(line.requestId).toBe(response.headers?.['x-amzn-RequestId']);
    expect(Object.keys(line)).toEqual(Object.keys(ACCESS_LOG_FIELDS));
    return { response, line };
  };
  return { send };
};

describe("the local gateway's access line", () => {
  it("names the key by its id and plan, the route, the function's status and the latencies of an answered request", async () => {
    const { line } = await gatewayLogging().send('/v1/pets?limit=1', 'petstore_allowed_key_0000000000');
    expect(line).toMatchObject({
      apiId: 'local',
      httpMethod: 'GET',
      resourcePath: '/pets',
      status: '200',
      responseLength: '2',
      integrationStatus: '200',
      keyId: KEY_ID,
      plan: 'partner',
      authorizerStatus: '200',
      gatewayResponse: '-',
      sourceIp: '203.0.113.7',
    });
    // Nothing the client wrote: its User-Agent, or the path as it sent it.
    expect(JSON.stringify(line)).not.toMatch(/curl|\/v1\/pets/);
    for (const field of ['requestTime', 'responseLatency', 'integrationLatency', 'authorizerLatency'] as const) {
      expect(line[field], field).toMatch(/^\d+$/);
    }
  });

  it("names the gateway's own refusals, with '-' for what the request never reached", async () => {
    const { send } = gatewayLogging({ throttle: { rate: 0.001, burst: 1 } });
    expect((await send('/v1/nowhere', 'petstore_allowed_key_0000000000')).line).toMatchObject({
      status: '404',
      resourcePath: '-',
      keyId: '-',
      gatewayResponse: 'MISSING_AUTHENTICATION_TOKEN',
    });
    expect((await send('/v1/pets')).line).toMatchObject({ status: '401', authorizerStatus: '-', gatewayResponse: 'UNAUTHORIZED' });
    expect((await send('/v1/pets', 'petstore_refused_key_0000000000')).line).toMatchObject({
      status: '401',
      resourcePath: '/pets',
      keyId: '-',
      authorizerStatus: '401',
      gatewayResponse: 'UNAUTHORIZED',
    });
    await send('/v1/pets', 'petstore_allowed_key_0000000000'); // the stage's one token
    expect((await send('/v1/pets', 'petstore_allowed_key_0000000000')).line).toMatchObject({
      status: '429',
      keyId: KEY_ID,
      plan: 'partner',
      integrationStatus: '-',
      gatewayResponse: 'THROTTLED',
    });
  });

  it.each([
    ['a backslash', '/v1\\pets'],
    ['a percent-encoded dot-dot segment', '/v1/x/%2e%2e/pets'],
    ['a dot segment', '/v1/./pets'],
    ['a dot-dot segment in place of a petId', '/v1/pets/..'],
    ['a percent-encoded backslash in place of a petId', '/v1/pets/%5C'],
  ])('answers a path with %s as no route, and logs no route, rather than the route it might resolve to', async (_, path) => {
    const { response, line } = await gatewayLogging().send(`${path}?limit=1`, 'petstore_allowed_key_0000000000');
    expect(response.statusCode).toBe(404);
    expect(line).toMatchObject({
      status: '404',
      resourcePath: '-',
      authorizerStatus: '-',
      gatewayResponse: 'MISSING_AUTHENTICATION_TOKEN',
    });
  });
});
