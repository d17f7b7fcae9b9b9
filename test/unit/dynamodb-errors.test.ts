/** classifyDatabaseError: which DynamoDB failures are "unavailable, retry later" (503) and which are bugs (500). */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { callDatabase, classifyDatabaseError, DatabaseUnavailable } from '../../shared/dynamodb';

const named = (name: string, extra: object = {}): Error => Object.assign(new Error(`${name} happened`), { name }, extra);

describe('classifyDatabaseError', () => {
  it.each(['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded'])(
    'makes %s (by name) DatabaseUnavailable',
    (name) => {
      const classified = classifyDatabaseError(named(name));
      expect(classified).toBeInstanceOf(DatabaseUnavailable);
      expect(classified).toMatchObject({ name: 'DatabaseUnavailable', reason: name });
    },
  );

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND'])('makes a network error with code %s DatabaseUnavailable', (code) => {
    const classified = classifyDatabaseError(Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code }));
    expect(classified).toBeInstanceOf(DatabaseUnavailable);
    expect((classified as DatabaseUnavailable).reason).toBe(code);
    expect((classified as Error).message).toBe(`The database is unavailable (${code}).`);
  });

  it.each([500, 503])('makes an answer with HTTP status %d DatabaseUnavailable', (httpStatusCode) => {
    const classified = classifyDatabaseError(named('InternalServerError', { $metadata: { httpStatusCode } }));
    expect(classified).toBeInstanceOf(DatabaseUnavailable);
  });

  it('makes an HTTP 429 DatabaseUnavailable', () => {
    expect(classifyDatabaseError(named('Whatever', { $metadata: { httpStatusCode: 429 } }))).toBeInstanceOf(DatabaseUnavailable);
  });

  it.each(['ConditionalCheckFailedException', 'TransactionCanceledException'])(
    'leaves %s as it is, even when the SDK corrected its clock skew on that answer (a decision, not an outage)',
    (name) => {
      const refusal = named(name, { $fault: 'client', $metadata: { httpStatusCode: 400, clockSkewCorrected: true } });
      expect(classifyDatabaseError(refusal)).toBe(refusal);
    },
  );

  it("makes a strongly consistent global table's ReplicatedWriteConflictException DatabaseUnavailable (503), not a bug", () => {
    const classified = classifyDatabaseError(
      named('ReplicatedWriteConflictException', { $fault: 'client', $retryable: {}, $metadata: { httpStatusCode: 400 } }),
    );
    expect(classified).toBeInstanceOf(DatabaseUnavailable);
    expect(classified).toMatchObject({ reason: 'ReplicatedWriteConflictException' });
  });

  it('makes an SDK request timeout DatabaseUnavailable', () => {
    expect(classifyDatabaseError(named('TimeoutError'))).toBeInstanceOf(DatabaseUnavailable);
  });

  it.each([
    ['ValidationException', named('ValidationException', { $metadata: { httpStatusCode: 400 } })],
    ['ResourceNotFoundException', named('ResourceNotFoundException', { $metadata: { httpStatusCode: 400 } })],
    ['a plain Error', new Error('bug')],
  ])('passes %s through unchanged', (_, error) => {
    expect(classifyDatabaseError(error)).toBe(error);
  });

  it("passes the SDK's own ConditionalCheckFailedException through unchanged", () => {
    const error = new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: { httpStatusCode: 400 } });
    expect(classifyDatabaseError(error)).toBe(error);
  });

  it.each(['a string', undefined, { code: 'ECONNREFUSED' }])('passes the non-Error %j through unchanged', (value) => {
    expect(classifyDatabaseError(value)).toBe(value);
  });
});

describe('callDatabase', () => {
  it("returns the call's result", async () => {
    await expect(callDatabase(async () => 42)).resolves.toBe(42);
  });

  it('rejects with DatabaseUnavailable when the call is throttled', async () => {
    await expect(callDatabase(() => Promise.reject(named('ThrottlingException')))).rejects.toBeInstanceOf(DatabaseUnavailable);
  });

  it('rejects with the original error otherwise', async () => {
    const error = named('ValidationException');
    await expect(callDatabase(() => Promise.reject(error))).rejects.toBe(error);
  });
});
