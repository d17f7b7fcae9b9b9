/**
 * Cold start proxy. The bundles come out of a real synth of the stack (NodejsFunction bundles
 * locally with esbuild, as `cdk synth` does), and each is imported as Lambda would run it: under
 * the Node.js major of its runtime, with the environment its function has in the synthesized
 * template (see deployed-env.ts). The references are built in the same run by the same esbuild
 * command CDK runs (asked of CDK's own Bundling class, so whatever FUNCTION_BUNDLING says now is
 * what is measured), with one change each: the floor swaps the entry and drops our Lambda-only
 * SDK aliases (it is the SDK as published), the runtime-SDK variant adds `--external:@aws-sdk/*`,
 * the source-map variant makes the other choice about source maps. The harness first rebuilds
 * each handler with that command and checks the output is byte for byte the asset CDK made.
 */
import { App, type CfnElement } from 'aws-cdk-lib';
import type { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { nodeMajorOf } from '../../infra/bundling';
import { cdkEsbuildCommand, runEsbuild } from '../../infra/esbuild-command';
import { requestPathBudgets } from '../../infra/bundle-budgets';
import { AUTHORIZER_ENTRY } from '../../infra/constructs/pet-store-functions';
import { PetStoreStack } from '../../infra/pet-store-stack';
import { projectRoot } from '../../shared/project-root';
import { stageSettings } from '../../infra/stages';
import { routes } from '../../shared/routes';
import { stackName } from '../../shared/stack';
import { BENCH_REGION, coldStartRun, templateFunctions, type ImportRun } from './deployed-env';
import { atMost, type Check, type PartResult } from './results';
import { median, round, shuffled } from '../stats';

const run = promisify(execFile);

/** Each bundle's budget (infra/bundle-budgets.ts): its bytes (which `npm test` holds too), and its import's CPU time against the floor's. */
const budgetOf = (name: string) => {
  const budget = requestPathBudgets().find((candidate) => candidate.name === name);
  if (!budget) throw new Error(`${name}: no budget in infra/bundle-budgets.ts`);
  return budget;
};
const STAGE = 'bench';

export interface ColdOptions {
  readonly runs: number;
}

/**
 * The deployed bundles: function name, handler entry, the folder CDK bundled it into, and the
 * function as the synthesized template describes it (runtime, environment).
 */
const synthesizeBundles = () => {
  const outdir = mkdtempSync(join(tmpdir(), 'pet-store-bench-synth-'));
  const app = new App({ outdir }); // bundling runs for every stack, as under `cdk synth`
  const stack = new PetStoreStack(app, stackName(STAGE), {
    stage: STAGE,
    settings: stageSettings(STAGE),
    env: { account: '123456789012', region: BENCH_REGION },
  });
  const template = app.synth().getStackByName(stack.stackName).template as Parameters<typeof templateFunctions>[0];
  const inTemplate = templateFunctions(template);
  const entries = new Map<string, string>(routes.flatMap((route) => ('handler' in route ? [[route.operationId, route.handler]] : [])));
  entries.set('authorizer', AUTHORIZER_ENTRY);
  const functions = new Map([...stack.functions.operations, ['authorizer', stack.functions.authorizer] as const]);
  const bundles = [...functions].map(([name, apiFunction]) => {
    const asset = apiFunction.function.node.findChild('Code') as Asset;
    const entry = entries.get(name);
    if (!entry) throw new Error(`no entry for ${name}`);
    const fn = inTemplate.get(stack.getLogicalId(apiFunction.function.node.defaultChild as CfnElement));
    if (!fn) throw new Error(`${name}: no AWS::Lambda::Function in the template`);
    return { name, entry, folder: resolve(outdir, asset.assetPath), fn };
  });
  return { outdir, bundles };
};

export { cdkEsbuildCommand };

/** Builds a variant: CDK's command for `entry`, changed by `adjust`, or with the entry swapped. */
const build = (entry: string, outputDir: string, adjust: (args: string[]) => string[] = (args) => args, entryFile?: string) => {
  mkdirSync(outputDir, { recursive: true });
  let args = cdkEsbuildCommand(entry, outputDir);
  if (entryFile) {
    args[args.indexOf('--bundle') + 1] = entryFile;
    // The floor is the SDK as published: our Lambda-only aliases (LAMBDA_ALIASES), and the request
    // path's JSON loader and defined client version (REQUEST_PATH_BUNDLING), are what the handlers
    // do to beat it, so they stay out of the reference.
    args = args.filter((arg) => !['--alias:', '--loader:', '--define:'].some((option) => arg.startsWith(option)));
  }
  runEsbuild(adjust(args));
  return join(outputDir, 'index.mjs');
};

interface Metafile {
  readonly outputs: Record<string, { bytes: number; inputs: Record<string, { bytesInOutput: number }> }>;
}

/** Bytes in the output per npm package (or `(project)` for our own code), largest first. */
const bytesByPackage = (metafile: Metafile): Array<[string, number]> => {
  const totals = new Map<string, number>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
      const name = match?.[1] ?? '(project)';
      totals.set(name, (totals.get(name) ?? 0) + bytesInOutput);
    }
  }
  return [...totals].sort((a, b) => b[1] - a[1]);
};

const IMPORT_SCRIPT = `const cpu = process.cpuUsage(); const start = performance.now(); const module = await import(process.argv[1]);
const wall = performance.now() - start; const { user, system } = process.cpuUsage(cpu);
if (typeof module.handler !== 'function' && !module.loaded) throw new Error('no handler');
process.stdout.write(JSON.stringify({ wall, cpu: (user + system) / 1000 }));`;

/**
 * Milliseconds to import a module in a fresh Node process (process start-up excluded): wall
 * time, which a cold start waits for, and the process's CPU time, which other work on a shared
 * machine disturbs less.
 */
const importTime = async (file: string, { node, env }: ImportRun): Promise<{ wall: number; cpu: number }> => {
  const { stdout } = await run(node, ['--input-type=module', '-e', IMPORT_SCRIPT, file], { env });
  return JSON.parse(stdout) as { wall: number; cpu: number };
};

/** The Node.js option that makes Node read source maps, and the esbuild arguments that emit them. */
const ENABLE_SOURCE_MAPS = '--enable-source-maps';
const isSourceMapArg = (arg: string) => arg.startsWith('--sourcemap') || arg.startsWith('--sources-content');

/**
 * The other choice about source maps than the deployed one, for a bundle and its environment:
 * without them (no map emitted, Node not told to read one), or with them (a map without the
 * sources, and NODE_OPTIONS=--enable-source-maps), as the functions had them before.
 */
export const otherSourceMapChoice = (args: readonly string[], run: ImportRun): { args: string[]; run: ImportRun; label: string } => {
  const options = (run.env.NODE_OPTIONS ?? '').split(/\s+/).filter((option) => option !== '');
  const deployedWithMaps = args.some(isSourceMapArg) || options.includes(ENABLE_SOURCE_MAPS);
  if (deployedWithMaps) {
    const { NODE_OPTIONS: _dropped, ...env } = run.env;
    const others = options.filter((option) => option !== ENABLE_SOURCE_MAPS);
    return {
      args: args.filter((arg) => !isSourceMapArg(arg)),
      run: { ...run, env: others.length > 0 ? { ...env, NODE_OPTIONS: others.join(' ') } : env },
      label: 'without source maps',
    };
  }
  return {
    args: [...args, '--sourcemap', '--sources-content=false'],
    run: { ...run, env: { ...run.env, NODE_OPTIONS: [...options, ENABLE_SOURCE_MAPS].join(' ') } },
    label: `with source maps (${ENABLE_SOURCE_MAPS})`,
  };
};

const FLOOR_SOURCE = `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
// The floor: the SDK's default setup and nothing else.
export const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const loaded = true;
`;

/** Bytes the function ships: the bundle and whatever esbuild wrote beside it (a source map). */
const assetBytes = (file: string) =>
  readdirSync(dirname(file)).reduce((total, name) => total + statSync(join(dirname(file), name)).size, 0);

/** The one runtime of the functions, which the floor runs on too. */
const runtimeOf = (runtimes: readonly string[]) => {
  const distinct = [...new Set(runtimes)];
  if (distinct.length !== 1 || distinct[0] === undefined)
    throw new Error(`the functions run on ${distinct.join(', ')}; the floor needs one runtime`);
  return distinct[0];
};

const spread = (values: readonly number[]) => `${round(Math.min(...values), 1)}–${round(Math.max(...values), 1)}`;

export const runCold = async ({ runs }: ColdOptions): Promise<PartResult> => {
  const started = Date.now();
  const notes: string[] = [];
  const { outdir, bundles } = synthesizeBundles();
  const runtime = runtimeOf(bundles.map((bundle) => bundle.fn.runtime));
  // The floor is a function with no settings of its own: only what the Lambda runtime sets.
  const floorRun = coldStartRun({ logicalId: 'floor', functionName: 'floor', runtime, memorySize: 512, variables: {} });
  const nodeVersion = execFileSync(floorRun.node, ['--version'], { encoding: 'utf8' }).trim();
  // Inside the project, so the runtime-SDK variants find @aws-sdk/* in node_modules, unbundled.
  const work = join(projectRoot, '.scratch/bench-cold');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const floorEntry = join(work, 'floor-entry.mjs');
    writeFileSync(floorEntry, FLOOR_SOURCE);
    const floor = build(AUTHORIZER_ENTRY, join(work, 'floor'), undefined, floorEntry);

    const candidates = bundles.map((bundle) => {
      const deployed = join(bundle.folder, 'index.mjs');
      const asDeployed = coldStartRun(bundle.fn);
      const rebuilt = build(bundle.entry, join(work, bundle.name, 'same'), (args) => [
        ...args,
        `--metafile=${join(work, bundle.name, 'meta.json')}`,
      ]);
      const identical = readFileSync(rebuilt).equals(readFileSync(deployed));
      if (!identical) notes.push(`${bundle.name}: the rebuilt bundle differs from CDK's asset; the metafile breakdown may be off.`);
      const metafile = JSON.parse(readFileSync(join(work, bundle.name, 'meta.json'), 'utf8')) as Metafile;
      const runtimeSdk = build(bundle.entry, join(work, bundle.name, 'runtime-sdk'), (args) => [...args, '--external:@aws-sdk/*']);
      const sourceMaps = build(bundle.entry, join(work, bundle.name, 'source-maps'), (args) => otherSourceMapChoice(args, asDeployed).args);
      const sourceMapsRun = otherSourceMapChoice([], asDeployed);
      return { ...bundle, deployed, asDeployed, identical, packages: bytesByPackage(metafile), runtimeSdk, sourceMaps, sourceMapsRun };
    });
    const sourceMapLabel = candidates[0]?.sourceMapsRun.label ?? '';

    const files = [
      { id: 'floor', file: floor, run: floorRun },
      ...candidates.flatMap((c) => [
        { id: c.name, file: c.deployed, run: c.asDeployed },
        { id: `${c.name}:runtime-sdk`, file: c.runtimeSdk, run: c.asDeployed },
        { id: `${c.name}:source-maps`, file: c.sourceMaps, run: c.sourceMapsRun.run },
      ]),
    ];
    const times = new Map<string, number[]>(files.map(({ id }) => [id, []]));
    const cpuTimes = new Map<string, number[]>(files.map(({ id }) => [id, []]));
    // One warm-up import each (file cache), then rounds in a new random order each time.
    for (const { file, run: how } of files) await importTime(file, how);
    for (let round = 0; round < runs; round += 1) {
      for (const { id, file, run: how } of shuffled(files)) {
        const { wall, cpu } = await importTime(file, how);
        times.get(id)?.push(wall);
        cpuTimes.get(id)?.push(cpu);
      }
    }
    const timesOf = (id: string) => times.get(id) ?? [];
    const medianOf = (id: string) => median(timesOf(id));
    const floorMs = medianOf('floor');
    const cpuOf = (id: string) => median(cpuTimes.get(id) ?? []);
    const floorCpu = cpuOf('floor');
    const floorBytes = statSync(floor).size;

    const checks: Check[] = [];
    const rows: Array<Array<string | number>> = [
      [
        'floor (DocumentClient only)',
        round(floorBytes / 1000, 1),
        '-',
        round(floorMs, 1),
        spread(timesOf('floor')),
        '1.00',
        round(floorCpu, 1),
        '1.00',
        '-',
        '-',
        '-',
        '-',
        '-',
        '-',
        '-',
      ],
    ];
    for (const c of candidates) {
      const bytes = statSync(c.deployed).size;
      const ms = medianOf(c.name);
      const runtimeMs = medianOf(`${c.name}:runtime-sdk`);
      const runtimeBytes = statSync(c.runtimeSdk).size;
      const mapsMs = medianOf(`${c.name}:source-maps`);
      const { maxBytes, importRatio: importBudget } = budgetOf(c.name);
      const cpuRatio = cpuOf(c.name) / floorCpu;
      checks.push(
        atMost(
          {
            id: `cold.${c.name}.size`,
            label: `${c.name} bundle size`,
            value: round(bytes / 1000, 1),
            unit: 'KB',
            reference: { label: 'floor bundle', value: round(floorBytes / 1000, 1) },
            ratio: round(bytes / floorBytes),
          },
          `<= ${maxBytes / 1000} KB`,
          maxBytes / floorBytes,
        ),
        atMost(
          {
            id: `cold.${c.name}.import`,
            label: `${c.name} import CPU time (Node ${nodeMajorOf(c.fn.runtime)}, its own environment)`,
            value: round(cpuOf(c.name), 1),
            unit: 'ms',
            reference: { label: 'floor import CPU', value: round(floorCpu, 1) },
            ratio: round(cpuRatio),
          },
          `<= ${importBudget.toFixed(2)}x floor (CPU)`,
          importBudget,
        ),
      );
      rows.push([
        c.name,
        round(bytes / 1000, 1),
        round(assetBytes(c.deployed) / 1000, 1),
        round(ms, 1),
        spread(timesOf(c.name)),
        round(ms / floorMs),
        round(cpuOf(c.name), 1),
        round(cpuRatio),
        `<= ${importBudget.toFixed(2)}x ${cpuRatio <= importBudget + 1e-9 ? 'PASS' : 'FAIL'}`,
        round(assetBytes(c.sourceMaps) / 1000, 1),
        round(mapsMs, 1),
        round(mapsMs / floorMs),
        round(runtimeBytes / 1000, 1),
        round(runtimeMs / floorMs),
        c.identical ? 'yes' : 'NO',
      ]);
    }
    const top = 8;
    const breakdown = candidates.map((c) => [
      c.name,
      ...c.packages.slice(0, top).map(([name, bytes]) => `${name} ${round(bytes / 1000, 1)}`),
    ]);
    const listPets = candidates[0];
    notes.push(
      `Import time: median of ${runs} fresh \`node\` processes per bundle, measured inside the process around \`await import()\` ` +
        '(Node start-up excluded), bundles interleaved in a new random order each round after one warm-up import each; ' +
        'the spread is min–max. The budget holds the CPU time (`process.cpuUsage()`, all threads of the process), ' +
        'which other work on the shared machine disturbs less than the wall time beside it.',
      `As deployed: each bundle runs under Node ${nodeVersion} (the major of the template's ${runtime}) ` +
        "with its function's Environment.Variables from the synthesized template (table names stand in as their logical ids), " +
        'plus stand-ins for the variables the Lambda runtime sets ' +
        `(AWS_REGION, AWS_LAMBDA_FUNCTION_NAME, AWS_EXECUTION_ENV, credentials, ...). ${
          listPets
            ? `listPets, for instance: ${Object.entries(listPets.fn.variables)
                .map(([name, value]) => `${name}=${value}`)
                .join(' ')}.`
            : ''
        } The floor runs as a function with no variables of its own: only the runtime's.`,
      `The source-map variant is the deployed bundle built and run ${sourceMapLabel}; ` +
        'its size counts every file of the asset (bundle and map).',
      `Bundles: a real in-process synth of stack ${stackName(STAGE)} (NodejsFunction, local esbuild); ` +
        "references built with the esbuild command CDK's Bundling class derives from FUNCTION_BUNDLING at run time. KB = 1,000 bytes.",
      `CDK's esbuild command, e.g. for listPets: \`esbuild ${cdkEsbuildCommand(listPets?.entry ?? '', '<out>')
        .join(' ')
        .replaceAll(`${projectRoot}/`, '')}\` ` +
        '(the floor swaps the entry and drops the `--alias` arguments, the SDK-external variant adds `--external:@aws-sdk/*`, ' +
        'the metafile rebuild adds `--metafile`).',
    );
    return {
      part: 'cold',
      measuredAt: new Date().toISOString(),
      seconds: round((Date.now() - started) / 1000, 0),
      checks,
      tables: [
        {
          title:
            `Cold start proxy: bundle size and import time in a fresh Node ${nodeVersion} process, ` +
            "with the function's environment from the template",
          columns: [
            'bundle',
            'size KB',
            'asset KB',
            'import ms',
            'spread ms',
            'x floor',
            'import CPU ms',
            'x floor (CPU)',
            'import budget (CPU)',
            `asset KB, ${sourceMapLabel}`,
            `import ms, ${sourceMapLabel}`,
            'x floor',
            'size KB, SDK external',
            'x floor, SDK external (from node_modules)',
            'rebuild identical to CDK asset',
          ],
          rows,
        },
        {
          title: `Where the bytes go (esbuild metafile, KB in the minified output, top ${top} packages)`,
          columns: ['bundle', ...Array.from({ length: top }, (_, index) => `#${index + 1}`)],
          rows: breakdown,
        },
      ],
      notes,
    };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
};
