/**
 * The authorizer's log lines against the metric filter the stack alarms on: a failure's line is
 * counted, under its stage's service, a refusal's never (a refused key is the authorizer working,
 * and on a public API comes all the time). The lines are the authorizer's own, as Powertools
 * writes them to CloudWatch.
 */
import { describe, expect, it, vi } from 'vitest';
import { createHandler } from '../../functions/authorizer';
import { AUTHORIZER_FAILURE_DIMENSIONS, authorizerFailurePattern } from '../../infra/constructs/monitoring';
import type { ApiKeyRecord, ApiKeysRepository } from '../../shared/api-keys-repository';
import { hashApiKey, generateApiKey, keyIdOf } from '../../shared/api-keys';
import { DatabaseUnavailable } from '../../shared/dynamodb';
import { logger } from '../../shared/logger';
import { context, tokenEvent } from '../support/events';

type LogLine = Record<string, unknown>;

/**
 * Whether CloudWatch Logs' filter matches a JSON line. Reads only the one form the stack uses,
 * `{ $.field = "value" }` (a top-level field equal to a string), and throws on any other.
 */
const matches = (pattern: string, line: LogLine): boolean => {
  const parsed = /^\{ \$\.(\w+) = "([^"*]*)" \}$/.exec(pattern);
  if (!parsed) throw new Error(`not a pattern this test reads: ${pattern}`);
  const [, field = '', value] = parsed;
  return line[field] === value;
};

/** A top-level field's value, by the JSON path a metric filter's dimension reads (`$.field`). */
const valueAt = (path: string, line: LogLine): unknown => {
  const parsed = /^\$\.(\w+)$/.exec(path);
  if (!parsed) throw new Error(`not a path this test reads: ${path}`);
  return line[parsed[1] ?? ''];
};

/** The authorizer and the logger it writes with, as a module graph loads them (the test's own by default). */
interface LoadedAuthorizer {
  readonly createHandler: typeof createHandler;
  readonly logger: typeof logger;
}

/** The JSON lines the authorizer writes, at `level`, while it answers `token` (allowed, refused or failed). */
const linesOf = async (
  keys: Partial<ApiKeysRepository>,
  token: string,
  level: 'INFO' | 'ERROR',
  authorizer: LoadedAuthorizer = { createHandler, logger },
): Promise<LogLine[]> => {
  const written: string[] = [];
  // Powertools writes INFO to stdout and ERROR to stderr: read both, as CloudWatch does.
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(...String(chunk).split('\n').filter(Boolean));
      return true;
    });
  }
  authorizer.logger.setLogLevel(level);
  try {
    await authorizer
      // No last use recorded: the key's own item decides.
      .createHandler({ keys: { lastUseOf: () => Promise.resolve(undefined), ...keys } as ApiKeysRepository })(tokenEvent(token), context)
      .catch(() => undefined);
  } finally {
    authorizer.logger.setLogLevel('SILENT');
    vi.restoreAllMocks();
  }
  return written.map((line) => JSON.parse(line) as LogLine);
};

const key = generateApiKey();
const record: ApiKeyRecord = {
  keyHash: hashApiKey(key),
  keyId: keyIdOf(hashApiKey(key)),
  name: 'ci',
  scopes: ['pets:read'],
  createdAt: '2020-01-01T00:00:00.000Z',
};
const unreadable: Partial<ApiKeysRepository> = { find: () => Promise.reject(new DatabaseUnavailable('throttled')) };

describe("the authorizer's failure filter", () => {
  const pattern = authorizerFailurePattern().logPatternString;

  it('is the JSON filter on the decision field', () => {
    expect(pattern).toBe('{ $.decision = "fail" }');
  });

  it('matches the line of a failure (the keys table unreadable)', async () => {
    const lines = await linesOf(unreadable, `Bearer ${key}`, 'INFO');
    expect(lines).toEqual([expect.objectContaining({ level: 'ERROR', message: 'authorizer', errorName: 'DatabaseUnavailable' })]);
    expect(lines.filter((line) => matches(pattern, line))).toHaveLength(1);
  });

  it('matches it at ERROR too, the highest level that still writes a failure', async () => {
    const lines = await linesOf(unreadable, `Bearer ${key}`, 'ERROR');
    expect(lines.filter((line) => matches(pattern, line))).toHaveLength(1);
  });

  it("carries its stage's service, from POWERTOOLS_SERVICE_NAME, as the dimension the filter counts it under", async () => {
    // As a deployed stage's authorizer starts: its service in the environment, then the modules loaded.
    vi.stubEnv('POWERTOOLS_SERVICE_NAME', 'pet-store-prod');
    vi.resetModules();
    try {
      const deployed: LoadedAuthorizer = {
        createHandler: (await import('../../functions/authorizer')).createHandler,
        logger: (await import('../../shared/logger')).logger,
      };
      const failures = (await linesOf(unreadable, `Bearer ${key}`, 'INFO', deployed)).filter((line) => matches(pattern, line));
      expect(failures).toHaveLength(1);
      expect(Object.keys(AUTHORIZER_FAILURE_DIMENSIONS)).toEqual(['service']);
      for (const path of Object.values(AUTHORIZER_FAILURE_DIMENSIONS)) expect(valueAt(path, failures[0]!)).toBe('pet-store-prod');
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });

  it.each([
    ['an unknown key', { find: () => Promise.resolve(undefined) }, `Bearer ${key}`, 'unknown'],
    ['a revoked key', { find: () => Promise.resolve({ ...record, revokedAt: '2020-01-02T00:00:00.000Z' }) }, `Bearer ${key}`, 'revoked'],
    ['an expired key', { find: () => Promise.resolve({ ...record, expiresAt: '2020-01-02T00:00:00.000Z' }) }, `Bearer ${key}`, 'expired'],
    ['a credential that is no bearer key', {}, 'Basic x', 'unknown'],
  ] satisfies Array<[string, Partial<ApiKeysRepository>, string, string]>)(
    'does not match the line of a refusal: %s',
    async (_, keys, token, reason) => {
      const lines = await linesOf(keys, token, 'INFO');
      expect(lines).toEqual([expect.objectContaining({ level: 'INFO', message: 'authorizer', decision: 'refuse', reason })]);
      expect(lines.filter((line) => matches(pattern, line))).toEqual([]);
    },
  );
});
