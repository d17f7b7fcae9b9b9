/**
 * The stage in several regions, tried end to end: one local server per region of the `global`
 * stage, the eventually consistent tables replicated between them by the stream fixture with
 * last-writer-wins, the idempotency table one table for all (the strongly consistent one). Each
 * test asserts what a client or an operator sees.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../shared/api-keys';
import { apiKeysRepository } from '../../shared/api-keys-repository';
import { DEFAULT_PLAN } from '../../shared/plans';
import { localUsageKey } from '../../tools/local-server/usage-plans';
import { runKeysCommand } from '../../tools/keys/cli';
import { runRegionCommand } from '../../tools/region/cli';
import { idempotencyTable } from '../../shared/tables';
import { expectError } from '../support/local-api';
import { startLocalRegions, type LocalRegion, type LocalRegions } from '../support/regions';
import { keyTablesEnv } from '../support/tables';
import { FIXTURE_PREFIX } from '../support/fixture-names';
import { READ_PETS } from '../support/vocabulary';
import { SCOPES } from '../../shared/scopes';

/** How long a change takes to reach the other regions here: well within what AWS states for MREC replication. */
const REPLICATION_DELAY_MS = 200;
/** The most a revoke may take to be refused everywhere, for this test: "within seconds". */
const REFUSED_EVERYWHERE_WITHIN_MS = 10_000;
/** How often a client polls while waiting for a change to show. */
const POLL_MS = 50;
/** The most the audit trails may take to record a change, for this test. */
const AUDIT_WITHIN_MS = 10_000;
/** The most a drain or a restore may take to show in the region's health answer: its reuse window (HEALTH_REUSE_SECONDS) at most. */
const HEALTH_FOLLOWS_WITHIN_MS = 10_000;

let stage: LocalRegions;

beforeAll(async () => {
  stage = await startLocalRegions({ replicationDelayMs: REPLICATION_DELAY_MS });
});
afterAll(async () => {
  await stage?.stop();
});

/** `npm run keys -- …` as an operator runs it against the home region's tables: the lines it printed. */
const keysTool = async (...argv: string[]): Promise<string[]> => {
  const lines: string[] = [];
  const { home } = stage;
  const code = await runKeysCommand([...argv, '--region', home.name], {
    env: { ...keyTablesEnv(stage.endpoint, home.tables), AWS_REGION: home.name },
    print: (line) => lines.push(line),
  });
  expect(code, lines.join('\n')).toBe(0);
  return lines;
};

/** A new key, made in the home region and replicated to every region. */
const newKey = async (name: string): Promise<{ id: string; key: string }> => {
  const created = JSON.parse((await keysTool('create', '--name', name, '--json'))[0] ?? '') as { id: string; key: string };
  await stage.replication.settled();
  return created;
};

const statusOf = async (region: LocalRegion, key: string) => {
  const response = await region.call('/pets', { key });
  await response.body?.cancel();
  return response.status;
};

/**
 * Resolves once the region's audit trail has read its stream past every change its replica holds
 * now: a key made in that region (as no product path does: keys are made at home) is a change its
 * trail records, and it is recorded after the changes before it.
 */
const auditedPastNow = async (region: LocalRegion) => {
  const keys = apiKeysRepository({ client: stage.client, tables: region.tables, region: region.name });
  const marker = await keys.register(generateApiKey(), `audit-marker-${region.name}`, {
    changedBy: 'local:test',
    plan: DEFAULT_PLAN,
    usage: localUsageKey(),
  });
  await expect
    .poll(async () => (await region.auditTrail(marker.keyId)).entries.map((entry) => entry.action), {
      timeout: AUDIT_WITHIN_MS,
      interval: POLL_MS,
    })
    .toContain('created');
};

/** Milliseconds from `since` until the region refuses the key. */
const refusedAfter = async (region: LocalRegion, key: string, since: number): Promise<number> => {
  while ((await statusOf(region, key)) !== 401) {
    if (performance.now() - since > REFUSED_EVERYWHERE_WITHIN_MS) throw new Error(`${region.name} still serves the revoked key`);
    await new Promise((wait) => setTimeout(wait, POLL_MS));
  }
  return performance.now() - since;
};

describe('a stage in several regions', () => {
  it('creates once: a create in one region and its retry in another, with one Idempotency-Key, give one pet', async () => {
    const [first, second] = stage.regions as [LocalRegion, LocalRegion];
    const name = `Regional ${randomUUID()}`;
    const create = (region: LocalRegion, idempotencyKey: string) =>
      region.call('/pets', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey },
        body: JSON.stringify({ name, categoryId: 1 }),
      });
    const idempotencyKey = randomUUID();

    const created = await create(first, idempotencyKey);
    expect(created.status).toBe(201);
    const pet = (await created.json()) as { id: number };
    // The retry lands in the other region before the pet has been replicated there: a failover's retry.
    const retried = await create(second, idempotencyKey);
    expect({ status: retried.status, replayed: retried.headers.get('idempotent-replayed'), body: await retried.json() }).toEqual({
      status: 201,
      replayed: 'true',
      body: pet,
    });

    await stage.replication.settled();
    for (const region of stage.regions) {
      const read = await region.call(`/pets/${pet.id}`);
      expect({ region: region.name, status: read.status, body: await read.json() }).toEqual({
        region: region.name,
        status: 200,
        body: pet,
      });
      const listed = (await (await region.call('/pets?limit=100')).json()) as Array<{ name: string }>;
      expect(
        listed.filter((each) => each.name === name),
        region.name,
      ).toHaveLength(1);
    }
  });

  // Each region's server drops cached answers only when its audit trail, reading its replica's
  // stream, flushes its stage's cache (the key-audit function's path): without that flush the
  // revoked key is served for the cache's TTL (300 s), in the home region too.
  it('refuses a key revoked in the home region in every region within seconds', async ({ annotate }) => {
    const { id, key } = await newKey('revoked-everywhere');
    // Every region has let the key in once, so that each has its authorizer's answer cached.
    for (const region of stage.regions) expect(await statusOf(region, key), region.name).toBe(200);

    const revokedAt = performance.now();
    await keysTool('revoke', id);
    const times = await Promise.all(stage.regions.map((region) => refusedAfter(region, key, revokedAt)));

    const report = stage.regions.map((region, index) => `${region.name} ${Math.round(times[index] ?? 0)} ms`).join(', ');
    await annotate(`refused after the revoke (replication ${REPLICATION_DELAY_MS} ms): ${report}`);
    for (const time of times) expect(time).toBeLessThan(REFUSED_EVERYWHERE_WITHIN_MS);
  });

  it('keeps a key revoked when its use in another region races the revoke: no write of the authorizer revives it', async () => {
    const { id, key } = await newKey('raced');
    const [home, other] = stage.regions as [LocalRegion, LocalRegion];
    // Long enough that the use below is made before the revoke reaches the other region.
    stage.replication.setDelay(1_000);
    try {
      await keysTool('revoke', id);
      expect(await statusOf(home, key)).toBe(401);
      // Its first use there: the authorizer records it, after the revoke was made.
      expect(await statusOf(other, key), 'the revoke reached the other region before its use: no race').toBe(200);
      const lastUse = await stage.client.send(new GetCommand({ TableName: other.tables.apiKeyLastUse, Key: { keyHash: hashApiKey(key) } }));
      expect(lastUse.Item?.lastUsedAt).toEqual(expect.any(String));
    } finally {
      stage.replication.setDelay(REPLICATION_DELAY_MS);
    }
    await stage.replication.settled();

    for (const region of stage.regions) {
      await expect.poll(() => statusOf(region, key), { timeout: REFUSED_EVERYWHERE_WITHIN_MS, interval: POLL_MS }).toBe(401);
      const item = await stage.client.send(new GetCommand({ TableName: region.tables.apiKeys, Key: { keyHash: hashApiKey(key) } }));
      expect(item.Item?.revokedAt, region.name).toEqual(expect.any(String));
    }
    // The use replicated too: the key tool in the home region shows it, on a key still revoked.
    const shown = JSON.parse((await keysTool('show', id, '--json'))[0] ?? '') as { state: string; lastUsedAt?: string };
    expect(shown).toMatchObject({ state: 'revoked', lastUsedAt: expect.any(String) });
  });

  it("records a key's changes once across all the regions' audit trails, in the region where they were made", async () => {
    const { id } = await newKey('audited-once');
    await keysTool('revoke', id);
    await stage.replication.settled();
    const { home } = stage;
    await expect
      .poll(async () => (await home.auditTrail(id)).entries.map((entry) => entry.action), { timeout: AUDIT_WITHIN_MS, interval: POLL_MS })
      .toEqual(expect.arrayContaining(['created', 'revoked']));
    // A line the other regions must not write cannot be waited for: wait instead for a marker each
    // region does write (a key made there, stamped with it), made after the revoke reached its
    // replica, so that each trail has read past the revoke.
    await Promise.all(stage.regions.map(auditedPastNow));

    // Each change is one line, in the home region's trail, where it was made; none in the others.
    const trails = await Promise.all(
      stage.regions.map(async (region) => ({
        region: region.name,
        actions: (await region.auditTrail(id)).entries.map((entry) => entry.action),
      })),
    );
    const homeActions = trails[0]?.actions ?? [];
    expect(trails).toEqual(stage.regions.map((region) => ({ region: region.name, actions: region === home ? homeActions : [] })));
    expect(homeActions).toEqual(expect.arrayContaining(['created', 'revoked']));
    expect(new Set(homeActions).size).toBe(homeActions.length);
  });

  it('records once, in the home region, a console edit that widens a key and names a region the stage does not run in', async () => {
    const created = JSON.parse((await keysTool('create', '--name', 'edited-by-hand', '--scopes', READ_PETS, '--json'))[0] ?? '');
    const { id, key } = created as { id: string; key: string };
    await stage.replication.settled();
    const [, second] = stage.regions;
    if (second === undefined) throw new Error('the stage runs in one region');
    // Its scopes widened in the second region's console, the stamp set to a region of no stage here.
    await stage.client.send(
      new UpdateCommand({
        TableName: second.tables.apiKeys,
        Key: { keyHash: hashApiKey(key) },
        UpdateExpression: 'SET scopes = :all, changedInRegion = :nowhere',
        ExpressionAttributeValues: { ':all': new Set(SCOPES), ':nowhere': `${FIXTURE_PREFIX}-region-1` },
      }),
    );
    await stage.replication.settled();
    await Promise.all(stage.regions.map(auditedPastNow));

    const trails = await Promise.all(
      stage.regions.map(async (region) => (await region.auditTrail(id)).entries.map((entry) => entry.action)),
    );
    expect(trails).toEqual(stage.regions.map((region) => (region === stage.home ? ['created', 'scopes_changed'] : [])));
  });

  it('fails the health check of a region whose database is down, while the other regions answer theirs', async () => {
    const down = stage.regions.at(-1) as LocalRegion;
    const health = (region: LocalRegion) => region.call('/health', { key: null });
    for (const region of stage.regions) {
      const answer = await health(region);
      expect({ region: region.name, status: answer.status, body: await answer.json() }).toEqual({
        region: region.name,
        status: 200,
        body: { status: 'ok' },
      });
    }

    down.proxy.inject({ fault: 'drop' });
    try {
      // Each server reads its tables on every health request (HEALTH_REUSE_SECONDS=0): the next one fails.
      const failing = await health(down);
      await expectError(failing, 503, 'service_unavailable');
      expect(failing.headers.get('retry-after')).toMatch(/^\d+$/);
      for (const region of stage.regions.filter((each) => each !== down)) {
        const answer = await health(region);
        expect({ region: region.name, status: answer.status, body: await answer.json() }).toEqual({
          region: region.name,
          status: 200,
          body: { status: 'ok' },
        });
      }
    } finally {
      down.proxy.recover();
    }
    // Failback: the region passes its check again as soon as its database answers.
    const recovered = await health(down);
    expect({ status: recovered.status, body: await recovered.json() }).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('drains a region with one command, whose health check then fails while the others pass, and restores it with another', async () => {
    // The home region (us-east-1 in the global stage): draining it needs nothing of it but the switch.
    const { home } = stage;
    const healthOf = async (region: LocalRegion) => {
      const answer = await region.call('/health', { key: null });
      return {
        region: region.name,
        status: answer.status,
        body: (await answer.json()) as unknown,
        retryAfter: answer.headers.get('retry-after'),
      };
    };
    /** `npm run region -- …` on the stage's one strongly consistent table, as an operator runs it locally: the one line it printed. */
    const regionTool = async (...argv: string[]) => {
      const lines: string[] = [];
      const code = await runRegionCommand(argv, {
        env: { DYNAMODB_ENDPOINT: stage.endpoint, [idempotencyTable.nameVariable]: home.tables.idempotency },
        print: (line) => lines.push(line),
      });
      expect(code, lines.join('\n')).toBe(0);
      expect(lines).toHaveLength(1);
      return lines[0] ?? '';
    };
    const others = stage.regions.filter((region) => region !== home);
    const serving = (region: LocalRegion) => ({ region: region.name, status: 200, body: { status: 'ok' }, retryAfter: null });

    expect(await regionTool('drain', home.name)).toMatch(new RegExp(`^Drained ${home.name} at `));
    try {
      // Wait by condition: a deployed function reuses its answer for HEALTH_REUSE_SECONDS.
      await expect.poll(async () => (await healthOf(home)).status, { timeout: HEALTH_FOLLOWS_WITHIN_MS, interval: POLL_MS }).toBe(503);
      const failing = await home.call('/health', { key: null });
      await expectError(failing, 503, 'service_unavailable');
      expect(failing.headers.get('retry-after')).toMatch(/^\d+$/);
      for (const region of others) expect(await healthOf(region)).toEqual(serving(region));
      expect(await regionTool('status', home.name)).toMatch(new RegExp(`^${home.name}\tdrained\t`));
    } finally {
      expect(await regionTool('restore', home.name)).toMatch(new RegExp(`^Restored ${home.name} at `));
    }
    await expect.poll(() => healthOf(home), { timeout: HEALTH_FOLLOWS_WITHIN_MS, interval: POLL_MS }).toEqual(serving(home));
    for (const region of others) expect(await healthOf(region)).toEqual(serving(region));
  });
});
