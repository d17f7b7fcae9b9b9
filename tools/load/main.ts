/**
 * `npm run load`: creates pets at a concurrency, walks every page, and reports throughput,
 * latency, and lost, duplicated and refused pets (all three must be 0; the exit code says so).
 * Without --url it starts DynamoDB Local and a local server of its own, and stops them after.
 */
import { parseArgs } from 'node:util';
import * as z from 'zod/mini';

const USAGE = `Usage: npm run load [-- options]

Creates pets, then walks every page of GET /v1/pets (unfiltered and per status).

Options:
  --count N          pets to create (default 2000)
  --concurrency C    creates in flight (default 32)
  --url URL          an API to load (ending in /v1), with --key; default: a local server started here
  --key KEY          the API key for --url
  --json             print the report as JSON
  --help             show this help

Exits 1 when a pet was lost or duplicated, or an answer was not 2xx.
`;

const PositiveInteger = z.coerce.number().check(z.int(), z.positive(), z.maximum(1_000_000));

const fail = (message: string): never => {
  console.error(`npm run load: ${message}\n\n${USAGE}`);
  process.exit(2);
};

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        count: { type: 'string', default: '2000' },
        concurrency: { type: 'string', default: '32' },
        url: { type: 'string' },
        key: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    return fail((error as Error).message);
  }
})();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const positiveInteger = (name: string, value: string) => {
  const parsed = PositiveInteger.safeParse(value);
  return parsed.success ? parsed.data : fail(`--${name} must be an integer from 1 to 1000000`);
};
const count = positiveInteger('count', values.count);
const concurrency = positiveInteger('concurrency', values.concurrency);
if ((values.url === undefined) !== (values.key === undefined)) fail('--url and --key go together');

// One log line per request would drown the report: the local server runs silent.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
const { runLoad, formatReport, failures } = await import('./load');

const target = values.url && values.key ? { url: values.url, key: values.key, stop: async () => undefined } : await (await import('./local-target')).startLocalTarget();
try {
  if (!values.json) console.log(`Creating ${count} pets at concurrency ${concurrency} against ${target.url} …`);
  const report = await runLoad({ url: target.url, key: target.key, count, concurrency });
  console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
  process.exitCode = failures(report).length === 0 ? 0 : 1;
} finally {
  await target.stop();
}
