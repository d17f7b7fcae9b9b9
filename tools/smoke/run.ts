/**
 * One run of `npm run smoke`, from its arguments to what it prints and its exit status: main.ts
 * prints it, and the tests run it in-process against servers broken on purpose. All it prints,
 * and every error it throws, went through the key mask with the key (tools/key-mask.ts).
 */
import { maskedError } from '../cli';
import { keysIn, maskKeys } from '../key-mask';
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
  // Before the key is known, the mask holds what looks like one on the command line (pasted in the wrong place).
  const secrets = keysIn(argv);
  try {
    const command = parseSmokeCommand(argv, env);
    if (command === undefined) return { output: SMOKE_USAGE, exitCode: 0 };
    secrets.push(command.key);
    const started = performance.now();
    const baseUrl = await resolveBaseUrl(command.target);
    const checks = await runChecks({ baseUrl, key: command.key, readOnly: command.readOnly, timeoutMs: command.timeoutMs });
    const report = smokeReport(checks, (performance.now() - started) / 1000);
    const heading = `Smoke test of ${baseUrl}${command.readOnly ? ' (read-only)' : ''}`;
    return {
      output: maskKeys(command.json ? JSON.stringify(report, null, 2) : `${heading}\n${formatReport(report)}`, secrets),
      exitCode: report.failed === 0 ? 0 : 1,
    };
  } catch (error) {
    throw maskedError(error, secrets);
  }
};
