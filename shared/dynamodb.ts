/**
 * The DynamoDB client every module shares, and the line between "the database is down" (503)
 * and "we have a bug" (500). Retries are the SDK's own, and short: a throttled call is retried
 * once, after at most RETRY_BACKOFF_MAX_MS, then answered 503. A hot partition must not hold
 * the functions for seconds of backoff, or the executions it holds multiply with the request
 * rate and starve every other route of the account's concurrency (docs/reliability.md).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDefaultUserAgentProvider } from '@aws-sdk/core/client';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import type { HttpHandlerOptions, HttpRequest, HttpResponse, MiddlewareStack, RequestHandler, SdkError } from '@smithy/types';
import { isServerError, isThrottlingError, isTransientError } from '@smithy/service-error-classification';

export interface DynamoDBOptions {
  /** A DynamoDB other than AWS's, e.g. DynamoDB Local. */
  readonly endpoint?: string;
  readonly region?: string;
  /** Attempts per call, the first included (SDK standard retry with backoff). */
  readonly maxAttempts?: number;
  /** Milliseconds to open a connection, and to wait for an answer once sent. */
  readonly connectionTimeout?: number;
  readonly requestTimeout?: number;
  /** What sends the requests in place of the SDK's HTTP handler (a benchmark's stand-in for DynamoDB), the rest of the SDK as it is. */
  readonly requestHandler?: RequestHandler<HttpRequest, HttpResponse, HttpHandlerOptions>;
}

/** The client's settings unless told otherwise (shared/config.ts reads the environment's). */
export const DYNAMODB_DEFAULTS = {
  maxAttempts: 2,
  connectionTimeout: 1_000,
  requestTimeout: 1_000,
} as const;

/**
 * The most a retry waits, whatever the error: a random wait below it (full jitter), so that the
 * requests one throttle refused do not all retry at once. The SDK's default waits up to 1 s, then
 * 2 s, after throttling.
 */
export const RETRY_BACKOFF_MAX_MS = 100;

/** What marks the failure of an attempt that singleAttempt says is not to be retried. */
const SINGLE_ATTEMPT = Symbol('single attempt');

/**
 * The SDK's standard retry (its quota included), with a short jittered wait before each retry;
 * none after a single attempt's failure (singleAttempt).
 */
class ShortRetries extends ConfiguredRetryStrategy {
  constructor(maxAttempts: number) {
    super(maxAttempts, () => Math.floor(Math.random() * RETRY_BACKOFF_MAX_MS));
  }

  override async refreshRetryTokenForRetry(...[token, errorInfo]: Parameters<ConfiguredRetryStrategy['refreshRetryTokenForRetry']>) {
    if ((errorInfo.error as { [SINGLE_ATTEMPT]?: true } | undefined)?.[SINGLE_ATTEMPT]) throw new Error('a single attempt');
    return super.refreshRetryTokenForRetry(token, errorInfo);
  }
}

/**
 * Sends a command once, however many attempts its client makes of others: what a call bounded by
 * a short deadline needs (the authorizer's last use), without a second client, and so a second
 * connection pool, for it. Its failure is marked as it leaves each attempt, and the client's retry
 * strategy (ShortRetries) declines to retry a marked one.
 */
export const singleAttempt = <Command extends object>(command: Command): Command => {
  (command as unknown as { readonly middlewareStack: MiddlewareStack<object, object> }).middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (error instanceof Error) Object.assign(error, { [SINGLE_ATTEMPT]: true });
        throw error;
      }
    },
    // Inside the retry (finalizeRequest), around the parsing of DynamoDB's answer: every attempt's
    // failure passes here. Unnamed: a document client's command stack is applied twice.
    { step: 'deserialize', priority: 'high' },
  );
  return command;
};

/**
 * The variable the request path's bundles define at build as the DynamoDB client's version
 * (infra/bundling.ts REQUEST_PATH_BUNDLING), as they leave out the package.json the client reads
 * it from. Written out in full where it is read: the build replaces that very expression.
 */
export const DYNAMODB_CLIENT_VERSION_VARIABLE = 'AWS_SDK_DYNAMODB_CLIENT_VERSION';

/** The client's user agent, with the version the build defined; the client's own where none is (unbundled). */
const bundledUserAgent = () => {
  const clientVersion = process.env.AWS_SDK_DYNAMODB_CLIENT_VERSION;
  return clientVersion ? { defaultUserAgentProvider: createDefaultUserAgentProvider({ serviceId: 'DynamoDB', clientVersion }) } : {};
};

export const createDocumentClient = (options: DynamoDBOptions = {}): DynamoDBDocumentClient => {
  const { endpoint, region, maxAttempts, connectionTimeout, requestTimeout, requestHandler } = { ...DYNAMODB_DEFAULTS, ...options };
  // DynamoDB Local accepts any credentials and region; AWS uses the default chains.
  const local =
    endpoint === undefined
      ? {}
      : {
          endpoint,
          region: region ?? process.env.AWS_REGION ?? 'us-east-1',
          ...(process.env.AWS_ACCESS_KEY_ID ? {} : { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
        };
  const client = new DynamoDBClient({
    retryStrategy: new ShortRetries(maxAttempts),
    // The strategy decides; this is what each attempt tells DynamoDB (amz-sdk-request: attempt=1; max=2).
    maxAttempts,
    // Without throwOnRequestTimeout the SDK only warns when an answer is late, and waits on.
    requestHandler: requestHandler ?? { connectionTimeout, requestTimeout, throwOnRequestTimeout: true },
    ...(region ? { region } : {}),
    ...local,
    ...bundledUserAgent(),
  });
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
};

/** The database could not answer (throttled, timed out, unreachable, failing): worth a retry later. */
export class DatabaseUnavailable extends Error {
  override readonly name = 'DatabaseUnavailable';

  constructor(readonly reason: string) {
    super(`The database is unavailable (${reason}).`);
  }
}

/** Rethrows a DynamoDB failure as DatabaseUnavailable when retrying later could help. */
export const classifyDatabaseError = (error: unknown): unknown => {
  if (!(error instanceof Error)) return error;
  // DynamoDB answered: a refused condition or transaction is its decision, even when the SDK flags
  // the answer as one it corrected its clock skew by (which it counts as transient).
  if (error.name === 'ConditionalCheckFailedException' || error.name === 'TransactionCanceledException') return error;
  const sdkError = error as SdkError & { code?: string };
  if (isThrottlingError(sdkError) || isTransientError(sdkError) || isServerError(sdkError) || isReplicatedWriteConflict(sdkError)) {
    return new DatabaseUnavailable(sdkError.code ?? sdkError.name);
  }
  return error;
};

/**
 * A write to a strongly consistent global table (MRSC) refused because another region wrote the
 * same item at the same time: retryable, and the retry sees the other write
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/V2globaltables_HowItWorks.html).
 * The SDK retries it once in each call, as its model marks it retryable.
 */
export const REPLICATED_WRITE_CONFLICT = 'ReplicatedWriteConflictException';

const isReplicatedWriteConflict = (error: Error): boolean => error.name === REPLICATED_WRITE_CONFLICT;

/** Calls of a write that met replicated write conflicts, each call's own SDK retry included, before it is DatabaseUnavailable. */
export const REPLICATED_WRITE_ATTEMPTS = 3;
/** Milliseconds, times the attempt, that a write waits at most before it is tried again after a conflict (full jitter). */
const CONFLICT_BACKOFF_MS = 25;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A write refused by its condition expression. `Item` is the item that stood in the way, when the
 * write asked for it (ReturnValuesOnConditionCheckFailure: ALL_OLD), in DynamoDB's attribute-value form.
 */
export const isConditionFailure = <Item = Record<string, unknown>>(error: unknown): error is Error & { Item?: Item } =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/** Why DynamoDB cancelled a transaction: one reason per item, in order (`Code` such as ConditionalCheckFailed). */
export interface CancellationReason<Item = Record<string, unknown>> {
  readonly Code?: string;
  readonly Item?: Item;
}

/** The reasons of a cancelled transaction; none for any other error. */
export const cancellationReasons = <Item = Record<string, unknown>>(error: unknown): Array<CancellationReason<Item> | undefined> =>
  error instanceof Error && error.name === 'TransactionCanceledException'
    ? ((error as { CancellationReasons?: Array<CancellationReason<Item>> }).CancellationReasons ?? [])
    : [];

/**
 * A transaction cancelled by throttling is the database being unavailable, like a throttled
 * write; any other cancellation is returned as it is, for the caller to decide.
 */
export const classifyCancellation = (error: unknown, reasons: ReadonlyArray<CancellationReason<unknown> | undefined>): unknown =>
  reasons.some((reason) => reason?.Code === 'ThrottlingError' || reason?.Code === 'ProvisionedThroughputExceeded')
    ? new DatabaseUnavailable('transaction throttled')
    : error;

/** Runs one DynamoDB call, classifying its failure. */
export const callDatabase = async <T>(call: () => Promise<T>): Promise<T> => {
  try {
    return await call();
  } catch (error) {
    throw classifyDatabaseError(error);
  }
};

/**
 * Runs one write to a strongly consistent global table: a replicated write conflict (once the
 * SDK's own retry has met it too) is tried again after a short random wait, a few times, then is
 * the database being unavailable (503 with Retry-After). Every other failure is callDatabase's.
 */
export const callReplicated = async <T>(call: () => Promise<T>): Promise<T> => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await callDatabase(call);
    } catch (error) {
      const conflict = error instanceof DatabaseUnavailable && error.reason === REPLICATED_WRITE_CONFLICT;
      if (!conflict || attempt >= REPLICATED_WRITE_ATTEMPTS) throw error;
      await sleep(CONFLICT_BACKOFF_MS * attempt * Math.random());
    }
  }
};
