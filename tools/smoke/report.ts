/** How `npm run smoke` reports: one line per check and a summary, or one JSON document. */
import { CHECK_NAMES, type SmokeCheckResult } from './checks';

export interface SmokeReport {
  readonly checks: readonly SmokeCheckResult[];
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly seconds: number;
}

export const smokeReport = (checks: readonly SmokeCheckResult[], seconds: number): SmokeReport => ({
  checks,
  passed: checks.filter((check) => check.status === 'ok').length,
  failed: checks.filter((check) => check.status === 'FAIL').length,
  skipped: checks.filter((check) => check.status === 'skip').length,
  seconds: Math.round(seconds * 100) / 100,
});

const NAME_WIDTH = Math.max(...CHECK_NAMES.map((name) => name.length));

/** `ok   list           200, 1 pet, Link rel="next"  (12 ms)` */
const formatCheck = ({ name, status, detail, ms }: SmokeCheckResult): string =>
  `${status.padEnd(4)} ${name.padEnd(NAME_WIDTH)}  ${detail}  (${ms} ms)`;

export const formatReport = (report: SmokeReport): string =>
  [
    ...report.checks.map(formatCheck),
    `${report.failed === 0 ? 'Passed' : 'FAILED'}: ${report.passed} ok, ${report.failed} failed, ${report.skipped} skipped in ${report.seconds} s`,
  ].join('\n');
