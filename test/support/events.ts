/** API Gateway events and a Lambda context, as the deployed functions receive them. */
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';

export const HOST = 'pets.example.test';
export const BASE_URL = `http://${HOST}/v1`;

export interface EventInit {
  readonly method?: 'GET' | 'POST';
  readonly resource?: string;
  readonly path?: string;
  readonly headers?: Record<string, string>;
  readonly query?: Record<string, string | string[]>;
  readonly pathParameters?: Record<string, string>;
  readonly body?: string | null;
  /** The body's bytes instead: sent base64-encoded, as API Gateway does when every media type is binary. */
  readonly bodyBytes?: Uint8Array;
}

/** An API Gateway REST proxy event, as it reaches a handler after the authorizer allowed it. */
export const apiEvent = ({
  method = 'GET',
  resource = '/pets',
  path = resource,
  headers = {},
  query,
  pathParameters,
  body = null,
  bodyBytes,
}: EventInit = {}): APIGatewayProxyEvent => {
  const allHeaders = { Host: HOST, 'X-Forwarded-Proto': 'http', ...headers };
  const multiQuery = query && Object.fromEntries(Object.entries(query).map(([name, value]) => [name, [value].flat()]));
  return {
    httpMethod: method,
    resource,
    path: `/v1${path}`,
    headers: allHeaders,
    multiValueHeaders: Object.fromEntries(Object.entries(allHeaders).map(([name, value]) => [name, [value]])),
    queryStringParameters: multiQuery ? Object.fromEntries(Object.entries(multiQuery).map(([n, v]) => [n, v.at(-1) ?? ''])) : null,
    multiValueQueryStringParameters: multiQuery ?? null,
    pathParameters: pathParameters ?? null,
    stageVariables: null,
    body: bodyBytes ? Buffer.from(bodyBytes).toString('base64') : body,
    isBase64Encoded: bodyBytes !== undefined,
    requestContext: {
      accountId: '123456789012',
      apiId: 'a1b2c3d4e5',
      authorizer: { keyId: '0123456789ab', keyHash: '0123456789ab'.padEnd(64, '0'), principalId: '0123456789ab' },
      domainName: HOST,
      httpMethod: method,
      path: `/v1${path}`,
      protocol: 'HTTP/1.1',
      requestId: `req-${randomUUID()}`,
      requestTimeEpoch: Date.now(),
      resourceId: 'abc123',
      resourcePath: resource,
      stage: 'v1',
      identity: { sourceIp: '203.0.113.7', userAgent: 'vitest' } as APIGatewayProxyEvent['requestContext']['identity'],
    },
  };
};

export const context: Context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'pet-store-test',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:pet-store-test',
  memoryLimitInMB: '256',
  awsRequestId: 'lambda-request-1',
  logGroupName: '/aws/lambda/pet-store-test',
  logStreamName: 'stream',
  getRemainingTimeInMillis: () => 10_000,
  done: () => {},
  fail: () => {},
  succeed: () => {},
};


/** The method a token event asks about: GET /pets on stage v1. */
export const METHOD_ARN = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/v1/GET/pets';

/** A TOKEN authorizer event for this Authorization header value. */
export const tokenEvent = (authorizationToken: string, methodArn = METHOD_ARN): APIGatewayTokenAuthorizerEvent => ({
  type: 'TOKEN',
  methodArn,
  authorizationToken,
});
