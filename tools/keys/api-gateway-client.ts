/**
 * The key tool's API Gateway client, built here only. API Gateway's control plane allows a few
 * requests per second per account (CreateApiKey and DeleteApiKey 5,
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html) and refuses more with
 * 429 TooManyRequestsException. The SDK's adaptive retry mode
 * (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html) retries a
 * throttled call after a jittered backoff and slows the client's own sending rate for the calls
 * that follow; a bounded number of attempts, each with a bounded time, makes a lasting throttle
 * fail with the command's one line rather than hang.
 */
import { APIGatewayClient, type APIGatewayClientConfig } from '@aws-sdk/client-api-gateway';

/** Attempts per call, the first included. */
export const API_GATEWAY_MAX_ATTEMPTS = 4;

/**
 * The most a call waits between its attempts before it gives up: per retry, the SDK's throttling
 * backoff (random, below 1 s × 2^retry), at most 5 s more when the answer asks for it with
 * Retry-After, and at most 2 s for the adaptive mode's sending token (its lowest rate, 0.5 a second).
 */
export const API_GATEWAY_MAX_WAIT_MS = Array.from(
  { length: API_GATEWAY_MAX_ATTEMPTS - 1 },
  (_, retry) => 1_000 * 2 ** retry + 5_000 + 2_000,
).reduce((sum, wait) => sum + wait, 0);

/** Each attempt: to connect, then from sending to the whole answer. */
const CONNECTION_TIMEOUT_MS = 3_000;
const REQUEST_TIMEOUT_MS = 10_000;

/** At most this long per call, waits and attempts together. */
export const API_GATEWAY_MAX_CALL_MS = API_GATEWAY_MAX_WAIT_MS + API_GATEWAY_MAX_ATTEMPTS * (CONNECTION_TIMEOUT_MS + REQUEST_TIMEOUT_MS);

/** An API Gateway client of `region` (the SDK's default chain when undefined); `overrides` for tests (an HTTP handler, credentials). */
export const apiGatewayClientFor = (region: string | undefined, overrides: Partial<APIGatewayClientConfig> = {}): APIGatewayClient =>
  new APIGatewayClient({
    region,
    retryMode: 'adaptive',
    maxAttempts: API_GATEWAY_MAX_ATTEMPTS,
    requestHandler: { connectionTimeout: CONNECTION_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true },
    ...overrides,
  });
