/** dynamoDBOptions: the DynamoDB the functions use, and how long each attempt waits, from their environment. */
import { describe, expect, it } from 'vitest';
import { DYNAMODB_TIMEOUT_VARIABLE, dynamoDBOptions, MAX_DYNAMODB_TIMEOUT_MS } from '../../shared/config';

describe('dynamoDBOptions', () => {
  it("sets nothing in an environment that names nothing: the client's defaults hold, as deployed", () => {
    expect(dynamoDBOptions({})).toEqual({});
    expect(dynamoDBOptions({ [DYNAMODB_TIMEOUT_VARIABLE]: '' })).toEqual({});
  });

  it('takes the endpoint from DYNAMODB_ENDPOINT, and both timeouts of an attempt from DYNAMODB_TIMEOUT_MS', () => {
    expect(dynamoDBOptions({ DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000', [DYNAMODB_TIMEOUT_VARIABLE]: '5000' })).toEqual({
      endpoint: 'http://127.0.0.1:8000',
      connectionTimeout: 5_000,
      requestTimeout: 5_000,
    });
    expect(dynamoDBOptions({ [DYNAMODB_TIMEOUT_VARIABLE]: String(MAX_DYNAMODB_TIMEOUT_MS) })).toMatchObject({
      requestTimeout: MAX_DYNAMODB_TIMEOUT_MS,
    });
  });

  it.each(['0', '-5', '1.5', '5s', String(MAX_DYNAMODB_TIMEOUT_MS + 1)])('refuses DYNAMODB_TIMEOUT_MS=%s, naming the setting', (value) => {
    expect(() => dynamoDBOptions({ [DYNAMODB_TIMEOUT_VARIABLE]: value })).toThrow(
      `${DYNAMODB_TIMEOUT_VARIABLE} must be a whole number of milliseconds from 1 to ${MAX_DYNAMODB_TIMEOUT_MS}.`,
    );
  });
});
