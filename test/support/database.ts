/**
 * The DynamoDB timeout of the functions under test, and clients made as they make theirs. The
 * product's own setting (DYNAMODB_TIMEOUT_MS, shared/config.ts) gives it: vitest.config.ts sets it
 * long enough for DynamoDB Local on a busy machine, where the deployed default would turn its slow
 * answers into 503s.
 */
import { dynamoDBTimeouts } from '../../shared/config';
import { createDocumentClient, DYNAMODB_DEFAULTS, type DynamoDBOptions } from '../../shared/dynamodb';

/** Milliseconds each attempt of a function's DynamoDB call has in this run. */
export const databaseTimeoutMs = (): number => dynamoDBTimeouts().requestTimeout ?? DYNAMODB_DEFAULTS.requestTimeout;

/** A client on `endpoint` with the functions' settings and this run's timeout: for a server or handlers under test. */
export const functionsClient = (endpoint: string, options: DynamoDBOptions = {}) =>
  createDocumentClient({ ...dynamoDBTimeouts(), endpoint, ...options });

/** A client with this run's timeout, and any other setting given: for a test's own reads and writes. */
export const databaseClient = (options: DynamoDBOptions) => createDocumentClient({ ...dynamoDBTimeouts(), ...options });
