/** The key-audit function over a stream batch: one line per change, in order; a line not written is handed again. */
import { APIGatewayClient, FlushStageAuthorizersCacheCommand } from '@aws-sdk/client-api-gateway';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHandler, logAuditEntry } from '../../functions/key-audit';
import { auditEntryOf, MAX_AUDIT_LINE_BYTES, TRUNCATED_TEXT_LENGTH, TRUNCATION_MARK, type KeyAuditEntry } from '../../shared/key-audit';
import { stageSettings } from '../../infra/stages';
import { API_STAGE_NAME_VARIABLE, REST_API_ID_VARIABLE } from '../../shared/authorizer-cache';
import { HOME_REGION_VARIABLE } from '../../shared/key-audit';
import { logger } from '../../shared/logger';
import { authorizerCacheFlushCall, recordAwsCall } from '../support/aws-calls';
import { context } from '../support/events';
import { FIXTURE_PREFIX } from '../support/fixture-names';
import { inStreamOf, modifyRecord, removeRecord, stampedIn } from '../support/stream-records';

const batch = (...records: DynamoDBRecord[]): DynamoDBStreamEvent => ({ Records: records });

describe('the key-audit function', () => {
  it('writes one line per change, in stream order', async () => {
    const written: KeyAuditEntry[] = [];
    const handler = createHandler({ write: (entry) => void written.push(entry) });

    const result = await handler(
      batch(
        modifyRecord('1', 'name', 'deploy'),
        modifyRecord('2', 'note', 'rotate in May'),
        modifyRecord('3', 'revokedAt', '2030-01-01T00:00:00.000Z'),
      ),
      context,
    );

    expect(result).toEqual({ batchItemFailures: [] });
    expect(written.map(({ eventId, sequenceNumber, action }) => [eventId, sequenceNumber, action])).toEqual([
      ['event-1', '1', 'renamed'],
      ['event-2', '2', 'changed'],
      ['event-3', '3', 'revoked'],
    ]);
  });

  it('reports the first record whose line fails, and writes none after it, so the stream hands them again in order', async () => {
    const written: string[] = [];
    let calls = 0;
    const handler = createHandler({
      write: ({ eventId }) => {
        calls += 1;
        if (calls === 2) throw new Error('log destination unavailable');
        written.push(eventId);
      },
    });

    const result = await handler(
      batch(modifyRecord('10', 'name', 'a'), modifyRecord('11', 'name', 'b'), modifyRecord('12', 'name', 'c')),
      context,
    );

    expect(result).toEqual({ batchItemFailures: [{ itemIdentifier: '11' }] });
    expect(written).toEqual(['event-10']);
  });
});

describe('the key-audit functions of a stage in several regions', () => {
  const regions = stageSettings('global').regions ?? [];
  const [home = '', elsewhere = ''] = regions;
  /** What a hand-written stamp may name: a region the stage does not run in. */
  const NO_REGION_OF_THE_STAGE = `${FIXTURE_PREFIX}-region-1`;

  /**
   * Each region's function, as the stack configures it there (AWS_REGION, HOME_REGION,
   * STAGE_REGIONS): the lines it writes and the flushes it makes.
   */
  const regionalFunctions = (homeRegion: string | undefined, stageRegions: readonly string[] = homeRegion === undefined ? [] : regions) =>
    regions.map((region) => {
      const lines: KeyAuditEntry[] = [];
      const flushes: string[] = [];
      const handler = createHandler({
        region,
        homeRegion,
        stageRegions,
        write: (entry) => void lines.push(entry),
        flushAuthorizerCache: async () => void flushes.push(region),
      });
      return { region, lines, flushes, handler };
    });

  /** Hands each region's function the same change, as its replica's stream hands it. */
  const replicate = async (functions: ReturnType<typeof regionalFunctions>, ...records: DynamoDBRecord[]) => {
    for (const { region, handler } of functions) {
      expect(await handler(batch(...records.map((record) => inStreamOf(record, region))), context)).toEqual({ batchItemFailures: [] });
    }
  };

  /** Each line written, as [the region that wrote it, its action]. */
  const linesOf = (functions: ReturnType<typeof regionalFunctions>) =>
    functions.flatMap(({ region, lines }) => lines.map(({ action }) => [region, action]));

  it('records a change once across the regions, in the region that stamped it, whichever replica streams it', async () => {
    expect(regions.length).toBeGreaterThan(1);
    const functions = regionalFunctions(home);
    await replicate(functions, stampedIn(modifyRecord('1', 'revokedAt', '2030-01-02T03:04:05.000Z'), elsewhere));

    expect(linesOf(functions)).toEqual([[elsewhere, 'revoked']]);
  });

  it("records a deletion once, by the region its old image's stamp names", async () => {
    const functions = regionalFunctions(home);
    await replicate(functions, stampedIn(removeRecord('2'), elsewhere));

    expect(linesOf(functions)).toEqual([[elsewhere, 'deleted']]);
  });

  it('records a change no region stamped (an edit in the console) once, in the home region', async () => {
    const functions = regionalFunctions(home);
    await replicate(functions, modifyRecord('3', 'scopes', 'nothing-real'));

    expect(linesOf(functions)).toEqual([[home, 'scopes_changed']]);
  });

  it('records a change stamped with a region the stage does not run in (an edit by hand) once, in the home region', async () => {
    const functions = regionalFunctions(home);
    // Scopes widened by hand, stamped with no region of the stage: every region's cache is flushed all the same.
    await replicate(functions, stampedIn(modifyRecord('12', 'scopes', 'nothing-real'), NO_REGION_OF_THE_STAGE));

    expect(linesOf(functions)).toEqual([[home, 'scopes_changed']]);
    expect(functions.map(({ flushes }) => flushes.length)).toEqual(regions.map(() => 1));
  });

  it("without the stage's regions (a setting left out), records a change stamped with a region it does not know twice rather than never", async () => {
    const functions = regionalFunctions(home, []);
    await replicate(functions, stampedIn(modifyRecord('13', 'scopes', 'nothing-real'), elsewhere));

    expect(linesOf(functions)).toEqual([
      [home, 'scopes_changed'],
      [elsewhere, 'scopes_changed'],
    ]);
  });

  it('records every change on a stage in one region (no home region), whatever region stamped it', async () => {
    const [alone] = regionalFunctions(undefined);
    await alone!.handler(batch(stampedIn(modifyRecord('4', 'name', 'a'), elsewhere), modifyRecord('5', 'name', 'b')), context);

    expect(alone!.lines.map(({ sequenceNumber }) => sequenceNumber)).toEqual(['4', '5']);
  });

  it("flushes each region's authorizer cache once after a batch with a change of an answer, wherever it was made", async () => {
    const functions = regionalFunctions(home);
    await replicate(
      functions,
      stampedIn(modifyRecord('6', 'revokedAt', '2030-01-02T03:04:05.000Z'), home),
      stampedIn(modifyRecord('7', 'plan', 'fixture-plan'), home),
    );

    expect(functions.map(({ flushes }) => flushes)).toEqual(regions.map((region) => [region]));
  });

  it.each([
    ['an expiry set', 'expiresAt', '2030-01-01T00:00:00.000Z'],
    ['an expiry marked', 'expiredAt', '2030-01-01T00:00:00.000Z'],
    ['scopes changed', 'scopes', 'nothing-real'],
    ['a plan changed', 'plan', 'fixture-plan'],
    ['a usage key changed', 'usageKey', 'fixture-value'],
  ])('flushes after %s', async (_change, attribute, value) => {
    const functions = regionalFunctions(home);
    await replicate(functions, stampedIn(modifyRecord('8', attribute, value), home));

    expect(functions.map(({ flushes }) => flushes.length)).toEqual(regions.map(() => 1));
  });

  it('flushes after a key is deleted, and not after a change no answer is made of (a rename)', async () => {
    const renamed = regionalFunctions(home);
    await replicate(renamed, stampedIn(modifyRecord('9', 'name', 'renamed'), home));
    expect(renamed.flatMap(({ flushes }) => flushes)).toEqual([]);

    const deleted = regionalFunctions(home);
    await replicate(deleted, stampedIn(removeRecord('10'), home));
    expect(deleted.map(({ flushes }) => flushes.length)).toEqual(regions.map(() => 1));
  });

  it("writes its lines and ends the batch well when the flush fails: the cache's TTL still ends the answers", async () => {
    const written: string[] = [];
    const handler = createHandler({
      region: home,
      homeRegion: home,
      write: ({ eventId }) => void written.push(eventId),
      flushAuthorizerCache: () => Promise.reject(new Error('TooManyRequestsException')),
    });

    const said = vi.spyOn(logger, 'error').mockImplementation(() => undefined);

    const result = await handler(batch(stampedIn(modifyRecord('11', 'revokedAt', '2030-01-02T03:04:05.000Z'), home)), context);

    expect(result).toEqual({ batchItemFailures: [] });
    expect(written).toEqual(['event-11']);
    expect(said).toHaveBeenCalledWith(
      expect.stringMatching(/^authorizer cache not flushed/),
      expect.objectContaining({ errorName: 'Error' }),
    );
    said.mockRestore();
  });
});

describe('the key-audit function as deployed in a region of a stage in several', () => {
  const apiGateway = mockClient(APIGatewayClient);
  afterEach(() => {
    apiGateway.reset();
    vi.unstubAllEnvs();
  });

  it('flushes the authorizer cache of the stage the stack names, in its own region, after a revoke made in another', async () => {
    const [home = '', here = ''] = stageSettings('global').regions ?? [];
    vi.stubEnv(REST_API_ID_VARIABLE, 'a1b2c3d4e5');
    vi.stubEnv(API_STAGE_NAME_VARIABLE, 'v1');
    vi.stubEnv(HOME_REGION_VARIABLE, home);
    vi.stubEnv('AWS_REGION', here);
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    apiGateway.on(FlushStageAuthorizersCacheCommand).resolves({});
    const written: KeyAuditEntry[] = [];

    const revoke = inStreamOf(stampedIn(modifyRecord('20', 'revokedAt', '2030-01-02T03:04:05.000Z'), home), here);
    expect(await createHandler({ write: (entry) => void written.push(entry) })(batch(revoke), context)).toEqual({ batchItemFailures: [] });

    // Recorded where it was made, not here; flushed here all the same.
    expect(written).toEqual([]);
    const flushes = apiGateway.commandCalls(FlushStageAuthorizersCacheCommand).map((call) => call.args[0].input);
    expect(flushes).toEqual([{ restApiId: 'a1b2c3d4e5', stageName: 'v1' }]);
    for (const input of flushes) recordAwsCall(authorizerCacheFlushCall('keyAudit', input));
  });
});

describe('the audit line as logged', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** The JSON lines written to stdout while `run` runs. */
  const stdoutLines = (run: () => void): Array<Record<string, unknown>> => {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    });
    run();
    vi.restoreAllMocks();
    return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  };

  it("is written whatever POWERTOOLS_LOG_LEVEL says (here SILENT, the tests' setting), and names its stream record", () => {
    expect(process.env.POWERTOOLS_LOG_LEVEL).toBe('SILENT');
    const entry = auditEntryOf(modifyRecord('42', 'revokedAt', '2030-01-01T00:00:00.000Z'));

    const lines = stdoutLines(() => logAuditEntry(entry!));

    expect(lines).toEqual([
      expect.objectContaining({ level: 'INFO', message: 'key change', action: 'revoked', eventId: 'event-42', sequenceNumber: '42' }),
    ]);
  });

  it("is written within a log event's size, truncated and marked so, when a change is longer (a 250 KB name)", async () => {
    const record = modifyRecord('43', 'name', 'n'.repeat(250_000));
    const written: KeyAuditEntry[] = [];
    const handler = createHandler({
      write: (entry) => {
        written.push(entry);
        logAuditEntry(entry);
      },
    });
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    });

    expect(await handler(batch(record), context)).toEqual({ batchItemFailures: [] });

    vi.restoreAllMocks();
    expect(lines).toHaveLength(1);
    const line = lines[0] ?? '';
    expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(MAX_AUDIT_LINE_BYTES);
    expect(JSON.parse(line)).toMatchObject({
      message: 'key change',
      truncated: true,
      keyId: 'ffffffffffff',
      action: 'renamed',
      by: 'unknown',
      eventId: 'event-43',
      sequenceNumber: '43',
      name: `${'n'.repeat(TRUNCATED_TEXT_LENGTH)}${TRUNCATION_MARK}`,
    });
    // The local trail stores what the log group would hold.
    expect(written).toEqual([expect.objectContaining({ truncated: true, name: `${'n'.repeat(TRUNCATED_TEXT_LENGTH)}${TRUNCATION_MARK}` })]);
  });
});
