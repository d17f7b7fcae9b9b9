/** Reading the Idempotency-Key header: the accepted syntax, repeats, and whose key it is. */
import { describe, expect, it } from 'vitest';
import { callerOf, idempotencyKeyOf, parseIdempotencyKey } from '../../shared/http/idempotency-key';
import { apiEvent } from '../support/events';

describe('parseIdempotencyKey', () => {
  it.each([
    ['"8e03978e-40d5-43e8-bc93-6894a57f9324"', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['8e03978e-40d5-43e8-bc93-6894a57f9324', '8e03978e-40d5-43e8-bc93-6894a57f9324'],
    ['  "spaced out"  ', 'spaced out'],
    ['"a\\"b\\\\c"', 'a"b\\c'],
    ['01HZX3K9QW+/=._~:-', '01HZX3K9QW+/=._~:-'],
    [`"${'k'.repeat(255)}"`, 'k'.repeat(255)],
  ])('accepts %s as %s', (value, key) => {
    expect(parseIdempotencyKey(value)).toBe(key);
  });

  it.each([
    '',
    '""',
    '"',
    '"abc',
    'abc"',
    '"a"b"',
    '"a\\x"',
    '"abc";p=1',
    '"a", "b"',
    'a b',
    'a,b',
    '"caf\u00e9"',
    '"tab\there"',
    `"${'k'.repeat(256)}"`,
    'k'.repeat(256),
  ])('refuses %j with 400 validation_failed', (value) => {
    expect(() => parseIdempotencyKey(value)).toThrow(expect.objectContaining({ code: 'validation_failed', status: 400 }));
  });
});

describe('idempotencyKeyOf', () => {
  it('is undefined without the header, in any case of its name', () => {
    expect(idempotencyKeyOf(apiEvent())).toBeUndefined();
    expect(idempotencyKeyOf(apiEvent({ headers: { 'idempotency-key': 'abc' } }))).toBe('abc');
  });

  it('refuses the header sent twice (API Gateway keeps both in multiValueHeaders)', () => {
    const event = apiEvent({ headers: { 'Idempotency-Key': '"b"' } });
    event.multiValueHeaders['Idempotency-Key'] = ['"a"', '"b"'];
    expect(() => idempotencyKeyOf(event)).toThrow(expect.objectContaining({ code: 'validation_failed' }));
  });

  it('scopes keys to the client a roll keeps, its usage key: the same for the two ends of a roll, apart for two clients', () => {
    const withContext = (authorizer: Record<string, unknown>) => {
      const event = apiEvent();
      return { ...event, requestContext: { ...event.requestContext, authorizer } };
    };
    const rolledFrom = callerOf(withContext({ keyId: 'aaaaaaaaaaaa', keyHash: 'a'.repeat(64), usageKeyId: 'uk-1' }));
    const rolledTo = callerOf(withContext({ keyId: 'bbbbbbbbbbbb', keyHash: 'b'.repeat(64), usageKeyId: 'uk-1' }));
    const another = callerOf(withContext({ keyId: 'cccccccccccc', keyHash: 'c'.repeat(64), usageKeyId: 'uk-2' }));
    expect(rolledTo).toBe(rolledFrom);
    expect(another).not.toBe(rolledFrom);
    expect(callerOf(apiEvent())).toBe('usage-key:local-0123456789ab');
  });

  it('never lets callers share one scope: an authorizer context without a usage key id fails, its key hash or id notwithstanding', () => {
    const withContext = (authorizer: Record<string, unknown> | null) => {
      const event = apiEvent();
      return { ...event, requestContext: { ...event.requestContext, authorizer } };
    };
    expect(() => callerOf(withContext({ principalId: 'aaaaaaaaaaaa', keyId: 'aaaaaaaaaaaa', keyHash: 'a'.repeat(64) }))).toThrow();
    expect(() => callerOf(withContext({ principalId: 'aaaaaaaaaaaa', keyId: 'aaaaaaaaaaaa' }))).toThrow();
    expect(() => callerOf(withContext(null))).toThrow();
    expect(() => callerOf(withContext({ usageKeyId: '' }))).toThrow();
  });
});
