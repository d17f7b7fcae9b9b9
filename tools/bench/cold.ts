/**
 * Cold start proxy. The bundles come out of a real synth of the stack (NodejsFunction bundles
 * locally with esbuild, as `cdk synth` does). The references are built in the same run by the
 * same esbuild command CDK runs (asked of CDK's own Bundling class, so whatever FUNCTION_BUNDLING
 * says now is what is measured), with one change each: the floor swaps the entry and drops our
 * Lambda-only SDK aliases (it is the SDK as published), the runtime-SDK variant adds `--external:@aws-sdk/*`. The harness first rebuilds each handler
 * with that command and checks the output is byte for byte the asset CDK made.
 */
import { App } from 'aws-cdk-lib';
import type { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { execFile, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { FUNCTION_ARCHITECTURE, FUNCTION_BUNDLING, FUNCTION_RUNTIME } from '../../infra/bundling';
import { AUTHORIZER_ENTRY } from '../../infra/constructs/pet-store-functions';
import { PetStoreStack } from '../../infra/pet-store-stack';
import { projectRoot } from '../../infra/project';
import { stageSettings } from '../../infra/stages';
import { routes } from '../../shared/routes';
import { stackName } from '../../shared/stack';
import { atMost, type Check, type PartResult } from './results';
import { median, round, shuffled } from '../stats';

const run = promisify(execFile);
const require = createRequire(import.meta.url);

export const SIZE_BUDGET_BYTES = 350 * 1000;
export const IMPORT_BUDGET_RATIO = 1.1;
const STAGE = 'bench';

export interface ColdOptions {
  readonly runs: number;
}

/** The deployed bundles: function name, handler entry, and the folder CDK bundled it into. */
const synthesizeBundles = () => {
  const outdir = mkdtempSync(join(tmpdir(), 'pet-store-bench-synth-'));
  const app = new App({ outdir }); // bundling runs for every stack, as under `cdk synth`
  const stack = new PetStoreStack(app, stackName(STAGE), {
    stage: STAGE,
    settings: stageSettings(STAGE),
    env: { account: '123456789012', region: 'eu-west-1' },
  });
  app.synth();
  const entries = new Map<string, string>(routes.flatMap((route) => ('handler' in route ? [[route.operationId, route.handler]] : [])));
  entries.set('authorizer', AUTHORIZER_ENTRY);
  const functions = new Map([...stack.functions.operations, ['authorizer', stack.functions.authorizer] as const]);
  const bundles = [...functions].map(([name, apiFunction]) => {
    const asset = apiFunction.function.node.findChild('Code') as Asset;
    const entry = entries.get(name);
    if (!entry) throw new Error(`no entry for ${name}`);
    return { name, entry, folder: resolve(outdir, asset.assetPath) };
  });
  return { outdir, bundles };
};

/** The esbuild command line CDK runs for an entry, from CDK's own Bundling class and FUNCTION_BUNDLING. */
export const cdkEsbuildCommand = (entry: string, outputDir: string): string[] => {
  const cdkRoot = dirname(require.resolve('aws-cdk-lib/package.json'));
  // Not a public API: the alternative, copying its option mapping, would drift from what CDK runs.
  const { Bundling } = require(join(cdkRoot, 'aws-lambda-nodejs/lib/bundling.js')) as {
    Bundling: new (scope: unknown, props: object) => {
      createBundlingSteps(scope: unknown, options: object): Array<{ type: string; command?: string[] }>;
    };
  };
  const app = new App();
  const bundling = new Bundling(app, {
    ...FUNCTION_BUNDLING,
    entry: resolve(projectRoot, entry),
    runtime: FUNCTION_RUNTIME,
    architecture: FUNCTION_ARCHITECTURE,
    projectRoot,
    depsLockFilePath: resolve(projectRoot, 'package-lock.json'),
  });
  const steps = bundling.createBundlingSteps(app, {
    inputDir: projectRoot,
    outputDir,
    pathJoin: join,
    esbuildRunner: ['esbuild'],
    createFileOps: () => [],
  });
  const spawn = steps.filter((step) => step.type === 'spawn');
  if (spawn.length !== 1 || !spawn[0]?.command) throw new Error(`expected one esbuild step, CDK planned ${JSON.stringify(steps)}`);
  return spawn[0].command.slice(1); // without the runner
};

const esbuild = (args: string[]) => {
  const bin = join(projectRoot, 'node_modules/.bin/esbuild');
  try {
    execFileSync(bin, args, { cwd: projectRoot, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    throw new Error(`esbuild ${args.join(' ')} failed:\n${String((error as { stderr?: Buffer }).stderr ?? error)}`);
  }
};

/** Builds a variant: CDK's command for `entry`, with the entry swapped and extra arguments. */
const build = (entry: string, outputDir: string, extra: string[] = [], entryFile?: string) => {
  mkdirSync(outputDir, { recursive: true });
  let args = cdkEsbuildCommand(entry, outputDir);
  if (entryFile) {
    args[args.indexOf('--bundle') + 1] = entryFile;
    // The floor is the SDK as published: our Lambda-only aliases (LAMBDA_ALIASES) are what the
    // handlers do to beat it, so they stay out of the reference.
    args = args.filter((arg) => !arg.startsWith('--alias:'));
  }
  esbuild([...args, ...extra]);
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

const IMPORT_SCRIPT = `const start = performance.now(); const module = await import(process.argv[1]);
if (typeof module.handler !== 'function' && !module.loaded) throw new Error('no handler');
process.stdout.write(String(performance.now() - start));`;

/** Milliseconds to import a module in a fresh Node process (process start-up excluded). */
const importTime = async (file: string): Promise<number> => {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', IMPORT_SCRIPT, file], {
    env: {
      PATH: process.env.PATH,
      AWS_REGION: 'eu-west-1',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      POWERTOOLS_SERVICE_NAME: 'pet-store',
      POWERTOOLS_LOG_LEVEL: 'INFO',
    },
  });
  return Number(stdout);
};

const FLOOR_SOURCE = `import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
// The floor: the SDK's default setup and nothing else.
export const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const loaded = true;
`;

export const runCold = async ({ runs }: ColdOptions): Promise<PartResult> => {
  const started = Date.now();
  const notes: string[] = [];
  const { outdir, bundles } = synthesizeBundles();
  // Inside the project, so the runtime-SDK variants find @aws-sdk/* in node_modules, unbundled.
  const work = join(projectRoot, '.scratch/bench-cold');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  try {
    const floorEntry = join(work, 'floor-entry.mjs');
    writeFileSync(floorEntry, FLOOR_SOURCE);
    const floor = build(AUTHORIZER_ENTRY, join(work, 'floor'), [], floorEntry);

    const candidates = bundles.map((bundle) => {
      const deployed = join(bundle.folder, 'index.mjs');
      const rebuilt = build(bundle.entry, join(work, bundle.name, 'same'), [`--metafile=${join(work, bundle.name, 'meta.json')}`]);
      const identical = readFileSync(rebuilt).equals(readFileSync(deployed));
      if (!identical) notes.push(`${bundle.name}: the rebuilt bundle differs from CDK's asset; the metafile breakdown may be off.`);
      const metafile = JSON.parse(readFileSync(join(work, bundle.name, 'meta.json'), 'utf8')) as Metafile;
      const runtimeSdk = build(bundle.entry, join(work, bundle.name, 'runtime-sdk'), ['--external:@aws-sdk/*']);
      return { ...bundle, deployed, identical, packages: bytesByPackage(metafile), runtimeSdk };
    });

    const files = [
      { id: 'floor', file: floor },
      ...candidates.flatMap((c) => [
        { id: c.name, file: c.deployed },
        { id: `${c.name}:runtime-sdk`, file: c.runtimeSdk },
      ]),
    ];
    const times = new Map<string, number[]>(files.map(({ id }) => [id, []]));
    // One warm-up import each (file cache), then rounds in a new random order each time.
    for (const { file } of files) await importTime(file);
    for (let round = 0; round < runs; round += 1) {
      for (const { id, file } of shuffled(files)) times.get(id)?.push(await importTime(file));
    }
    const medianOf = (id: string) => median(times.get(id) ?? []);
    const floorMs = medianOf('floor');
    const floorBytes = statSync(floor).size;

    const checks: Check[] = [];
    const rows: Array<Array<string | number>> = [['floor (DocumentClient only)', round(floorBytes / 1000, 1), '-', round(floorMs, 1), '1.00', '-', '-', '-']];
    for (const c of candidates) {
      const bytes = statSync(c.deployed).size;
      const ms = medianOf(c.name);
      const runtimeMs = medianOf(`${c.name}:runtime-sdk`);
      const runtimeBytes = statSync(c.runtimeSdk).size;
      checks.push(
        atMost(
          { id: `cold.${c.name}.size`, label: `${c.name} bundle size`, value: round(bytes / 1000, 1), unit: 'KB', reference: { label: 'floor bundle', value: round(floorBytes / 1000, 1) }, ratio: round(bytes / floorBytes) },
          '<= 350 KB',
          SIZE_BUDGET_BYTES / floorBytes,
        ),
        atMost(
          { id: `cold.${c.name}.import`, label: `${c.name} import time`, value: round(ms, 1), unit: 'ms', reference: { label: 'floor import', value: round(floorMs, 1) }, ratio: round(ms / floorMs) },
          '<= 1.10x floor',
          IMPORT_BUDGET_RATIO,
        ),
      );
      rows.push([c.name, round(bytes / 1000, 1), round(runtimeBytes / 1000, 1), round(ms, 1), round(ms / floorMs), round(runtimeMs, 1), round(runtimeMs / floorMs), c.identical ? 'yes' : 'NO']);
    }
    const top = 8;
    const breakdown = candidates.map((c) => [
      c.name,
      ...c.packages.slice(0, top).map(([name, bytes]) => `${name} ${round(bytes / 1000, 1)}`),
    ]);
    notes.push(
      `Import time: median of ${runs} fresh \`node\` processes per bundle, measured inside the process around \`await import()\` (Node start-up excluded), bundles interleaved in a new random order each round after one warm-up import each.`,
      `Bundles: a real in-process synth of stack ${stackName(STAGE)} (NodejsFunction, local esbuild); references built with the esbuild command CDK's Bundling class derives from FUNCTION_BUNDLING at run time. KB = 1,000 bytes.`,
      `CDK's esbuild command, e.g. for listPets: \`esbuild ${cdkEsbuildCommand(candidates[0]?.entry ?? '', '<out>').join(' ').replaceAll(`${projectRoot}/`, '')}\` (the floor swaps the entry and drops the \`--alias\` arguments, the SDK-external variant adds \`--external:@aws-sdk/*\`, the metafile rebuild adds \`--metafile\`).`,
    );
    return {
      part: 'cold',
      measuredAt: new Date().toISOString(),
      seconds: round((Date.now() - started) / 1000, 0),
      checks,
      tables: [
        {
          title: 'Cold start proxy: bundle size and import time in a fresh Node process',
          columns: ['bundle', 'size KB', 'size KB, SDK external', 'import ms', 'x floor', 'import ms, SDK external (from node_modules)', 'x floor', 'rebuild identical to CDK asset'],
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
