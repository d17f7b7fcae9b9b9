/**
 * The local stack every tool stands the API up with: on a DynamoDB Local of its own it has every
 * table the API writes (an idempotent create works end to end), and stop() leaves nothing running;
 * on a DynamoDB it is given, it keeps a key of its name unique when asked, and refuses a revoked key.
 */
import { describe, expect, inject, it } from 'vitest';
import { PetStore } from '../../client/src/index';
import { isListening } from '../../tools/dynamodb-local';
import { RevokedKeyError, startLocalStack } from '../../tools/local-server/local-stack';
import { createPetAnswer } from '../support/local-api';
import { freshTableNames } from '../support/tables';

const createWithKey = (url: string, key: string, idempotencyKey: string) =>
  createPetAnswer(new PetStore({ baseUrl: url, apiKey: key }), { name: 'Rex', categoryId: 1 }, idempotencyKey);

describe('startLocalStack', { timeout: 90_000 }, () => {
  it('on its own DynamoDB Local, creates every table (an idempotent create replays), and stop() ends it all', async () => {
    const stack = await startLocalStack({ dynamodbLocal: { port: 0 }, keyName: 'test', server: { port: 0 } });
    const databasePort = stack.dynamodbLocal?.port ?? 0;
    try {
      expect(await isListening(databasePort)).toBe(true);
      const first = await createWithKey(stack.url, stack.key, 'local-stack-1');
      expect(first.response.status).toBe(201);
      const again = await createWithKey(stack.url, stack.key, 'local-stack-1');
      expect(again.response.status).toBe(201);
      expect(again.response.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(first.body);
    } finally {
      await stack.stop();
    }
    expect(await isListening(databasePort)).toBe(false);
    expect(await isListening(stack.port)).toBe(false);
  });

  it('on a DynamoDB it is given, revokes the earlier key of its name when asked, and refuses a revoked key', async () => {
    const dynamodbEndpoint = inject('dynamodbEndpoint');
    const tables = freshTableNames();
    const options = { dynamodbEndpoint, tables, keyName: 'local', revokeOtherKeysOfItsName: true, server: { port: 0 } };
    const first = await startLocalStack(options);
    await first.stop();
    const second = await startLocalStack(options);
    try {
      expect(second.replacedKeyIds).toEqual([first.keyId]);
      expect((await fetch(`${second.url}/pets`, { headers: { Authorization: `Bearer ${first.key}` } })).status).toBe(401);
      expect((await fetch(`${second.url}/pets`, { headers: { Authorization: `Bearer ${second.key}` } })).status).toBe(200);
    } finally {
      await second.stop();
    }
    await expect(startLocalStack({ ...options, apiKey: first.key })).rejects.toBeInstanceOf(RevokedKeyError);
  });
});
