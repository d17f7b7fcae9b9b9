/**
 * How every function is built and run, defined once: the stack uses it, and so do the tests
 * (and the benchmarks) that build the same bundles.
 */
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { resolve } from 'node:path';
import { projectRoot } from './project';

/** The newest Node.js LTS runtime aws-cdk-lib offers. */
export const FUNCTION_RUNTIME = Runtime.NODEJS_24_X;
/** Graviton: cheaper per millisecond than x86, and the code has no native parts. */
export const FUNCTION_ARCHITECTURE = Architecture.ARM_64;

/** Where the deployed bundles get their AWS credentials (see its header). */
export const LAMBDA_CREDENTIALS_MODULE = resolve(projectRoot, 'shared/lambda-credentials.ts');

export const FUNCTION_BUNDLING = {
  format: OutputFormat.ESM,
  minify: true,
  sourceMap: true,
  // Maps name the files and lines; the sources themselves stay out of the asset.
  sourcesContent: false,
  // The deployed runtime is Node 24; the syntax stays loadable by Node 20, where the tests run.
  target: 'node20',
  // middy and the AWS SDK ship ES modules: prefer them, so esbuild can drop what is unused.
  mainFields: ['module', 'main'],
  // Ship the SDK version the tests ran with, instead of whatever the runtime provides.
  bundleAwsSDK: true,
  // The SDK's default credential chain, replaced by the one link Lambda uses (shared/lambda-credentials.ts):
  // a third of the bytes of every bundle. Absolute, because esbuild resolves an alias from its working directory.
  esbuildArgs: { '--alias': [`@aws-sdk/credential-provider-node=${LAMBDA_CREDENTIALS_MODULE}`] },
} as const satisfies BundlingOptions;
