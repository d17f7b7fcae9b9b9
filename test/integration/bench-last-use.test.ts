/**
 * The benchmark's lastUsedAt measurement on a local server of its own meters on roomy plans,
 * whatever the plans in force say, so that a plan never shapes the figures: with PLANS_FILE
 * allowing one request a day, every request still answers 2xx.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeysRepository } from '../../shared/api-keys-repository';
import { PLANS_FILE_VARIABLE } from '../../shared/plans';
import { measureLastUse, type LastUseResult } from '../../tools/bench/last-use';
import { seededTable } from '../../tools/bench/reads';
import { createTestTables, type TestTables } from '../support/tables';

const SECONDS = 2;
/**
 * The plan PLANS_FILE puts in force: one request a day per key, so that any key's second request
 * proves the measurement ignores it, however few requests a loaded machine manages in SECONDS.
 */
const PLAN_IN_FORCE = { rateLimit: 1, burstLimit: 1, quota: { limit: 1, period: 'DAY' } } as const;

describe('the lastUsedAt measurement under load', () => {
  let tables: TestTables;
  let result: LastUseResult;
  beforeAll(async () => {
    const plansFile = join(mkdtempSync(join(tmpdir(), 'bench-plans-')), 'plans.json');
    writeFileSync(plansFile, JSON.stringify({ plans: { default: PLAN_IN_FORCE } }));
    process.env[PLANS_FILE_VARIABLE] = plansFile;
    tables = await createTestTables();
    // The pet the measurement reads, as the benchmark seeds it.
    const seeded = await seededTable(tables.endpoint, 1);
    seeded.client.destroy();
    const keys = apiKeysRepository({ client: tables.client, tables });
    result = await measureLastUse({
      endpoint: tables.endpoint,
      tables: { ...tables, pets: seeded.tableName },
      keys,
      connections: 4,
      seconds: SECONDS,
      // However slow the machine: every key is sent more requests than its plan lets through.
      minRequestsPerKey: PLAN_IN_FORCE.quota.limit + 1,
    });
  });
  afterAll(() => {
    delete process.env[PLANS_FILE_VARIABLE];
    tables.client.destroy();
  });

  it('answers every request 2xx, more of them than the plans in force would let through', () => {
    expect(result.requests).toBeGreaterThan(result.keys * PLAN_IN_FORCE.quota.limit);
    expect(result.bad).toBe(0);
  });
});
