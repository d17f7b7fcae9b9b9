/**
 * The DynamoDB client every module shares, and the line between "the database is down" (503)
 * and "we have a bug" (500). Retries are the SDK's own, bounded so a client has its answer
 * within a few seconds, well inside the Lambda timeout.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SdkError } from '@smithy/types';
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
}

const DYNAMODB_DEFAULTS = {
  maxAttempts: 3,
  connectionTimeout: 1_000,
  requestTimeout: 1_000,
} as const;

export const createDocumentClient = (options: DynamoDBOptions = {}): DynamoDBDocumentClient => {
  const { endpoint, region, maxAttempts, connectionTimeout, requestTimeout } = { ...DYNAMODB_DEFAULTS, ...options };
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
    maxAttempts,
    // Without throwOnRequestTimeout the SDK only warns when an answer is late, and waits on.
    requestHandler: { connectionTimeout, requestTimeout, throwOnRequestTimeout: true },
    ...(region ? { region } : {}),
    ...local,
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
  const sdkError = error as SdkError & { code?: string };
  if (isThrottlingError(sdkError) || isTransientError(sdkError) || isServerError(sdkError)) {
    return new DatabaseUnavailable(sdkError.code ?? sdkError.name);
  }
  return error;
};

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
