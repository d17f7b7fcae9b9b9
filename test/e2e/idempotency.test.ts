/**
 * Idempotent creates over HTTP (Idempotency-Key, IETF httpapi-idempotency-key draft): replays,
 * a reused key, concurrent duplicates, malformed keys, keys scoped to the client (across a roll
 * of its API key), a lost answer, and database faults on each of a keyed create's three writes.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../shared/api-keys';
import { usageKeyBinding } from '../../shared/plan-policy';
import type { Pet } from '../../client/src/index';
import { createPetAnswer, expectCommonHeaders, expectError, registerKeyOnPlan, startLocalApi, type LocalApi } from '../support/local-api';
import { inject } from 'vitest';
import { localUsageKey } from '../../tools/local-server/usage-plans';
import { databaseClient } from '../support/database';

/** Who this file's changes to keys are made by. */
const ACTOR = 'local:test';

const rex = { name: 'Rex', categoryId: 1 };
const HOUR = 60 * 60 * 1000;

const post = (api: LocalApi, body: unknown, key?: string, extra: Record<string, string> = {}) =>
  api.call('/pets', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key === undefined ? {} : { 'Idempotency-Key': key }), ...extra },
    body: JSON.stringify(body),
  });

const countPets = async (api: LocalApi) => {
  const client = databaseClient({ endpoint: inject('dynamodbEndpoint') });
  const { Items = [] } = await client.send(new ScanCommand({ TableName: api.tables.pets, ConsistentRead: true }));
  return Items.length;
};

const newKey = () => `"${randomUUID()}"`;

/** A client whose calls a test can delay or break, by command and table. */
const controllableClient = () => {
  const client: DynamoDBDocumentClient = databaseClient({ endpoint: inject('dynamodbEndpoint') });
  const rules: Array<
    (command: string, table: string, send: () => Promise<unknown>, itemKey: string | undefined) => Promise<unknown> | undefined
  > = [];
  client.middlewareStack.add(
    (next, { commandName }) =>
      async (args) => {
        const input = args.input as { TableName?: string; Item?: { id?: unknown } };
        const table = input.TableName ?? '';
        // A put's item key, whether the document client has marshalled it yet or not.
        const id = input.Item?.id;
        const itemKey = typeof id === 'string' ? id : (id as { S?: string } | undefined)?.S;
        const send = () => next(args);
        for (const rule of rules) {
          const result = rule(String(commandName), table, send, itemKey);
          if (result) return (await result) as Awaited<ReturnType<typeof next>>;
        }
        return send();
      },
    { step: 'initialize', name: 'testControl' },
  );
  return { client, rules };
};

/** An error the SDK classifies as transient, as a lost answer looks once retries are spent. */
const lostAnswer = () => Object.assign(new Error('socket hang up'), { name: 'TimeoutError', $metadata: {} });

describe('Idempotency-Key on POST /pets', () => {
  let api: LocalApi;
  const control = controllableClient();
  beforeAll(async () => {
    api = await startLocalApi({ client: control.client });
  });
  afterAll(() => api.close());

  /** Whether a call is the put of a pet (the third write of a keyed create, after its record). */
  const isPetPut = (command: string, table: string) => command === 'PutItemCommand' && table === api.tables.pets;
  /** Whether a call is a put on the idempotency table: the reservation of an id (`pet#<id>`, the first write of a keyed create) or a record (the second). */
  const isIdempotencyPut = (kind: 'reservation' | 'record', command: string, table: string, itemKey = '') =>
    command === 'PutItemCommand' && table === api.tables.idempotency && itemKey.startsWith('pet#') === (kind === 'reservation');

  /** POST whose pet DynamoDB stores once while the answer is lost, as if every retry's were. */
  const postLosingThePetWrite = async (body: unknown, key: string) => {
    let lose = true;
    control.rules.push((command, table, send) =>
      lose && isPetPut(command, table)
        ? send().then(() => {
            lose = false;
            throw lostAnswer();
          })
        : undefined,
    );
    return post(api, body, key).finally(() => control.rules.pop());
  };

  it('replays the first 201 for the same key and body, and creates nothing more', async () => {
    const key = newKey();
    const before = await countPets(api);
    const first = await post(api, rex, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const created = await first.text();
    for (const body of [rex, { categoryId: 1, name: 'Rex' }]) {
      const again = await post(api, body, key);
      expect(again.status).toBe(201);
      expectCommonHeaders(again);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('location')).toBe(first.headers.get('location'));
      expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
      // The original answer's bytes, field order included, not only an equal JSON value.
      expect(await again.text()).toBe(created);
    }
    expect(await countPets(api)).toBe(before + 1);
  });

  it('accepts the same key bare and quoted as one key', async () => {
    const id = randomUUID();
    const first = await post(api, rex, `"${id}"`);
    const again = await post(api, rex, id);
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual(await first.json());
  });

  it('refuses the same key with another body: 422 idempotency_key_reused, and the first answer still replays', async () => {
    const key = newKey();
    const first = await (await post(api, rex, key)).json();
    const before = await countPets(api);
    await expectError(await post(api, { ...rex, name: 'Max' }, key), 422, 'idempotency_key_reused');
    expect(await countPets(api)).toBe(before);
    const again = await post(api, rex, key);
    expect(await again.json()).toEqual(first);
  });

  it('concurrent duplicates: every one answers 201 with the same pet, one created and the rest replayed, never 409', async () => {
    const key = newKey();
    const before = await countPets(api);
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(api, rex, key)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(201));
    expect(answers.filter((answer) => answer.headers.get('idempotent-replayed') === 'true')).toHaveLength(5);
    const bodies = await Promise.all(answers.map((answer) => answer.text()));
    expect(new Set(bodies).size).toBe(1);
    expect(await countPets(api)).toBe(before + 1);
  });

  it.each([
    ['empty', ''],
    ['empty string', '""'],
    ['unterminated', '"abc'],
    ['with parameters', '"abc";a=1'],
    ['a list', '"a", "b"'],
    ['spaces inside a bare key', 'a b'],
    ['non-ASCII', '"caf\u00e9"'],
    ['too long', `"${'k'.repeat(256)}"`],
  ])('refuses a malformed key (%s): 400', async (_name, key) => {
    const before = await countPets(api);
    await expectError(await post(api, rex, key), 400, 'validation_failed');
    expect(await countPets(api)).toBe(before);
  });

  it('accepts a key of 255 characters and escapes in the sf-string', async () => {
    expect((await post(api, rex, `"${'k'.repeat(255)}"`)).status).toBe(201);
    expect((await post(api, rex, `"a\\"b\\\\c-${randomUUID()}"`)).status).toBe(201);
  });

  it('refuses a repeated Idempotency-Key header: 400', async () => {
    const headers = new Headers({ 'Content-Type': 'application/json', Authorization: `Bearer ${api.key}` });
    headers.append('Idempotency-Key', newKey());
    headers.append('Idempotency-Key', newKey());
    // fetch joins repeats with ", ", as proxies may: the value is then not one key.
    const response = await fetch(`${api.url}/pets`, { method: 'POST', headers, body: JSON.stringify(rex) });
    await expectError(response, 400, 'validation_failed');
  });

  it('scopes keys to the API key: another caller with the same key gets its own pet', async () => {
    const key = newKey();
    const other = generateApiKey();
    await api.keys.register(other, 'other caller', { usage: localUsageKey(), changedBy: ACTOR });
    const mine = (await (await post(api, rex, key)).json()) as { id: number };
    const theirs = await post(api, rex, key, { Authorization: `Bearer ${other}` });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(((await theirs.json()) as { id: number }).id).not.toBe(mine.id);
  });

  it('scopes keys to the client across a roll: the retry with the successor key replays; another client gets its own pet', async () => {
    const key = newKey();
    const before = await countPets(api);
    const rolled = await registerKeyOnPlan(api, 'default', 'rolling client');
    const bearer = (apiKey: string) => ({ Authorization: `Bearer ${apiKey}` });
    const first = await post(api, rex, key, bearer(rolled));
    expect(first.status).toBe(201);
    const created = await first.text();

    const successor = generateApiKey();
    const record = await api.keys.find(rolled);
    await api.keys.roll(record?.keyId ?? '', successor, { graceMs: HOUR, changedBy: ACTOR });
    for (const apiKey of [successor, rolled]) {
      const retried = await post(api, rex, key, bearer(apiKey));
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      expect(retried.headers.get('location')).toBe(first.headers.get('location'));
      expect(await retried.text()).toBe(created);
    }
    await expectError(await post(api, { ...rex, name: 'Max' }, key, bearer(successor)), 422, 'idempotency_key_reused');

    const other = await registerKeyOnPlan(api, 'default', 'another client');
    const theirs = await post(api, rex, key, bearer(other));
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(((await theirs.json()) as { id: number }).id).not.toBe((JSON.parse(created) as { id: number }).id);
    expect(await countPets(api)).toBe(before + 2);
  });

  it('scopes keys to the whole API key, not its short id: two keys that share an id get a pet each', async () => {
    // Key ids are 48 bits of the hash, so two keys can share one; write such a pair as raw items.
    const key = newKey();
    const [first, second] = [generateApiKey(), generateApiKey()];
    const sharedId = 'c011151011ab';
    const database = databaseClient({ endpoint: inject('dynamodbEndpoint') });
    for (const [secret, name] of [
      [first, 'first'],
      [second, 'second'],
    ] as const) {
      const keyHash = hashApiKey(secret);
      // Each with what the key tool gives every key: scopes, a plan and a usage key of its own.
      const usage = localUsageKey();
      await database.send(
        new PutCommand({
          TableName: api.tables.apiKeys,
          Item: {
            keyHash,
            keyId: sharedId,
            name,
            createdAt: new Date().toISOString(),
            scopes: new Set(['pets:write']),
            plan: 'default',
            ...usage,
            usageKeyBinding: usageKeyBinding(keyHash, usage.usageKeyId, usage.usageKey),
          },
        }),
      );
    }
    const mine = await post(api, rex, key, { Authorization: `Bearer ${first}` });
    const theirs = await post(api, { ...rex, name: 'Max' }, key, { Authorization: `Bearer ${second}` });
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(((await theirs.json()) as { name: string }).name).toBe('Max');
  });

  it('without the header, every create is a new pet', async () => {
    const before = await countPets(api);
    const [a, b] = [await createPetAnswer(api.petStore, rex), await createPetAnswer(api.petStore, rex)];
    expect([a.response.status, b.response.status]).toEqual([201, 201]);
    expect((a.body as Pet).id).not.toBe((b.body as Pet).id);
    expect(await countPets(api)).toBe(before + 2);
  });

  it('a create whose pet was stored but whose answer was lost: 503, then the retry answers that pet, never a second', async () => {
    const key = newKey();
    const before = await countPets(api);
    const failed = await postLosingThePetWrite(rex, key);
    await expectError(failed, 503, 'service_unavailable');
    expect(failed.headers.get('retry-after')).toBe('1');
    expect(await countPets(api)).toBe(before + 1); // stored, unacknowledged

    const retry = await createPetAnswer(api.petStore, rex, key);
    expect(retry.response.status).toBe(201);
    const pet = retry.body as Pet;
    expect(await countPets(api)).toBe(before + 1);
    expect(await api.petStore.pets.get(pet.id)).toEqual({ ...rex, id: pet.id, status: 'available' });
  });

  it('a key reused with another body after a lost answer: 422 idempotency_key_reused, and the stored pet stays as it was', async () => {
    const key = newKey();
    const before = await countPets(api);
    const failed = await postLosingThePetWrite(rex, key);
    await expectError(failed, 503, 'service_unavailable');

    await expectError(await post(api, { name: 'Fido', categoryId: 2 }, key), 422, 'idempotency_key_reused');
    expect(await countPets(api)).toBe(before + 1);

    const retry = await createPetAnswer(api.petStore, rex, key);
    expect(retry.response.status).toBe(201);
    const pet = retry.body as Pet;
    expect(await api.petStore.pets.get(pet.id)).toEqual({ ...rex, id: pet.id, status: 'available' });
    expect(await countPets(api)).toBe(before + 1);
  });

  it.each(['reservation', 'record'] as const)(
    'a database fault on the put of its %s, before the pet, answers 503 service_unavailable with Retry-After, and stores no pet; the retry creates it',
    async (kind) => {
      const key = newKey();
      const before = await countPets(api);
      control.rules.push((command, table, _send, itemKey) =>
        isIdempotencyPut(kind, command, table, itemKey) ? Promise.reject(lostAnswer()) : undefined,
      );
      const response = await post(api, rex, key).finally(() => control.rules.pop());
      await expectError(response, 503, 'service_unavailable');
      expect(response.headers.get('retry-after')).toBe('1');
      expect(await countPets(api)).toBe(before);
      const retry = await createPetAnswer(api.petStore, rex, key);
      expect(retry.response.status).toBe(201);
      expect(retry.response.headers.get('idempotent-replayed')).toBeNull();
      expect(await countPets(api)).toBe(before + 1);
    },
  );

  it('a fault on the pet after its record: 503, and the retry answers 201 with one pet, stored once', async () => {
    const key = newKey();
    const before = await countPets(api);
    control.rules.push((command, table) => (isPetPut(command, table) ? Promise.reject(lostAnswer()) : undefined));
    const failed = await post(api, rex, key).finally(() => control.rules.pop());
    await expectError(failed, 503, 'service_unavailable');
    expect(await countPets(api)).toBe(before);

    const retry = await createPetAnswer(api.petStore, rex, key);
    expect(retry.response.status).toBe(201);
    const pet = retry.body as Pet;
    expect(await api.petStore.pets.get(pet.id)).toEqual({ ...rex, id: pet.id, status: 'available' });
    expect(await countPets(api)).toBe(before + 1);
    const again = await createPetAnswer(api.petStore, rex, key);
    expect(again.body).toEqual(pet);
    expect(await countPets(api)).toBe(before + 1);
  });
});
