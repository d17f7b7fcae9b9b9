/**
 * The esbuild command line CDK runs to bundle a function, asked of CDK's own Bundling class, so
 * that whatever infra/bundling.ts says now is what is built: the bundle budgets' test and the
 * cold-start benchmark build the functions' bundles with it, as the stack does.
 */
import { App } from 'aws-cdk-lib';
import type { BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { projectRoot } from '../shared/project-root';
import { FUNCTION_ARCHITECTURE, FUNCTION_RUNTIME, requestPathBundling } from './bundling';

const require = createRequire(import.meta.url);

/**
 * The esbuild arguments CDK runs for an entry (without the runner); by default as a request
 * path's function is bundled for a stage that allows no CORS origin, as every stage does by default.
 */
export const cdkEsbuildCommand = (entry: string, outputDir: string, bundling: BundlingOptions = requestPathBundling([])): string[] => {
  const cdkRoot = dirname(require.resolve('aws-cdk-lib/package.json'));
  // Not a public API: the alternative, copying its option mapping, would drift from what CDK runs.
  const { Bundling } = require(join(cdkRoot, 'aws-lambda-nodejs/lib/bundling.js')) as {
    Bundling: new (
      scope: unknown,
      props: object,
    ) => {
      createBundlingSteps(scope: unknown, options: object): Array<{ type: string; command?: string[] }>;
    };
  };
  const app = new App();
  const bundler = new Bundling(app, {
    ...bundling,
    entry: resolve(projectRoot, entry),
    runtime: FUNCTION_RUNTIME,
    architecture: FUNCTION_ARCHITECTURE,
    projectRoot,
    depsLockFilePath: resolve(projectRoot, 'package-lock.json'),
  });
  const steps = bundler.createBundlingSteps(app, {
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

/** Runs the project's esbuild with these arguments; its errors in the message. */
export const runEsbuild = (args: readonly string[]): void => {
  const bin = join(projectRoot, 'node_modules/.bin/esbuild');
  try {
    execFileSync(bin, args, { cwd: projectRoot, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    throw new Error(`esbuild ${args.join(' ')} failed:\n${String((error as { stderr?: Buffer }).stderr ?? error)}`);
  }
};
