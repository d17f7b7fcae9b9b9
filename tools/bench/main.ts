/**
 * `npm run bench [-- <part>...] [--quick]`: runs the benchmark parts (all by default: cold, warm,
 * reads, load, scaling, client), prints their tables, and merges their results into generated/bench-results.json,
 * then regenerates BENCHMARKS.md and generated/bench-chart.svg from it. Parts run alone keep the other
 * parts' last figures; --quick runs fewer rounds and writes nothing. Exit code: 1 when any budget of the parts run FAILs (budgets are hard;
 * the files are written first), 2 when the harness itself fails.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { PROJECT_NAME } from '../../shared/project';
import { projectRoot } from '../../shared/project-root';
import { CHART_PATH, PART_NAMES, REPORT_PATH, RESULTS_PATH, type Machine, type PartName, type PartResult, type Results } from './results';
import { round } from '../stats';

// The functions log as deployed; the parts send stdout to a sink while they measure.
process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
process.env.POWERTOOLS_SERVICE_NAME ??= PROJECT_NAME;

const USAGE = `Usage: npm run bench [-- [cold|warm|reads|load|scaling|client]... [--quick]]

Runs the named parts (default: all), prints their figures, updates ${RESULTS_PATH},
${REPORT_PATH} and ${CHART_PATH}. --quick: fewer runs, for trying the harness; writes nothing.
Exit code 1 when a budget fails, 2 when the harness fails.`;

const machine = (): Machine => ({
  date: new Date().toISOString(),
  nproc: cpus().length,
  cpu: cpus()[0]?.model.trim() ?? 'unknown',
  memoryGiB: round(totalmem() / 2 ** 30, 1),
  node: process.versions.node,
  platform: `${process.platform} ${process.arch}`,
  loadAverage: loadavg().map((value) => round(value, 2)),
});

const main = async (): Promise<number> => {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { quick: { type: 'boolean' }, help: { type: 'boolean' } } });
  if (values.help) return (console.log(USAGE), 0);
  const unknown = positionals.filter((name) => !PART_NAMES.includes(name as PartName));
  if (unknown.length > 0) return (console.error(`npm run bench: unknown part ${unknown.join(', ')}\n\n${USAGE}`), 2);
  const parts = positionals.length === 0 ? PART_NAMES : (positionals as PartName[]);
  const quick = values.quick === true;
  const here = machine();
  console.log(
    `Benchmark on ${here.nproc} cores, ${here.memoryGiB} GiB (${round(freemem() / 2 ** 30, 1)} free), ` +
      `Node ${here.node}, load ${here.loadAverage.join(' ')}; parts: ${parts.join(', ')}${quick ? ' (quick)' : ''}`,
  );

  const resultsPath = join(projectRoot, RESULTS_PATH);
  const previous: Results = existsSync(resultsPath)
    ? (JSON.parse(readFileSync(resultsPath, 'utf8')) as Results)
    : { machine: here, parts: {} };
  const fresh: PartResult[] = [];
  const { consoleReport, markdownReport, svgChart } = await import('./report');
  const needsDatabase = parts.some((part) => part === 'reads' || part === 'load');
  const { startDynamoDBLocal } = await import('../dynamodb-local');
  const database = needsDatabase ? await startDynamoDBLocal({ port: 0 }) : undefined;
  try {
    for (const part of parts) {
      let result: PartResult;
      if (part === 'cold') result = await (await import('./cold')).runCold({ runs: quick ? 3 : 15 });
      else if (part === 'warm') result = await (await import('./warm')).runWarm({ iterations: quick ? 1_000 : 10_000 });
      else if (part === 'reads') result = await (await import('./reads')).runReads({ endpoint: database?.endpoint ?? '' });
      else if (part === 'load')
        result = await (
          await import('./load')
        ).runLoad({ endpoint: database?.endpoint ?? '', connections: 16, seconds: quick ? 2 : 6, rounds: quick ? 1 : 5 });
      else if (part === 'client') result = await (await import('./client')).runClient({ iterations: quick ? 1_000 : 10_000 });
      else result = (await import('./scaling')).runScaling();
      console.log(consoleReport(result));
      fresh.push(result);
    }
  } finally {
    await database?.stop();
  }

  const failed = fresh.flatMap((result) => result.checks).filter((check) => check.pass === false);
  const verdict = failed.length === 0 ? 'Every budget of the parts run passes.' : `FAIL: ${failed.map((check) => check.label).join('; ')}`;
  if (quick) {
    console.log(`\n--quick: nothing written (quick figures are not figures). ${verdict}`);
    return failed.length === 0 ? 0 : 1;
  }
  const results: Results = {
    machine: here,
    parts: { ...previous.parts, ...Object.fromEntries(fresh.map((result) => [result.part, { ...result, machine: here }])) },
  };
  mkdirSync(dirname(resultsPath), { recursive: true });
  writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(projectRoot, CHART_PATH), svgChart(results));
  writeFileSync(join(projectRoot, REPORT_PATH), markdownReport(results, CHART_PATH, 'npm run bench'));

  console.log(`\nWrote ${RESULTS_PATH}, ${CHART_PATH}, ${REPORT_PATH}. ${verdict}`);
  return failed.length === 0 ? 0 : 1;
};

try {
  process.exitCode = await main();
} catch (error) {
  console.error(error);
  process.exitCode = 2;
}
