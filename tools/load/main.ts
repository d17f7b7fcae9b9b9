/**
 * `npm run load`: creates pets at a concurrency, walks every page, and reports throughput,
 * latency, and lost, duplicated and refused pets (all three must be 0; the exit code says so).
 * Without --url it starts DynamoDB Local and a local server of its own, and stops them after.
 */
import * as z from 'zod/mini';
import { parseCommandLine, reportFailure, UsageError } from '../cli';

const USAGE = `Usage: npm run load [-- options]

Creates pets, then walks every page of GET /v1/pets (unfiltered and per status).

Options:
  --count N          pets to create (default 2000)
  --concurrency C    creates in flight (default 32)
  --url URL          an API to load (ending in /v1), with --key; default: a local server started here
  --key KEY          the API key for --url
  --json             print the report as JSON
  --help             show this help

Exits 1 when a pet was lost or duplicated, or an answer was not 2xx; 2 when the run cannot
start: a bad option, no answer at --url, or --key refused.
`;
const HELP = 'npm run load -- --help';

const PositiveInteger = z.coerce.number().check(z.int(), z.positive(), z.maximum(1_000_000));

const positiveInteger = (name: string, value: string) => {
  const parsed = PositiveInteger.safeParse(value);
  if (!parsed.success) throw new UsageError(`--${name} must be an integer from 1 to 1000000: see ${HELP}`);
  return parsed.data;
};

const httpUrl = (value: string): string => {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw new UsageError(`--url must be an http or https URL ending in /v1: see ${HELP}`);
  return value.replace(/\/+$/, '');
};

const main = async (): Promise<number> => {
  const { values } = parseCommandLine(
    {
      options: {
        count: { type: 'string', default: '2000' },
        concurrency: { type: 'string', default: '32' },
        url: { type: 'string' },
        key: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    },
    HELP,
  );
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const count = positiveInteger('count', values.count);
  const concurrency = positiveInteger('concurrency', values.concurrency);
  if ((values.url === undefined) !== (values.key === undefined)) throw new UsageError(`--url and --key go together: see ${HELP}`);

  // One log line per request would drown the report: the local server runs silent.
  process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
  const { checkTarget, runLoad, formatReport, failures } = await import('./load');

  let target: { url: string; key: string; stop: () => Promise<void> };
  if (values.url !== undefined && values.key !== undefined) {
    const url = httpUrl(values.url);
    await checkTarget(url, values.key);
    target = { url, key: values.key, stop: async () => undefined };
  } else {
    // A DynamoDB Local of its own, in memory: fresh tables every run.
    const { startLocalStack } = await import('../local-server/local-stack');
    target = await startLocalStack({ dynamodbLocal: { port: 0 }, keyName: 'load', server: { port: 0 } });
  }
  try {
    if (!values.json) console.log(`Creating ${count} pets at concurrency ${concurrency} against ${target.url} …`);
    const report = await runLoad({ url: target.url, key: target.key, count, concurrency });
    console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
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
