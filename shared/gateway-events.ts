/**
 * The events and Lambda context API Gateway hands the functions, built in one place: the local
 * gateway builds each request's event here, the pre-traffic hook the events it sends a new version
 * (shared/release-checks.ts), and the tests and benchmarks build theirs the same way.
 */
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { BASE_PATH, STAGE_NAME } from './routes';
import { FUNCTION_TIMEOUT_SECONDS } from './stack';

/** How long a handler may run: the functions' timeout in the stack. */
export const HANDLER_TIMEOUT_MS = FUNCTION_TIMEOUT_SECONDS * 1000;

/** The account and API id of events built outside API Gateway (the local stand-in's, the hook's), in their ARNs. */
export const LOCAL_ACCOUNT_ID = '000000000000';
export const LOCAL_API_ID = 'local';

export type HeaderPairs = Iterable<readonly [string, string]>;

/** What the authorizer allowed: API Gateway hands its principal and context to the function. */
export interface Authorized {
  readonly principalId: string;
  readonly context?: APIGatewayAuthorizerResult['context'];
}

/** A key's authorization, for events built outside the gateway (a key id, hash and usage key id of the right shape). */
export const SOME_KEY: Authorized = {
  principalId: '0123456789ab',
  context: { keyId: '0123456789ab', keyHash: '0123456789ab'.padEnd(64, '0'), usageKeyId: 'local-0123456789ab', plan: 'default' },
};

export interface ProxyEventInit {
  readonly method?: string;
  /** The route's path template, e.g. `/pets/{petId}`. */
  readonly resource?: string;
  /** The path below the base path, as sent; by default the resource. */
  readonly path?: string;
  /** Headers in the client's own case; a name given more than once keeps every value. */
  readonly headers?: HeaderPairs | Readonly<Record<string, string>>;
  readonly query?: HeaderPairs | Readonly<Record<string, string | readonly string[]>>;
  readonly pathParameters?: Readonly<Record<string, string>>;
  /**
   * Bytes are passed base64-encoded, as API Gateway does when every media type is binary (the
   * stack's `binaryMediaTypes: ['*\/*']`); a string is passed as text, as it does otherwise.
   */
  readonly body?: Uint8Array | string | null;
  readonly authorized?: Authorized;
  readonly requestId?: string;
  /** The API's own host (`requestContext.domainName`): the URLs the functions write are built on it. */
  readonly domainName?: string;
  readonly sourceIp?: string;
  /** The scheme the client used, as API Gateway tells the function in `X-Forwarded-Proto`. */
  readonly forwardedProto?: string;
}

const pairsOf = (from: HeaderPairs | Readonly<Record<string, string | readonly string[]>>): Array<readonly [string, string]> =>
  Symbol.iterator in from
    ? [...(from as HeaderPairs)]
    : Object.entries(from as Record<string, string | readonly string[]>).flatMap(([name, value]) =>
        (typeof value === 'string' ? [value] : value).map((one) => [name, one] as const),
      );

const multiValue = (pairs: Iterable<readonly [string, string]>) => {
  // No prototype: a parameter or header named `constructor` or `__proto__` is just a name.
  const single: Record<string, string> = Object.create(null) as Record<string, string>;
  const multi: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const [name, value] of pairs) {
    single[name] = value; // like API Gateway: the last value wins in the single-value map
    (multi[name] ??= []).push(value);
  }
  return { single, multi, empty: Object.keys(single).length === 0 };
};

/** The REST API proxy event API Gateway sends a function, once the authorizer allowed the request. */
export const proxyEvent = ({
  method = 'GET',
  resource = '/pets',
  path = resource,
  headers = [],
  query = [],
  pathParameters = {},
  body = null,
  authorized = SOME_KEY,
  requestId = randomUUID(),
  domainName = 'localhost',
  sourceIp = '127.0.0.1',
  forwardedProto = 'http',
}: ProxyEventInit = {}): APIGatewayProxyEvent => {
  // API Gateway sets X-Forwarded-Proto and -For itself, whatever the client sent.
  const forwarded: Array<readonly [string, string]> = [
    ...pairsOf(headers).filter(([name]) => !/^x-forwarded-(proto|for)$/i.test(name)),
    ['X-Forwarded-Proto', forwardedProto],
    ['X-Forwarded-For', sourceIp],
  ];
  const allHeaders = multiValue(forwarded);
  const parameters = multiValue(pairsOf(query));
  const encoded = typeof body === 'string' || body === null ? body : body.length === 0 ? null : Buffer.from(body).toString('base64');
  return {
    resource,
    path,
    httpMethod: method,
    headers: allHeaders.single,
    multiValueHeaders: allHeaders.multi,
    queryStringParameters: parameters.empty ? null : parameters.single,
    multiValueQueryStringParameters: parameters.empty ? null : parameters.multi,
    pathParameters: Object.keys(pathParameters).length === 0 ? null : { ...pathParameters },
    stageVariables: null,
    body: encoded,
    isBase64Encoded: body instanceof Uint8Array && body.length > 0,
    requestContext: {
      accountId: LOCAL_ACCOUNT_ID,
      apiId: LOCAL_API_ID,
      authorizer: { principalId: authorized.principalId, ...authorized.context, integrationLatency: 0 },
      protocol: 'HTTP/1.1',
      httpMethod: method,
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp,
        user: null,
        userAgent: allHeaders.single['User-Agent'] ?? allHeaders.single['user-agent'] ?? null,
        userArn: null,
      },
      path: `${BASE_PATH}${path}`,
      stage: STAGE_NAME,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: LOCAL_API_ID,
      resourcePath: resource,
      domainName,
    },
  };
};

/** The method ARN API Gateway asks an authorizer about, for a method and a path below the base path. */
export const methodArn = (method: string, path: string): string =>
  `arn:aws:execute-api:local:${LOCAL_ACCOUNT_ID}:${LOCAL_API_ID}/${STAGE_NAME}/${method}${path}`;

/** The TOKEN authorizer event for an Authorization header value. */
export const tokenEvent = (authorizationToken: string, arn = methodArn('GET', '/pets')): APIGatewayTokenAuthorizerEvent => ({
  type: 'TOKEN',
  methodArn: arn,
  authorizationToken,
});

/**
 * A Lambda context for one invocation: its deadline is the functions' timeout from now. A context
 * `reused` for many invocations (tests, benchmarks) has the whole timeout left at each.
 */
export const lambdaContext = (functionName: string, { reused = false } = {}): Context => {
  const deadline = Date.now() + HANDLER_TIMEOUT_MS;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:${LOCAL_ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: '256',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => (reused ? HANDLER_TIMEOUT_MS : Math.max(0, deadline - Date.now())),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
};
