/** safeErrorFields: what of an unexpected error may reach the logs. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { safeErrorFields } from '../../shared/logger';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('safeErrorFields', () => {
  it('keeps the name and message of an ordinary error', () => {
    expect(safeErrorFields(new TypeError('x is not a function'))).toEqual({
      errorName: 'TypeError',
      errorMessage: 'x is not a function',
    });
  });

  it('never includes the stack or other properties of the error', () => {
    const error = Object.assign(new Error('boom'), { request: { headers: { authorization: 'Bearer petstore_secret' } } });
    const fields = safeErrorFields(error);
    expect(Object.keys(fields).sort()).toEqual(['errorMessage', 'errorName']);
    const logged = JSON.stringify(fields);
    expect(logged).not.toContain('    at ');
    expect(logged).not.toContain('logger.test');
    expect(logged).not.toContain('petstore_secret');
  });

  it('redacts ARNs', () => {
    const { errorMessage } = safeErrorFields(
      new Error(
        'User: arn:aws:sts::123456789012:assumed-role/pets-fn/x is not authorized on ' +
          'arn:aws:dynamodb:eu-west-1:123456789012:table/Pets-ABC, retry',
      ),
    );
    expect(errorMessage).toBe('User: <arn> is not authorized on <arn>, retry');
    expect(errorMessage).not.toContain('123456789012');
  });

  it('redacts ARNs of other partitions', () => {
    expect(safeErrorFields(new Error('on arn:aws-cn:dynamodb:cn-north-1:1:table/T')).errorMessage).toBe('on <arn>');
  });

  it('redacts the configured table names wherever they appear', () => {
    vi.stubEnv('PETS_TABLE_NAME', 'PetStore-v1-PetsTable-1A2B3C');
    vi.stubEnv('API_KEYS_TABLE_NAME', 'PetStore-v1-ApiKeysTable-9Z8Y7X');
    const { errorMessage } = safeErrorFields(
      new Error(
        'Requested resource not found: Table: PetStore-v1-PetsTable-1A2B3C not found; ' +
          'PetStore-v1-ApiKeysTable-9Z8Y7X neither; PetStore-v1-PetsTable-1A2B3C again',
      ),
    );
    expect(errorMessage).toBe('Requested resource not found: Table: <table> not found; <table> neither; <table> again');
  });

  it('redacts the idempotency table, which createPet writes in the same transaction as its pet', () => {
    vi.stubEnv('IDEMPOTENCY_TABLE_NAME', 'PetStore-v1-IdempotencyTable-4D5E6F');
    const { errorMessage } = safeErrorFields(
      new Error('Requested resource not found: Table: PetStore-v1-IdempotencyTable-4D5E6F not found'),
    );
    expect(errorMessage).toBe('Requested resource not found: Table: <table> not found');
  });

  it('redacts the default table names when none is configured', () => {
    vi.stubEnv('PETS_TABLE_NAME', '');
    vi.stubEnv('API_KEYS_TABLE_NAME', '');
    expect(safeErrorFields(new Error('Cannot do operations on a non-existent table: api-keys')).errorMessage).toBe(
      'Cannot do operations on a non-existent table: <table>',
    );
  });

  it('cuts a long message to 300 characters', () => {
    expect(safeErrorFields(new Error('x'.repeat(1000))).errorMessage).toHaveLength(300);
  });

  it('says only the type of a thrown value that is not an Error', () => {
    expect(safeErrorFields('Bearer petstore_secret')).toEqual({ errorName: 'string', errorMessage: 'non-Error value thrown' });
    expect(safeErrorFields({ key: 'petstore_secret' })).toEqual({ errorName: 'object', errorMessage: 'non-Error value thrown' });
  });
});
