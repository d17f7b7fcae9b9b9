/**
 * The saved Logs Insights queries and the access log's metric filters, against the lines the
 * functions, the local gateway and the audit trail really write: every field a query reads is in
 * the lines of the log groups it reads, its filters pick the lines it is about, and the metric
 * filters count the 429s they name. A field renamed in a line, or in a query, fails here.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import { modifyRecord } from '../support/stream-records';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { throttlingPatterns } from '../../infra/constructs/throttling';
import { queryText } from '../../infra/constructs/saved-queries';
import { REQUEST_ID_PLACEHOLDER, savedQueries, type QueriedLogGroup, type SavedQuery } from '../../infra/log-queries';
import { createHandler as createAuditHandler } from '../../functions/key-audit';
import { ACCESS_LOG_FIELDS, type AccessLogLine } from '../../shared/access-log';
import { logger } from '../../shared/logger';
import type { Plans } from '../../shared/plans';
import { context } from '../support/events';
import { platformReportLine } from '../support/lambda-platform';
import { fieldsMissingFrom, fieldsOf, matchesFilterPattern, passesFilters } from '../support/logs-insights';
import { getWith, postPet, registerKeyOnPlan, startLocalApi, type LocalApi } from '../support/local-api';

type Line = Readonly<Record<string, unknown>>;

/** A plan whose one request a key spends at once (a rate of 0.001/s refills nothing), and one with a quota of one. */
const PLANS: Plans = {
  default: { rateLimit: 1_000, burstLimit: 1_000 },
  small: { rateLimit: 0.001, burstLimit: 1 },
  metered: { rateLimit: 1_000, burstLimit: 1_000, quota: { limit: 1, period: 'DAY' } },
};

let api: LocalApi;
const accessLines: AccessLogLine[] = [];
const written: string[] = [];
const linesOf: Record<QueriedLogGroup, Line[]> = { access: [], operations: [], authorizer: [], audit: [] };
let created: Response;

/** The JSON lines written to stdout and stderr (as CloudWatch reads both) while `run` runs. */
const capture = async (run: () => Promise<unknown>): Promise<Line[]> => {
  const lines: string[] = [];
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    });
  }
  try {
    await run();
  } finally {
    vi.restoreAllMocks();
  }
  written.push(...lines);
  return lines.map((line) => JSON.parse(line) as Line);
};

/** A MODIFY record of the keys table revoking a key. */
const revokeRecord = (): DynamoDBRecord => modifyRecord('1', 'revokedAt', '2030-01-01T00:00:00.000Z');

beforeAll(async () => {
  api = await startLocalApi({ plans: PLANS, accessLog: (line) => void accessLines.push(line) });
  const small = await registerKeyOnPlan(api, 'small');
  const metered = await registerKeyOnPlan(api, 'metered');
  logger.setLogLevel('INFO');
  const lines = await capture(async () => {
    created = await postPet(api, { name: 'Rex', categoryId: 1 });
    await api.call('/pets?limit=0'); // 400 validation_failed
    await getWith(api, small);
    await getWith(api, small); // 429 too_many_requests
    await getWith(api, metered);
    await getWith(api, metered); // 429 quota_exceeded
    await getWith(api, `petstore_${'x'.repeat(43)}`); // refused: unknown
  });
  logger.setLogLevel('SILENT');
  const auditLines = await capture(() => createAuditHandler()({ Records: [revokeRecord()] }, context));
  // The functions' lines, then the authorizer's; the local gateway's own lines have no log group deployed.
  // Only the authorizer keeps Lambda's REPORT lines (test/infra/console.test.ts holds the template to it).
  linesOf.operations = lines.filter((line) => line.message === 'request');
  linesOf.authorizer = [...lines.filter((line) => line.message === 'authorizer'), platformReportLine()];
  linesOf.audit = auditLines;
  linesOf.access = accessLines;
});
afterAll(() => api.close());

const linesRead = (query: SavedQuery): Line[] => query.logGroups.flatMap((group) => linesOf[group]);
const byName = (name: string): SavedQuery => {
  const query = savedQueries.find((candidate) => candidate.name === name);
  if (!query) throw new Error(`No saved query ${name}`);
  return query;
};
const throttledLine = () => accessLines.find((line) => line.gatewayResponse === 'THROTTLED');
const quotaLine = () => accessLines.find((line) => line.gatewayResponse === 'QUOTA_EXCEEDED');
const createdLine = () => accessLines.find((line) => line.requestId === created.headers.get('x-amzn-requestid'));

describe("the local gateway's access line", () => {
  it("has every field of the stage's access log, by the same names, and names the key by its id and plan, never the key", () => {
    expect(accessLines.length).toBeGreaterThanOrEqual(7);
    for (const line of accessLines) expect(Object.keys(line)).toEqual(Object.keys(ACCESS_LOG_FIELDS));
    expect(createdLine()).toMatchObject({ status: '201', httpMethod: 'POST', resourcePath: '/pets', plan: 'default' });
    expect(createdLine()?.keyId).toMatch(/^[0-9a-f]{12}$/);
    expect(throttledLine()).toMatchObject({ status: '429', plan: 'small', keyId: expect.stringMatching(/^[0-9a-f]{12}$/) });
    expect(quotaLine()).toMatchObject({ status: '429', plan: 'metered' });
    expect(JSON.stringify(accessLines)).not.toContain(api.key);
    expect(JSON.stringify(accessLines)).not.toMatch(/petstore_/);
  });
});

describe('the saved queries', () => {
  it.each(savedQueries.map((query) => [query.name, query] as const))('%s reads only fields its log groups have', (_name, query) => {
    const lines = linesRead(query);
    expect(lines.length, `no lines captured for ${query.logGroups.join(', ')}`).toBeGreaterThan(0);
    expect(fieldsOf(queryText(query)).length).toBeGreaterThan(0);
    expect(fieldsMissingFrom(queryText(query), lines)).toEqual([]);
  });

  it.each(savedQueries.map((query) => [query.name, query] as const))('%s picks some real lines with its filters', (_name, query) => {
    const requestId = created.headers.get('x-amzn-requestid') ?? '';
    const text = queryText(query).replaceAll(REQUEST_ID_PLACEHOLDER, requestId);
    expect(linesRead(query).filter((line) => passesFilters(text, line)).length).toBeGreaterThan(0);
  });

  it('find one request in the access log and in its function log, by the id its client got', () => {
    const requestId = created.headers.get('x-amzn-requestid') ?? '';
    const text = queryText(byName('one-request')).replaceAll(REQUEST_ID_PLACEHOLDER, requestId);
    expect(linesOf.access.filter((line) => passesFilters(text, line))).toHaveLength(1);
    expect(linesOf.operations.filter((line) => passesFilters(text, line))).toEqual([expect.objectContaining({ operation: 'createPet' })]);
  });

  it("count a key's 429s, throttled and over quota, and no other answer", () => {
    const text = queryText(byName('too-many-requests-by-key'));
    expect(accessLines.filter((line) => passesFilters(text, line))).toEqual([throttledLine(), quotaLine()]);
  });

  it("count the authorizer's refusals with their reason, and the audit trail's key changes", () => {
    const refusals = linesOf.authorizer.filter((line) => passesFilters(queryText(byName('authorizer-refusals-by-reason')), line));
    expect(refusals).toEqual([expect.objectContaining({ reason: 'unknown' })]);
    const changes = linesOf.audit.filter((line) => passesFilters(queryText(byName('key-changes')), line));
    expect(changes).toEqual([expect.objectContaining({ action: 'revoked', keyId: 'ffffffffffff', by: 'unknown' })]);
  });

  it('fail on a field no line has: a field renamed in a copy of a query, or in the lines', () => {
    const query = byName('too-many-requests-by-key');
    const renamed = queryText(query).replaceAll('keyId', 'apiKeyId');
    expect(fieldsMissingFrom(renamed, linesRead(query))).toEqual(['apiKeyId']);
    const linesWithPlanRenamed = linesRead(query).map(({ plan, ...line }) => ({ ...line, usagePlan: plan }));
    expect(fieldsMissingFrom(queryText(query), linesWithPlanRenamed)).toEqual(['plan']);
  });
});

describe("the access log's metric filters", () => {
  it("count 429 too_many_requests and quota_exceeded each on their own, and as served every key's answer past the throttles", () => {
    const matching = (pattern: { logPatternString: string }) =>
      accessLines.filter((line) => matchesFilterPattern(pattern.logPatternString, line));
    expect(matching(throttlingPatterns.tooManyRequests)).toEqual([throttledLine()]);
    expect(matching(throttlingPatterns.quotaExceeded)).toEqual([quotaLine()]);
    const served = matching(throttlingPatterns.served);
    expect(served).toContain(createdLine());
    // The 400 a function answered was served; the unknown key the authorizer refused (401) never reached a throttle.
    expect(served.map((line) => line.status)).toContain('400');
    expect(accessLines.map((line) => line.status)).toContain('401');
    expect(served.map((line) => line.status)).not.toContain('401');
  });
});
