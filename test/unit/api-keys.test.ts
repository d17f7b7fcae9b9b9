/** API keys: the Bearer credential, how keys look, and how they are hashed and named. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { API_KEY_PATTERN, API_KEY_PREFIX, bearerKey, generateApiKey, hashApiKey, keyIdOf } from '../../shared/api-keys';

describe('bearerKey', () => {
  it.each([
    ['Bearer k', 'k'],
    ['bearer k', 'k'],
    ['BEARER k', 'k'],
    ['BeArEr k', 'k'],
    ['Bearer    k', 'k'],
    ['Bearer petstore_AbC-12_x', 'petstore_AbC-12_x'],
    ['Bearer abc==', 'abc=='],
    ['Bearer a.b~c+d/e', 'a.b~c+d/e'],
  ])('reads %j as the key %j', (authorization, key) => {
    expect(bearerKey(authorization)).toBe(key);
  });

  it("keeps the key's case: only the scheme is case-insensitive", () => {
    expect(bearerKey('bearer AbCdEf')).toBe('AbCdEf');
  });

  it.each([
    ['Basic k'],
    ['Bearer'],
    ['Bearer '],
    ['Bearerk'],
    [' Bearer k'],
    ['Bearer k '],
    ['Bearer k l'],
    ['Bearer\tk'],
    ['Bearer k\n'],
    ['Token k'],
    ['Bearer =k'],
    ['Bearer k"'],
    [''],
  ])('refuses %j', (authorization) => {
    expect(bearerKey(authorization)).toBeUndefined();
  });

  it('refuses a missing header', () => {
    expect(bearerKey(undefined)).toBeUndefined();
  });
});

describe('generateApiKey', () => {
  it('starts with petstore_ and carries at least 43 base64url characters (256 random bits)', () => {
    const key = generateApiKey();
    expect(API_KEY_PREFIX).toBe('petstore_');
    expect(key).toMatch(/^petstore_[A-Za-z0-9_-]{43,}$/);
  });

  it('is a key an operator could also supply, and survives the Bearer header', () => {
    const key = generateApiKey();
    expect(key).toMatch(API_KEY_PATTERN);
    expect(bearerKey(`Bearer ${key}`)).toBe(key);
  });

  it('never repeats', () => {
    const keys = new Set(Array.from({ length: 1000 }, generateApiKey));
    expect(keys.size).toBe(1000);
  });
});

describe('hashApiKey and keyIdOf', () => {
  it('hashes with SHA-256, as lowercase hex', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const key = generateApiKey();
    expect(hashApiKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('hashes the key as UTF-8', () => {
    expect(hashApiKey('é')).toBe(
      createHash('sha256')
        .update(Buffer.from([0xc3, 0xa9]))
        .digest('hex'),
    );
  });

  it('tells keys that differ only in case apart', () => {
    expect(hashApiKey('petstore_abc')).not.toBe(hashApiKey('petstore_ABC'));
  });

  it('names a key by the first 12 characters of its hash', () => {
    const hash = hashApiKey('abc');
    expect(keyIdOf(hash)).toBe('ba7816bf8f01');
    expect(keyIdOf(hashApiKey(generateApiKey()))).toMatch(/^[0-9a-f]{12}$/);
  });
});
