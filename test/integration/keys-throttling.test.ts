/**
 * The key tool under API Gateway's control-plane throttle (429 TooManyRequestsException): its
 * client (tools/keys/api-gateway-client.ts) retries in the SDK's adaptive mode, so a command whose
 * first calls are throttled succeeds, and a lasting throttle fails within the client's bound with
 * one line. API Gateway is an HTTP handler under the SDK's own retry middleware, answering as the
 * service does (x-amzn-ErrorType, Retry-After); aws-sdk-client-mock, which replaces `send` and so
 * the retries, mocks STS and CloudFormation. The clock is faked: the SDK's waits take no real time.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import type { APIGatewayClientConfig } from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { apiKeysRepository } from '../../shared/api-keys-repository';
import { API_GATEWAY_MAX_ATTEMPTS, API_GATEWAY_MAX_WAIT_MS, apiGatewayClientFor } from '../../tools/keys/api-gateway-client';
import { runKeysCommand } from '../../tools/keys/cli';
import { createTestTables, type TestTables } from '../support/tables';
import { describedStage } from '../support/stage-stack';

const ARN = 'arn:aws:sts::123456789012:assumed-role/KeyAdmin/alice';
const THROTTLED = {
  statusCode: 429,
  headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'TooManyRequestsException', 'retry-after': '1' },
  body: new TextEncoder().encode('{"message":"Too Many Requests"}'),
};
const answered = (body: unknown) => ({
  statusCode: 201,
  headers: { 'content-type': 'application/json' },
  body: new TextEncoder().encode(JSON.stringify(body)),
});

/**
 * API Gateway throttling its first `throttled` of the `expected` requests (it answers at once).
 * From the first request to the last, the command is in the SDK's calls and waits (its backoff,
 * its sending rate), with no other request out: then `isWaiting()`.
 */
const apiGatewayThrottling = (throttled: number, expected: number) => {
  const requests: string[] = [];
  const handle = async (request: { method: string; path: string }) => {
    requests.push(`${request.method} ${request.path}`);
    if (requests.length <= throttled) return { response: THROTTLED };
    return { response: answered(request.path === '/apikeys' ? { id: 'ak-throttled', enabled: true } : {}) };
  };
  const requestHandler = { handle, updateHttpClientConfig: () => undefined, httpHandlerConfigs: () => ({}) };
  return {
    requests,
    isWaiting: () => requests.length > 0 && requests.length < expected,
    requestHandler: requestHandler as unknown as APIGatewayClientConfig['requestHandler'],
  };
};

let tables: TestTables;
let aws: { sts: STSClient; cloudFormation: CloudFormationClient };

beforeEach(async () => {
  tables = await createTestTables();
  // "AWS" is the run's DynamoDB Local, through the SDK's own endpoint setting.
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', tables.endpoint);
  vi.stubEnv('AWS_REGION', 'eu-west-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
  aws = { sts: new STSClient({ region: 'eu-west-1' }), cloudFormation: new CloudFormationClient({ region: 'eu-west-1' }) };
  mockClient(aws.sts).on(GetCallerIdentityCommand).resolves({ Arn: ARN });
  mockClient(aws.cloudFormation)
    .on(DescribeStacksCommand)
    .resolves(describedStage(tables, { usagePlanIds: '{"default":"up-default"}', restApiId: 'a1b2c3d4e5' }));
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllEnvs();
});

/**
 * `create` on a stage against `apiGateway`, on a fake clock that moves only while the SDK waits
 * after a throttled answer; what it ended with and how long it took on that clock.
 */
const createOnStage = async (apiGateway: ReturnType<typeof apiGatewayThrottling>) => {
  const realPause = () => new Promise((resolve) => setImmediate(resolve));
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  const started = Date.now();
  let settled = false;
  const lines: string[] = [];
  const outcome = runKeysCommand(['create', '--name', 'throttled', '--stage', 'staging'], {
    env: {},
    print: (line) => lines.push(line),
    sts: aws.sts,
    cloudFormation: aws.cloudFormation,
    apiGateway: apiGatewayClientFor('eu-west-1', { requestHandler: apiGateway.requestHandler }),
  }).then(
    (code) => ({ code, error: undefined }),
    (error: unknown) => ({ code: undefined, error: error as Error }),
  );
  void outcome.finally(() => (settled = true));
  while (!settled) {
    await realPause();
    // In steps of 10 ms: the adaptive mode's token waits can be fractions of a millisecond, which a fake timer rounds to none.
    if (apiGateway.isWaiting()) await vi.advanceTimersByTimeAsync(10);
  }
  const elapsedMs = Date.now() - started;
  vi.useRealTimers();
  return { ...(await outcome), elapsedMs, lines };
};

describe('a key command under API Gateway throttling', () => {
  it(`succeeds when the first ${API_GATEWAY_MAX_ATTEMPTS - 1} calls are throttled`, async () => {
    const apiGateway = apiGatewayThrottling(API_GATEWAY_MAX_ATTEMPTS - 1, API_GATEWAY_MAX_ATTEMPTS + 1);

    const { code, error, elapsedMs, lines } = await createOnStage(apiGateway);

    expect(error).toBeUndefined();
    expect(code).toBe(0);
    expect(lines.join('\n')).toMatch(/^Created key /);
    expect(apiGateway.requests).toEqual([
      ...Array.from({ length: API_GATEWAY_MAX_ATTEMPTS }, () => 'POST /apikeys'),
      'POST /usageplans/up-default/keys',
    ]);
    // Each retry waited at least the Retry-After of 1 s.
    expect(elapsedMs).toBeGreaterThanOrEqual((API_GATEWAY_MAX_ATTEMPTS - 1) * 1_000);
    const keys = await apiKeysRepository({ client: tables.client, tables }).list();
    expect(keys.map((record) => [record.name, record.usageKeyId])).toEqual([['throttled', 'ak-throttled']]);
  });

  it(`fails with one line after ${API_GATEWAY_MAX_ATTEMPTS} attempts, within ${API_GATEWAY_MAX_WAIT_MS} ms, under a lasting throttle`, async () => {
    const apiGateway = apiGatewayThrottling(Number.POSITIVE_INFINITY, API_GATEWAY_MAX_ATTEMPTS);

    const { code, error, elapsedMs } = await createOnStage(apiGateway);

    expect(code).toBeUndefined();
    expect(error?.message).toBe('API Gateway refused to create an API key (TooManyRequestsException).');
    expect(apiGateway.requests).toEqual(Array.from({ length: API_GATEWAY_MAX_ATTEMPTS }, () => 'POST /apikeys'));
    expect(elapsedMs).toBeGreaterThanOrEqual((API_GATEWAY_MAX_ATTEMPTS - 1) * 1_000);
    expect(elapsedMs).toBeLessThanOrEqual(API_GATEWAY_MAX_WAIT_MS);
    expect(await apiKeysRepository({ client: tables.client, tables }).list()).toEqual([]);
  });
});
