/**
 * The access lines (shared/http/access-log.ts) a test's handlers write, as CloudWatch Logs gets
 * them, and what the stack's metric filters count of them (infra/constructs/request-metrics.ts).
 */
import { vi } from 'vitest';
import { accessLineMetrics } from '../../infra/constructs/request-metrics';
import { ACCESS_LINE_MESSAGE } from '../../shared/http/access-log';
import { logger } from '../../shared/logger';
import type { Route } from '../../shared/routes';
import { matchesFilterPattern } from './logs-insights';

type Line = Readonly<Record<string, unknown>>;

/**
 * Turns the logger on (the tests run it silent) and captures what it writes to stdout and stderr,
 * until `stop`; `lines` are the access lines written so far.
 */
export const captureAccessLines = () => {
  const level = logger.getLevelName();
  logger.setLogLevel('INFO');
  const written: string[] = [];
  const capture = (chunk: string | Uint8Array) => {
    written.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  };
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  const all = (): Line[] => written.map((text) => JSON.parse(text) as Line);
  return {
    /** Every line written. */
    all,
    lines: (): Line[] => all().filter((line) => line.message === ACCESS_LINE_MESSAGE),
    stop: () => {
      stdout.mockRestore();
      stderr.mockRestore();
      logger.setLogLevel(level);
    },
  };
};

/** One datapoint of a metric filter: its metric's name and its dimensions, as read from the line. */
export interface Counted {
  readonly metricName: string;
  readonly dimensions: Readonly<Record<string, unknown>>;
}

/** What the route's metric filters count of these lines, in the lines' order. */
export const countedFrom = (route: Route, lines: readonly Line[]): Counted[] =>
  lines.flatMap((line) =>
    accessLineMetrics(route)
      .filter(({ pattern }) => matchesFilterPattern(pattern.logPatternString, line))
      .map(({ metricName, dimensions }) => ({
        metricName,
        dimensions: Object.fromEntries(Object.entries(dimensions).map(([name, field]) => [name, line[field.replace(/^\$\./, '')]])),
      })),
  );
