/**
 * The local stack every tool stands the API up with: on a DynamoDB Local of its own it has every
 * table the API writes (an idempotent create works end to end), and stop() leaves nothing running;
 * on a DynamoDB it is given, it keeps a key of its name unique when asked, and refuses a revoked key;
 * on a busy DynamoDB Local it waits for its own calls, while its functions keep the API's timeouts
 * (or those DYNAMODB_TIMEOUT_MS sets, as it would a deployed function's).
 */
import { afterEach, describe, expect, inject, it } from 'vitest';
import { PetStore } from '../../client/src/index';
import { isListening, LOCAL_TOOL_REQUEST_TIMEOUT_MS } from '../../tools/dynamodb-local';
import { RevokedKeyError, startLocalStack } from '../../tools/local-server/local-stack';
import { DYNAMODB_DEFAULTS } from '../../shared/dynamodb';
import { databaseTimeoutMs } from '../support/database';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
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

  describe("on a DynamoDB Local too busy to answer within the functions' timeout", () => {
    /**
     * Longer than a function's client waits for an answer (DYNAMODB_TIMEOUT_MS in this run; 1 s
     * deployed) by half, and shorter than the stack's own calls wait.
     */
    const BUSY_ANSWER_MS = 1.5 * databaseTimeoutMs();
    /** Later than the deployed timeout by half, and well within this run's. */
    const LATE_ANSWER_MS = 1.5 * DYNAMODB_DEFAULTS.requestTimeout;
    let proxy: FaultProxy | undefined;
    afterEach(async () => {
      await proxy?.close();
    });

    it('creates its tables; its functions wait DYNAMODB_TIMEOUT_MS for an answer, then answer 503 after their two attempts', async () => {
      expect(BUSY_ANSWER_MS).toBeLessThan(LOCAL_TOOL_REQUEST_TIMEOUT_MS);
      expect(databaseTimeoutMs()).toBeGreaterThan(2 * LATE_ANSWER_MS);
      proxy = await startFaultProxy(inject('dynamodbEndpoint'));
      const tables = freshTableNames();
      // Creating a table is the slowest thing DynamoDB Local does, and the first a stack asks of it.
      proxy.inject({ operation: 'CreateTable', table: tables.pets, fault: 'slow', delayMs: BUSY_ANSWER_MS });
      const stack = await startLocalStack({ dynamodbEndpoint: proxy.endpoint, tables, keyName: 'busy', server: { port: 0 } });
      try {
        expect(proxy.calls({ operation: 'CreateTable', table: tables.pets })).toBe(1);
        const call = () => fetch(`${stack.url}/pets`, { headers: { Authorization: `Bearer ${stack.key}` } });
        expect((await call()).status).toBe(200);

        // Answered later than the deployed 1 s: the functions wait, as DYNAMODB_TIMEOUT_MS tells them.
        const scan = { operation: 'Scan', table: tables.pets };
        proxy.resetCalls();
        proxy.inject({ ...scan, fault: 'slow', delayMs: LATE_ANSWER_MS, times: 1 });
        expect((await call()).status).toBe(200);
        expect(proxy.calls(scan)).toBe(1);

        proxy.resetCalls();
        proxy.inject({ ...scan, fault: 'slow', delayMs: BUSY_ANSWER_MS });
        const response = await call();
        expect(response.status).toBe(503);
        expect(response.headers.get('retry-after')).toBe('1');
        expect(proxy.calls(scan)).toBe(2);
      } finally {
        await stack.stop();
      }
    });
  });
});
