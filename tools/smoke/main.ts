/**
 * `npm run smoke`: checks a running deployment from outside, as a client does (tools/smoke/checks.ts),
 * prints one line per check and a summary, and exits 1 when a check failed. The key is never
 * printed.
 */
import { OutputClosed, reportFailure, writeOutput } from '../cli';
import { runSmoke } from './run';

try {
  const { output, exitCode } = await runSmoke(process.argv.slice(2));
  process.exitCode = await writeOutput(`${output}\n`).then(
    () => exitCode,
    (error: OutputClosed) => reportFailure('npm run smoke', new Error(`the report could not be written, as ${error.message}.`)),
  );
} catch (error) {
  process.exitCode = reportFailure('npm run smoke', error);
}
