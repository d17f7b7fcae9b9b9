/**
 * `npm run smoke`: checks a running deployment from outside, as a client does (tools/smoke/checks.ts),
 * prints one line per check and a summary, and exits 1 when a check failed. The key is never
 * printed.
 */
import { reportFailure } from '../cli';
import { parseSmokeCommand, resolveBaseUrl, SMOKE_USAGE } from './options';

const main = async (): Promise<number> => {
  const command = parseSmokeCommand(process.argv.slice(2));
  if (command === undefined) {
    console.log(SMOKE_USAGE);
    return 0;
  }
  const started = performance.now();
  const baseUrl = await resolveBaseUrl(command.target);
  const { runChecks } = await import('./checks');
  const { formatReport, smokeReport } = await import('./report');
  if (!command.json) console.log(`Smoke test of ${baseUrl}${command.readOnly ? ' (read-only)' : ''}`);
  const checks = await runChecks({ baseUrl, key: command.key, readOnly: command.readOnly, timeoutMs: command.timeoutMs });
  const report = smokeReport(checks, (performance.now() - started) / 1000);
  console.log(command.json ? JSON.stringify(report, null, 2) : formatReport(report));
  return report.failed === 0 ? 0 : 1;
};

try {
  process.exitCode = await main();
} catch (error) {
  process.exitCode = reportFailure('npm run smoke', error);
}
