/**
 * The local gateway on its own, with stand-in authorizers and handlers: what it answers when the
 * authorizer fails or its policy does not cover the method, the event it hands a function, the
 * 501 it answers itself, and the bound on its authorizer cache.
 */
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { logger } from '../../../shared/logger';
import { AUTH_CACHE_MAX_ENTRIES } from '../../../tools/local-server/authorizer-cache';
import { createGateway, type GatewayOptions, type GatewayRequest, type TokenAuthorizer } from '../../../tools/local-server/gateway';

const allowAll: TokenAuthorizer = async () => policy('Allow');

function policy(effect: 'Allow' | 'Deny'): APIGatewayAuthorizerResult {
  return {
    principalId: '0123456789ab',
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Effect: effect, Action: 'execute-api:Invoke', Resource: 'arn:aws:execute-api:*' }],
    },
    context: { keyId: '0123456789ab', keyHash: '0123456789ab'.padEnd(64, '0') },
  };
}

const request = (path: string, headers: Array<readonly [string, string]> = [['Authorization', 'Bearer petstore_key']]): GatewayRequest => ({
  method: 'GET',
  url: `/v1${path}`,
  headers,
  body: Buffer.alloc(0),
  sourceIp: '203.0.113.7',
});

const gatewayWith = (options: Partial<GatewayOptions> = {}) =>
  createGateway({
    handlers: { listPets: async () => ({ statusCode: 200, headers: {}, body: '[]' }) },
    authorizer: allowAll,
    ...options,
  });

const bodyOf = (response: APIGatewayProxyResult) => JSON.parse(response.body) as { code: string; status: number };

let lines: Array<Record<string, unknown>>;
beforeEach(() => {
  lines = [];
  vi.spyOn(logger, 'info').mockImplementation((message: unknown, ...fields: unknown[]) => {
    lines.push({ message, ...(fields[0] as object) });
  });
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('the local gateway and the authorizer', () => {
  it(
    'answers an authorizer that throws anything but "Unauthorized" as API Gateway does: ' +
      'AUTHORIZER_CONFIGURATION_ERROR, a 503 to retry',
    async () => {
      const gateway = gatewayWith({
        authorizer: async () => {
          throw new Error('Requested resource not found');
        },
      });
      const response = await gateway(request('/pets'));
      expect(response.statusCode).toBe(503);
      expect(bodyOf(response)).toMatchObject({ code: 'service_unavailable', status: 503 });
      expect(response.headers).toMatchObject({ 'Retry-After': '1' });
      expect(lines).toContainEqual(
        expect.objectContaining({ message: 'gateway', gatewayResponse: 'AUTHORIZER_CONFIGURATION_ERROR', status: 503 }),
      );
    },
  );

  it('answers 401 when the authorizer refuses with exactly "Unauthorized"', async () => {
    const gateway = gatewayWith({
      authorizer: async () => {
        throw new Error('Unauthorized');
      },
    });
    expect((await gateway(request('/pets'))).statusCode).toBe(401);
  });

  it('answers a policy that does not cover the method with 403 forbidden and the insufficient_scope challenge', async () => {
    const gateway = gatewayWith({ authorizer: async () => policy('Deny') });
    const response = await gateway(request('/pets'));
    expect(response.statusCode).toBe(403);
    expect(bodyOf(response)).toMatchObject({ code: 'forbidden', status: 403 });
    expect(response.headers).toMatchObject({ 'WWW-Authenticate': 'Bearer realm="pet-store", error="insufficient_scope"' });
    expect(lines).toContainEqual(expect.objectContaining({ gatewayResponse: 'ACCESS_DENIED', status: 403 }));
  });
});

describe('the event the local gateway hands a function', () => {
  it('names its own address as requestContext.domainName, whatever Host the client sent', async () => {
    let seen: APIGatewayProxyEvent | undefined;
    const gateway = gatewayWith({
      domainName: () => '127.0.0.1:3000',
      handlers: {
        listPets: async (event) => {
          seen = event;
          return { statusCode: 200, headers: {}, body: '[]' };
        },
      },
    });
    await gateway(
      request('/pets', [
        ['Host', 'evil.example'],
        ['Authorization', 'Bearer petstore_key'],
        ['X-Forwarded-Proto', 'https'],
      ]),
    );
    expect(seen?.requestContext.domainName).toBe('127.0.0.1:3000');
    expect(seen?.headers['X-Forwarded-Proto']).toBe('http');
  });
});

describe('the 501 the local gateway answers itself', () => {
  it('carries the CORS headers of the functions for a listed origin, and none for another', async () => {
    const gateway = gatewayWith({ corsAllowedOrigins: ['https://app.example.com', 'https://admin.example.com'] });
    const listed = await gateway(
      request('/store/orders', [
        ['Authorization', 'Bearer petstore_key'],
        ['Origin', 'https://admin.example.com'],
      ]),
    );
    expect(listed.statusCode).toBe(501);
    expect(listed.headers).toMatchObject({
      'Access-Control-Allow-Origin': 'https://admin.example.com',
      'Access-Control-Expose-Headers': expect.stringContaining('Retry-After'),
      Vary: 'Origin',
    });
    const other = await gateway(
      request('/store/orders', [
        ['Authorization', 'Bearer petstore_key'],
        ['Origin', 'https://evil.example'],
      ]),
    );
    expect(other.headers).not.toHaveProperty('Access-Control-Allow-Origin');
  });

  it('writes one log line, with its request id, operation, status and error code', async () => {
    const response = await gatewayWith()(request('/store/orders'));
    const requestId = response.headers?.['x-amzn-RequestId'];
    expect(lines.filter((line) => line.requestId === requestId)).toEqual([
      expect.objectContaining({
        message: 'request',
        operation: 'listStoreOrders',
        status: 501,
        errorCode: 'not_implemented',
        keyId: '0123456789ab',
      }),
    ]);
  });
});

describe('the authorizer cache of the local gateway', () => {
  it(`holds at most ${AUTH_CACHE_MAX_ENTRIES} tokens, however many header variants a client sends`, async () => {
    const authorizer = vi.fn(allowAll);
    const gateway = gatewayWith({ authorizer });
    const variants = AUTH_CACHE_MAX_ENTRIES + 200;
    for (let index = 0; index < variants; index += 1) {
      // Extra spaces make each header a token of its own, as API Gateway's cache keys them.
      expect((await gateway(request('/pets', [['Authorization', `Bearer${' '.repeat(index + 1)}petstore_key`]]))).statusCode).toBe(200);
    }
    expect(gateway.authCacheSize()).toBe(AUTH_CACHE_MAX_ENTRIES);
    // The newest variants are still cached; the oldest was forgotten and runs the authorizer again.
    authorizer.mockClear();
    await gateway(request('/pets', [['Authorization', `Bearer${' '.repeat(variants)}petstore_key`]]));
    expect(authorizer).not.toHaveBeenCalled();
    await gateway(request('/pets', [['Authorization', 'Bearer petstore_key']]));
    expect(authorizer).toHaveBeenCalledTimes(1);
  });

  it('drops the entries whose TTL has passed', async () => {
    let clock = new Date('2026-01-01T00:00:00Z').getTime();
    const gateway = gatewayWith({ authCacheTtlSeconds: 60, now: () => new Date(clock) });
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'BeArEr'])
      await gateway(request('/pets', [['Authorization', `${scheme} petstore_key`]]));
    expect(gateway.authCacheSize()).toBe(4);
    clock += 61_000;
    await gateway(request('/pets', [['Authorization', 'Bearer petstore_other']]));
    expect(gateway.authCacheSize()).toBe(1);
  });

  it('caches nothing with a TTL of 0', async () => {
    const gateway = gatewayWith({ authCacheTtlSeconds: 0 });
    await gateway(request('/pets'));
    expect(gateway.authCacheSize()).toBe(0);
  });
});
