/**
 * GET /health and the region's health probe on DynamoDB Local: 200 `{"status":"ok"}` (and
 * DatabaseReadable 1) while the pets, keys and idempotency tables all answer and the region is not
 * drained, and a 503 in the Error shape with Retry-After (and DatabaseReadable 0) when one cannot
 * be read or the region's switch stands, which says nothing of why; only the logs tell a drain.
 */
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler } from '../../functions/health';
import { createHandler as createProbe } from '../../functions/health-probe';
import { databaseHealth, PROBE_KEYS } from '../../shared/database-health';
import { errorCatalogue } from '../../shared/errors';
import { regionSwitchKey } from '../../shared/region-switch';
import { TABLE_KEYS } from '../../shared/tables';
import { logger } from '../../shared/logger';
import { captureEmf } from '../support/emf';
import { operationEvent, context } from '../support/events';
import { STAGE_REGIONS } from '../support/regions';
import { createTestTables, type TestTables } from '../support/tables';

let tables: TestTables;
beforeAll(async () => {
  tables = await createTestTables();
});

type ProbedTables = Pick<TestTables, keyof typeof PROBE_KEYS>;

/** The region the checks here stand in, and another region of the same stage. */
const [REGION = '', OTHER_REGION = ''] = STAGE_REGIONS;

const healthOn = (names: ProbedTables, region: string = REGION) =>
  createHandler({ health: databaseHealth({ client: tables.client, tables: names, region }) })(operationEvent('getHealth'), context);

/** The region's switch, as `npm run region -- drain` writes it. */
const drain = (region: string) =>
  tables.client.send(
    new PutCommand({
      TableName: tables.idempotency,
      Item: { ...regionSwitchKey(region), drainedAt: new Date().toISOString(), drainedBy: 'local:test' },
    }),
  );
const restore = (region: string) => tables.client.send(new DeleteCommand({ TableName: tables.idempotency, Key: regionSwitchKey(region) }));

const SERVICE_UNAVAILABLE = {
  code: 'service_unavailable',
  message: errorCatalogue.service_unavailable.message,
  status: 503,
};

/**
 * The tables a region serves requests from: every table but the keys' last use, which the
 * authorizer keeps as bookkeeping and serves without. Each, in turn, named as one that does not exist.
 */
const servedFrom = TABLE_KEYS.filter((table): table is keyof typeof PROBE_KEYS => table !== 'apiKeyLastUse');
const eachTableMissing = servedFrom.map(
  (table) => [table, (names: ProbedTables): ProbedTables => ({ ...pick(names), [table]: `${names[table]}-missing` })] as const,
);
const pick = (names: ProbedTables): ProbedTables =>
  Object.fromEntries(Object.keys(PROBE_KEYS).map((table) => [table, names[table as keyof ProbedTables]])) as ProbedTables;

describe('GET /health', () => {
  it('answers 200 {"status":"ok"} and nothing more while every table can be read', async () => {
    const response = await healthOn(tables);
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe('{"status":"ok"}');
    expect(response.headers).toMatchObject({ 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  });

  it('reads nothing of an item even if one had its probe key: the answer is the same', async () => {
    await tables.client.send(new PutCommand({ TableName: tables.pets, Item: { ...PROBE_KEYS.pets, name: 'not-a-pet' } }));
    expect((await healthOn(tables)).body).toBe('{"status":"ok"}');
  });

  it.each(eachTableMissing)('answers 503 with Retry-After, naming no table, when the %s table cannot be read', async (_table, broken) => {
    const names = broken(tables);
    const response = await healthOn(names);
    expect(response.statusCode).toBe(503);
    expect(response.headers?.['Retry-After']).toBe(errorCatalogue.service_unavailable.headers['Retry-After']);
    expect(JSON.parse(response.body)).toEqual(SERVICE_UNAVAILABLE);
    for (const name of [...Object.values(pick(names)), 'ResourceNotFound']) expect(response.body).not.toContain(name);
  });

  describe('in a drained region', () => {
    afterEach(async () => {
      await Promise.all([restore(REGION), restore(OTHER_REGION)]);
      vi.restoreAllMocks();
    });

    it('answers the same 503 as a table that cannot be read, while its switch stands, then 200 once it is restored', async () => {
      const errors = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
      await drain(REGION);
      const drained = await healthOn(tables);
      expect(drained.statusCode).toBe(503);
      expect(drained.headers?.['Retry-After']).toBe(errorCatalogue.service_unavailable.headers['Retry-After']);
      expect(JSON.parse(drained.body)).toEqual(SERVICE_UNAVAILABLE);
      expect(drained.body).not.toMatch(/drain|region/i);
      // Its request log line tells operators why; the client's answer does not.
      expect(JSON.stringify(errors.mock.calls)).toContain('drained by its operators');

      await restore(REGION);
      expect((await healthOn(tables)).body).toBe('{"status":"ok"}');
    });

    it("reads its own region's switch only: another region drained leaves it answering 200", async () => {
      await drain(OTHER_REGION);
      expect((await healthOn(tables, REGION)).body).toBe('{"status":"ok"}');
      expect((await healthOn(tables, OTHER_REGION)).statusCode).toBe(503);
    });
  });
});

describe("the region's health probe", () => {
  const saved = process.env.POWERTOOLS_METRICS_DISABLED;
  afterEach(() => {
    process.env.POWERTOOLS_METRICS_DISABLED = saved;
    vi.restoreAllMocks();
  });

  /** One scheduled run on these tables: its result, the EMF lines it wrote, and its error and warning log lines. */
  const probeOn = async (names: ProbedTables) => {
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    const errors = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    const warnings = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const written = captureEmf();
    const result = await createProbe({ health: databaseHealth({ client: tables.client, tables: names, region: REGION }) })({}, context);
    return { result, metrics: written(), errors: errors.mock.calls, warnings: warnings.mock.calls };
  };
  const readable = (value: 0 | 1) => ({
    namespace: 'PetStore',
    dimensions: [['service']],
    names: ['DatabaseReadable'],
    values: { service: 'pet-store', DatabaseReadable: value },
  });

  it('publishes DatabaseReadable 1 while every table can be read, and logs no error', async () => {
    const { result, metrics, errors } = await probeOn(tables);
    expect(result).toEqual({ readable: true, drained: false });
    expect(metrics).toEqual([readable(1)]);
    expect(errors).toEqual([]);
  });

  it.each(eachTableMissing)(
    'publishes DatabaseReadable 0 when the %s table cannot be read, and logs why without its name',
    async (_table, broken) => {
      const names = broken(tables);
      const { result, metrics, errors } = await probeOn(names);
      expect(result).toEqual({ readable: false, drained: false });
      expect(metrics).toEqual([readable(0)]);
      expect(errors).toHaveLength(1);
      const logged = JSON.stringify(errors);
      expect(logged).toContain('ResourceNotFoundException');
      for (const name of Object.values(pick(names))) expect(logged).not.toContain(name);
    },
  );

  it('publishes DatabaseReadable 0 while the region is drained, which its alarm and Route 53 follow, and warns rather than errs', async () => {
    await drain(REGION);
    try {
      const { result, metrics, errors, warnings } = await probeOn(tables);
      expect(result).toEqual({ readable: false, drained: true });
      expect(metrics).toEqual([readable(0)]);
      expect(errors).toEqual([]);
      expect(JSON.stringify(warnings)).toContain('drained');
    } finally {
      await restore(REGION);
    }
    expect((await probeOn(tables)).metrics).toEqual([readable(1)]);
  });
});
