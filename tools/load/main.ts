/**
 * `npm run load`: creates pets at a concurrency with one key or several in turn, walks every page,
 * and reports throughput, latency, lost, duplicated and refused pets (all three must be 0; the
 * exit code says so), and per key its requests and 429s. Without --url it starts DynamoDB Local
 * and a local server of its own with its keys, and stops them after.
 */
import { reportFailure } from '../cli';
import { LOAD_USAGE, parseLoadCommand } from './options';

const main = async (): Promise<number> => {
  const command = parseLoadCommand(process.argv.slice(2));
  if (command === undefined) {
    console.log(LOAD_USAGE);
    return 0;
  }
  const { count, concurrency, json, target: wanted } = command;

  // One log line per request would drown the report: the local server runs silent.
  process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  const { checkTarget, runLoad, formatReport, failures } = await import('./load');

  let target: { url: string; keys: readonly string[]; stop: () => Promise<void> };
  if (wanted.kind === 'url') {
    await checkTarget(wanted.url, wanted.keys);
    target = { url: wanted.url, keys: wanted.keys, stop: async () => undefined };
  } else {
    const { startLoadTarget } = await import('./local-target');
    target = await startLoadTarget(wanted);
  }
  try {
    if (!json) {
      const keys = target.keys.length === 1 ? 'one key' : `${target.keys.length} keys in turn`;
      const plan = wanted.kind === 'local' ? ` on plan ${wanted.plan}` : '';
      console.log(`Creating ${count} pets at concurrency ${concurrency} against ${target.url} with ${keys}${plan} …`);
    }
    const report = await runLoad({ url: target.url, keys: target.keys, count, concurrency });
    console.log(json ? JSON.stringify(report, null, 2) : formatReport(report));
    return failures(report).length === 0 ? 0 : 1;
  } finally {
    await target.stop();
  }
};

try {
  process.exitCode = await main();
} catch (error) {
  process.exitCode = reportFailure('npm run load', error);
}
