/**
 * One run of `npm run smoke`, from its arguments to what it prints and its exit status: main.ts
 * prints it, and the tests run it in-process against servers broken on purpose.
 */
import { parseSmokeCommand, resolveBaseUrl, SMOKE_USAGE } from './options';
import { runChecks } from './checks';
import { formatReport, smokeReport } from './report';

export interface SmokeRun {
  /** What goes to standard output: the lines and the summary, or the JSON report. */
  readonly output: string;
  /** 0 when every check passed or was skipped, 1 when one failed. */
  readonly exitCode: 0 | 1;
}

/** Runs the checks `argv` asks for; throws a UsageError for bad usage or a stack with no URL. */
export const runSmoke = async (
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<SmokeRun> => {
  const command = parseSmokeCommand(argv, env);
  if (command === undefined) return { output: SMOKE_USAGE, exitCode: 0 };
  const started = performance.now();
  const baseUrl = await resolveBaseUrl(command.target);
  const checks = await runChecks({ baseUrl, key: command.key, readOnly: command.readOnly, timeoutMs: command.timeoutMs });
  const report = smokeReport(checks, (performance.now() - started) / 1000);
  const heading = `Smoke test of ${baseUrl}${command.readOnly ? ' (read-only)' : ''}`;
  return {
    output: command.json ? JSON.stringify(report, null, 2) : `${heading}\n${formatReport(report)}`,
    exitCode: report.failed === 0 ? 0 : 1,
  };
};
