/**
 * The local gateway on its own, with stand-in authorizers and handlers: what it answers when the
 * authorizer fails or its policy does not cover the method, when it reads a body (only once the
 * request is authorized), the event it hands a function, the 501 it answers itself, the bound
 * on its authorizer cache, and the cached answers a key change drops.
 */
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { logger } from '../../../shared/logger';
import type { Plans } from '../../../shared/plans';
import { AUTH_CACHE_MAX_ENTRIES } from '../../../tools/local-server/authorizer-cache';
import { LOCAL_STAGE_ENV, localApiGateway } from '../../../tools/local-server/api-gateway';
import { flushAuthorizerCache, stageAuthorizerCacheFlush } from '../../../shared/authorizer-cache';
import {
  createGateway,
  type BodyRefusal,
  type GatewayOptions,
  type GatewayRequest,
  type TokenAuthorizer,
} from '../../../tools/local-server/gateway';
import type { AccessLogLine } from '../../../shared/access-log';
import { routes, type Route } from '../../../shared/routes';

const allowAll: TokenAuthorizer = async () => policy('Allow');

function policy(
  effect: 'Allow' | 'Deny',
  usage: { usageIdentifierKey?: string; plan?: string } = { usageIdentifierKey: 'usage-key', plan: 'default' },
): APIGatewayAuthorizerResult {
  return {
    principalId: '0123456789ab',
    ...(usage.usageIdentifierKey === undefined ? {} : { usageIdentifierKey: usage.usageIdentifierKey }),
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Effect: effect, Action: 'execute-api:Invoke', Resource: 'arn:aws:execute-api:*' }],
    },
    context: { keyId: '0123456789ab', keyHash: '0123456789ab'.padEnd(64, '0'), ...(usage.plan ? { plan: usage.plan } : {}) },
  };
}

const request = (path: string, headers: Array<readonly [string, string]> = [['Authorization', 'Bearer petstore_key']]): GatewayRequest => ({
  method: 'GET',
  url: `/v1${path}`,
  headers,
  readBody: async () => Buffer.alloc(0),
  sourceIp: '203.0.113.7',
});

/** Plans no test here meets unless it means to. */
const ROOMY_PLANS: Plans = { default: { rateLimit: 10_000, burstLimit: 5_000 } };

const gatewayWith = (options: Partial<GatewayOptions> = {}) =>
  createGateway({
    handlers: { listPets: async () => ({ statusCode: 200, headers: {}, body: '[]' }) },
    authorizer: allowAll,
    plans: ROOMY_PLANS,
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

describe('the body, which the local gateway reads only once the request is authorized and metered', () => {
  /** A POST whose body is read through a spy, declaring `declared` bytes. */
  const post = (headers: Array<readonly [string, string]>, declared = 1_024, body: Buffer | BodyRefusal = Buffer.alloc(declared)) => {
    const readBody = vi.fn(async (_holder: string) => body);
    const sent: GatewayRequest = {
      method: 'POST',
      url: '/v1/pets',
      headers: [...headers, ['Content-Length', String(declared)]],
      readBody,
      sourceIp: '203.0.113.7',
    };
    return { sent, readBody };
  };
  const withKey: Array<readonly [string, string]> = [['Authorization', 'Bearer petstore_key']];
  const createPet = async () => ({ statusCode: 201, headers: {}, body: '{}' });

  it.each([
    ['no Authorization header', [] as Array<readonly [string, string]>, allowAll, 401],
    [
      'a key the authorizer refuses',
      withKey,
      async () => {
        throw new Error('Unauthorized');
      },
      401,
    ],
    ['a key whose scopes do not cover the route', withKey, async () => policy('Deny'), 403],
    ['a key on no usage plan', withKey, async () => policy('Allow', {}), 403],
  ] satisfies Array<[string, Array<readonly [string, string]>, TokenAuthorizer, number]>)(
    'never reads the body of a request with %s',
    async (_, headers, authorizer, status) => {
      const gateway = gatewayWith({ authorizer, handlers: { createPet } });
      const { sent, readBody } = post(headers);
      expect((await gateway(sent)).statusCode).toBe(status);
      expect(readBody).not.toHaveBeenCalled();
    },
  );

  it('never reads the body of a request over the throttle', async () => {
    const gateway = gatewayWith({ handlers: { createPet }, throttle: { rate: 0.001, burst: 1 } });
    expect((await gateway(post(withKey).sent)).statusCode).toBe(201);
    const { sent, readBody } = post(withKey);
    expect((await gateway(sent)).statusCode).toBe(429);
    expect(readBody).not.toHaveBeenCalled();
  });

  it('refuses a body declared over 10 MB with 413 before it runs the authorizer, as API Gateway does', async () => {
    const authorizer = vi.fn(allowAll);
    const gateway = gatewayWith({ authorizer, handlers: { createPet } });
    const { sent, readBody } = post([], 10 * 1024 * 1024 + 1);
    const response = await gateway(sent);
    expect(response.statusCode).toBe(413);
    expect(bodyOf(response)).toMatchObject({ code: 'payload_too_large', status: 413 });
    expect(authorizer).not.toHaveBeenCalled();
    expect(readBody).not.toHaveBeenCalled();
  });

  it('reads the body of an authorized request once, and hands its bytes to the function', async () => {
    let seen: APIGatewayProxyEvent | undefined;
    const gateway = gatewayWith({
      handlers: {
        createPet: async (event) => {
          seen = event;
          return createPet();
        },
      },
    });
    const { sent, readBody } = post(withKey, 3, Buffer.from('{}\n'));
    expect((await gateway(sent)).statusCode).toBe(201);
    // Held as the key's: the server counts each key's bodies apart.
    expect(readBody).toHaveBeenCalledExactlyOnceWith('0123456789ab');
    expect(Buffer.from(seen?.body ?? '', 'base64').toString()).toBe('{}\n');
  });

  /** A gateway on a plan of one request a day, its access lines kept. */
  const meteredGateway = () => {
    const accessLines: AccessLogLine[] = [];
    const gateway = gatewayWith({
      handlers: { createPet },
      plans: { default: { rateLimit: 1_000, burstLimit: 1_000, quota: { limit: 1, period: 'DAY' } } },
      accessLog: (line) => void accessLines.push(line),
    });
    return { gateway, accessLines };
  };

  it("answers a body the server cannot hold now (its bodies at once) with its own 503 and Retry-After, not charged to the key's quota", async () => {
    const { gateway, accessLines } = meteredGateway();
    const response = await gateway(post(withKey, 1_024, 'BODIES_IN_FLIGHT').sent);
    expect(response.statusCode).toBe(503);
    expect(bodyOf(response)).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(response.headers).toMatchObject({ 'Retry-After': '1' });
    expect(accessLines.at(-1)).toMatchObject({ status: '503', gatewayResponse: 'BODIES_IN_FLIGHT', keyId: '0123456789ab' });
    // The day's one request is still there.
    expect((await gateway(post(withKey).sent)).statusCode).toBe(201);
    expect((await gateway(post(withKey).sent)).statusCode).toBe(429);
  });

  it("answers a body past the key's share of the bodies at once with the key's own 429, not charged to its quota", async () => {
    const { gateway, accessLines } = meteredGateway();
    const response = await gateway(post(withKey, 1_024, 'KEY_BODIES_IN_FLIGHT').sent);
    expect(response.statusCode).toBe(429);
    expect(bodyOf(response)).toMatchObject({ code: 'too_many_requests', status: 429 });
    expect(response.headers).toMatchObject({ 'Retry-After': '1' });
    expect(accessLines.at(-1)).toMatchObject({ status: '429', gatewayResponse: 'THROTTLED', keyId: '0123456789ab' });
    expect((await gateway(post(withKey).sent)).statusCode).toBe(201);
  });

  it('answers a body that did not arrive by the deadline with 400 validation_failed, logged as BODY_TIMEOUT', async () => {
    const { gateway, accessLines } = meteredGateway();
    const response = await gateway(post(withKey, 1_024, 'BODY_TIMEOUT').sent);
    expect(response.statusCode).toBe(400);
    expect(bodyOf(response)).toMatchObject({ code: 'validation_failed', status: 400 });
    expect(accessLines.at(-1)).toMatchObject({ status: '400', gatewayResponse: 'BODY_TIMEOUT', keyId: '0123456789ab' });
  });

  it('answers a fault of its own (the body cannot be read for a reason it does not know) with 500, and still writes the access line', async () => {
    const { gateway, accessLines } = meteredGateway();
    const { sent } = post(withKey);
    const response = await gateway({ ...sent, readBody: async () => Promise.reject(new Error('stand-in fault')) });
    expect(response.statusCode).toBe(500);
    expect(bodyOf(response)).toMatchObject({ code: 'internal_error', status: 500 });
    expect(accessLines).toEqual([expect.objectContaining({ status: '500', gatewayResponse: 'DEFAULT_5XX' })]);
  });

  it('writes the one access line of a request whose client went away mid-body, with no status, since nothing was answered', async () => {
    const { gateway, accessLines } = meteredGateway();
    await gateway(post(withKey, 1_024, 'CLIENT_CLOSED').sent);
    expect(accessLines).toEqual([
      expect.objectContaining({ status: '-', responseLength: '-', gatewayResponse: 'CLIENT_CLOSED', keyId: '0123456789ab' }),
    ]);
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

/** A route the interface names but never specifies, whichever the route table has. */
const notImplemented = (() => {
  const route = (routes as readonly Route[]).find((candidate) => candidate.notImplemented);
  if (!route) throw new Error('The tests need a route that is not implemented.');
  return route;
})();
const notImplementedRequest = (headers?: Array<readonly [string, string]>): GatewayRequest => ({
  ...request(notImplemented.path, headers),
  method: notImplemented.method,
});

describe('the 501 the local gateway answers itself', () => {
  it('carries the CORS headers of the functions for a listed origin, and none for another', async () => {
    const gateway = gatewayWith({ corsAllowedOrigins: ['https://app.example.com', 'https://admin.example.com'] });
    const listed = await gateway(
      notImplementedRequest([
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
      notImplementedRequest([
        ['Authorization', 'Bearer petstore_key'],
        ['Origin', 'https://evil.example'],
      ]),
    );
    expect(other.headers).not.toHaveProperty('Access-Control-Allow-Origin');
  });

  it('writes one log line, with its request id, operation, status and error code', async () => {
    const response = await gatewayWith()(notImplementedRequest());
    const requestId = response.headers?.['x-amzn-RequestId'];
    expect(lines.filter((line) => line.requestId === requestId)).toEqual([
      expect.objectContaining({
        message: 'request',
        operation: notImplemented.operationId,
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

describe("the local gateway's authorizer cache and key changes", () => {
  /** An authorizer that names each token's key by the token (`Bearer <name>`), and counts its runs. */
  const perKey = () =>
    vi.fn<TokenAuthorizer>(async (event) => {
      const name = event.authorizationToken.slice('Bearer '.length);
      return { ...policy('Allow'), context: { keyId: name, keyHash: `hash-of-${name}` } };
    });
  const as = (name: string, scheme = 'Bearer') => request('/pets', [['Authorization', `${scheme} ${name}`]]);

  it("drops every cached answer of a changed key, and only that key's", async () => {
    const authorizer = perKey();
    const gateway = gatewayWith({ authorizer, authCacheTtlSeconds: 300 });
    for (const scheme of ['Bearer', 'bearer']) await gateway(as('changed', scheme));
    await gateway(as('unchanged'));
    expect(gateway.authCacheSize()).toBe(3);

    gateway.keyChanged('hash-of-changed');

    expect(gateway.authCacheSize()).toBe(1);
    authorizer.mockClear();
    await gateway(as('unchanged'));
    expect(authorizer).not.toHaveBeenCalled();
    await gateway(as('changed'));
    expect(authorizer).toHaveBeenCalledTimes(1);
  });

  it('does not cache an answer the authorizer gave while a key changed: it may be from before the change', async () => {
    let changeMeanwhile: () => void = () => undefined;
    const authorizer = vi.fn<TokenAuthorizer>(async () => {
      changeMeanwhile();
      return policy('Allow');
    });
    const gateway = gatewayWith({ authorizer, authCacheTtlSeconds: 300 });
    changeMeanwhile = () => gateway.keyChanged('0123456789ab'.padEnd(64, '0'));

    expect((await gateway(request('/pets'))).statusCode).toBe(200);

    expect(gateway.authCacheSize()).toBe(0);
  });

  it("drops every key's cached answers on the stage's flush, made as the key-audit function makes it", async () => {
    const authorizer = perKey();
    const gateway = gatewayWith({ authorizer, authCacheTtlSeconds: 300 });
    for (const name of ['a', 'b']) await gateway(as(name));
    expect(gateway.authCacheSize()).toBe(2);

    await stageAuthorizerCacheFlush(LOCAL_STAGE_ENV, () => localApiGateway(gateway.flushAuthorizerCache))?.();

    expect(gateway.authCacheSize()).toBe(0);
    await gateway(as('a'));
    expect(authorizer).toHaveBeenCalledTimes(3);
  });

  it('refuses a flush of a stage other than its own, as API Gateway answers an unknown stage, and keeps its cache', async () => {
    const gateway = gatewayWith({ authCacheTtlSeconds: 300 });
    await gateway(request('/pets'));
    const calls = localApiGateway(gateway.flushAuthorizerCache);

    await expect(flushAuthorizerCache(calls, { restApiId: 'unknown-api', stageName: 'v1' })).rejects.toMatchObject({
      name: 'NotFoundException',
    });
    expect(gateway.authCacheSize()).toBe(1);
  });

  it('caches nothing while key changes cannot be followed, and caches again once they can', async () => {
    const authorizer = perKey();
    const gateway = gatewayWith({ authorizer, authCacheTtlSeconds: 300 });
    await gateway(as('a'));
    expect(gateway.authCacheSize()).toBe(1);

    gateway.followingKeyChanges(false);
    expect(gateway.authCacheSize()).toBe(0);
    await gateway(as('a'));
    await gateway(as('a'));
    expect(authorizer).toHaveBeenCalledTimes(3);
    expect(gateway.authCacheSize()).toBe(0);

    gateway.followingKeyChanges(true);
    await gateway(as('a'));
    await gateway(as('a'));
    expect(authorizer).toHaveBeenCalledTimes(4);
  });
});

describe('the local gateway and the usage plans', () => {
  const PLANS: Plans = {
    default: { rateLimit: 1_000, burstLimit: 1_000 },
    small: { rateLimit: 0.001, burstLimit: 2, quota: { limit: 1_000, period: 'DAY' } },
    quota: { rateLimit: 1_000, burstLimit: 1_000, quota: { limit: 2, period: 'DAY' } },
  };
  /** An authorizer that gives each token its own usage key, and the plan the token names (`Bearer <plan>-<n>`). */
  const perToken: TokenAuthorizer = async (event) => {
    const token = event.authorizationToken.slice('Bearer '.length);
    return policy('Allow', { usageIdentifierKey: `usage-${token}`, plan: token.split('-')[0] });
  };
  const as = (token: string) => request('/pets', [['Authorization', `Bearer ${token}`]]);
  const statuses = async (gateway: ReturnType<typeof gatewayWith>, token: string, count: number) => {
    const answers: Array<{ status: number; code?: string }> = [];
    for (let index = 0; index < count; index += 1) {
      const response = await gateway(as(token));
      answers.push({ status: response.statusCode, ...(response.statusCode === 200 ? {} : { code: bodyOf(response).code }) });
    }
    return answers;
  };

  it('throttles a key over its plan with 429 too_many_requests and Retry-After, and not another key', async () => {
    const gateway = gatewayWith({ authorizer: perToken, plans: PLANS });
    expect(await statuses(gateway, 'small-1', 3)).toEqual([{ status: 200 }, { status: 200 }, { status: 429, code: 'too_many_requests' }]);
    const refused = await gateway(as('small-1'));
    expect(refused.headers).toMatchObject({ 'Retry-After': expect.stringMatching(/^\d+$/) });
    expect(await statuses(gateway, 'small-2', 2)).toEqual([{ status: 200 }, { status: 200 }]);
    expect(await statuses(gateway, 'default-1', 5)).toEqual(Array.from({ length: 5 }, () => ({ status: 200 })));
  });

  it('answers a key over its quota with 429 quota_exceeded and Retry-After', async () => {
    const gateway = gatewayWith({ authorizer: perToken, plans: PLANS });
    expect(await statuses(gateway, 'quota-1', 3)).toEqual([{ status: 200 }, { status: 200 }, { status: 429, code: 'quota_exceeded' }]);
    expect((await gateway(as('quota-1'))).headers).toMatchObject({ 'Retry-After': expect.stringMatching(/^\d+$/) });
    expect(lines).toContainEqual(expect.objectContaining({ message: 'gateway', gatewayResponse: 'QUOTA_EXCEEDED', status: 429 }));
  });

  it('refuses with INVALID_API_KEY (403) when the authorizer names no usage key, no plan, or a plan that does not exist', async () => {
    for (const authorizer of [
      async () => policy('Allow', {}),
      async () => policy('Allow', { usageIdentifierKey: 'k' }),
      async () => policy('Allow', { usageIdentifierKey: 'k', plan: 'gold' }),
      // An object's own properties only: not what every object inherits.
      async () => policy('Allow', { usageIdentifierKey: 'k', plan: 'constructor' }),
    ]) {
      const response = await gatewayWith({ authorizer, plans: PLANS })(request('/pets'));
      expect(response.statusCode).toBe(403);
      expect(bodyOf(response)).toMatchObject({ code: 'forbidden', status: 403 });
    }
    expect(lines).toContainEqual(expect.objectContaining({ gatewayResponse: 'INVALID_API_KEY' }));
  });

  it("does not let a key's requests refused by its plan spend the stage throttle that all keys share", async () => {
    const gateway = gatewayWith({ authorizer: perToken, plans: PLANS, throttle: { rate: 0.001, burst: 5 } });
    // The noisy key's plan lets 2 through; its other 8 requests must not touch the stage's 5.
    expect((await statuses(gateway, 'small-1', 10)).filter(({ status }) => status === 200)).toHaveLength(2);
    expect(await statuses(gateway, 'default-1', 4)).toEqual([
      { status: 200 },
      { status: 200 },
      { status: 200 },
      { status: 429, code: 'too_many_requests' },
    ]);
  });

  it('applies the stage throttle over all keys after their plans', async () => {
    const gateway = gatewayWith({ authorizer: perToken, plans: PLANS, throttle: { rate: 0.001, burst: 3 } });
    const answers = [...(await statuses(gateway, 'default-1', 2)), ...(await statuses(gateway, 'default-2', 2))];
    expect(answers).toEqual([{ status: 200 }, { status: 200 }, { status: 200 }, { status: 429, code: 'too_many_requests' }]);
  });
});
