/**
 * How every function is built and run, defined once: the stack uses it, and so do the tests
 * (and the benchmarks) that build the same bundles.
 */
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { DYNAMODB_CLIENT_VERSION_VARIABLE } from '../shared/dynamodb';
import { CORS_ORIGINS_VARIABLE } from '../shared/http/cors';
import { projectRoot } from '../shared/project-root';

/** The newest Node.js LTS runtime aws-cdk-lib offers. */
export const FUNCTION_RUNTIME = Runtime.NODEJS_24_X;

/** The Node.js major version a Lambda runtime identifier names (`nodejs24.x` is 24). */
export const nodeMajorOf = (runtime: string): number => {
  const match = /^nodejs(\d+)\.x$/.exec(runtime);
  if (!match) throw new Error(`runtime ${runtime} is not a Node.js runtime`);
  return Number(match[1]);
};

/**
 * The Node.js major the functions run on, and so the one everything else runs on: `npm ci`
 * installs it as the optional dependency node-<platform>-<arch>, which npm scripts find first on PATH.
 */
export const FUNCTION_NODE_MAJOR = nodeMajorOf(FUNCTION_RUNTIME.name);

/** Graviton: cheaper per millisecond than x86, and the code has no native parts. */
export const FUNCTION_ARCHITECTURE = Architecture.ARM_64;

/**
 * SDK modules the deployed bundles replace with smaller ones that do what Lambda needs (each
 * file's header says why): a cold start parses every byte of a bundle. Only the bundles: the local
 * server and the tests run on the SDK as published. Absolute paths, because esbuild resolves an
 * alias from its working directory.
 */
export const LAMBDA_ALIASES = {
  // The default credential chain: Lambda's credentials are always in the environment.
  '@aws-sdk/credential-provider-node': resolve(projectRoot, 'shared/lambda-aliases/credential-provider.ts'),
  // Event-stream codecs: DynamoDB has no event-stream operation.
  '@smithy/core/event-streams': resolve(projectRoot, 'shared/lambda-aliases/event-streams.ts'),
  // Endpoint discovery: no DynamoDB command this project sends uses it, yet the client builds its cache.
  '@aws-sdk/middleware-endpoint-discovery': resolve(projectRoot, 'shared/lambda-aliases/endpoint-discovery.ts'),
  // Checksums: the client signs with SHA-256 from node:crypto, never with the JavaScript fallback.
  '@smithy/core/checksum': resolve(projectRoot, 'shared/lambda-aliases/checksum.ts'),
  // The document client's entry, which builds both paginators at import: each bundle takes the commands it sends.
  '@aws-sdk/lib-dynamodb': resolve(projectRoot, 'shared/lambda-aliases/lib-dynamodb.mjs'),
} as const;

export const FUNCTION_BUNDLING = {
  format: OutputFormat.ESM,
  minify: true,
  // No source maps: no handler logs a stack trace (shared/logger.ts), and Node reading a map at
  // start-up (--enable-source-maps) adds to a bundle's import time on
  // Node 24 (BENCHMARKS.md's source-map columns). So none is emitted: nothing would read it.
  sourceMap: false,
  // The deployed runtime's Node: the tests, the local server and the tools run on the same one.
  target: `node${FUNCTION_NODE_MAJOR}`,
  // middy and the AWS SDK ship ES modules: prefer them, so esbuild can drop what is unused.
  mainFields: ['module', 'main'],
  // Ship the SDK version the tests ran with, instead of whatever the runtime provides.
  bundleAwsSDK: true,
  esbuildArgs: { '--alias': Object.entries(LAMBDA_ALIASES).map(([module, path]) => `${module}=${path}`) },
} as const satisfies BundlingOptions;

/** The version of the DynamoDB client the bundles ship, from its package.json, read at build. */
const dynamoDBClientVersion = (): string => {
  const file = createRequire(import.meta.url).resolve('@aws-sdk/client-dynamodb/package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
};

/**
 * The bundles on a request's path (the API's handlers and the authorizer) of a stage: as every
 * function's, with two things decided at build that a request never needs at run time.
 * - The DynamoDB client's package.json, the one JSON file they import, which the client keeps
 *   whole (2.4 KB, parsed on every cold start) for its version, a part of its user agent: it is
 *   left out, its version defined instead and the client told it (shared/dynamodb.ts). Only these
 *   bundles: another SDK client (the key sweep's API Gateway one) would lose its version.
 * - The stage's CORS origins (CORS_ALLOWED_ORIGINS): a stage that allows none, as every stage does
 *   by default, has no CORS code in its bundles (shared/http/http-api.ts).
 * The bundle budgets' test checks that no other JSON file comes into them, and that the client
 * sends its version.
 */
export const requestPathBundling = (corsAllowedOrigins: readonly string[]) =>
  ({
    ...FUNCTION_BUNDLING,
    loader: { '.json': 'empty' },
    define: {
      [`process.env.${DYNAMODB_CLIENT_VERSION_VARIABLE}`]: JSON.stringify(dynamoDBClientVersion()),
      [`process.env.${CORS_ORIGINS_VARIABLE}`]: JSON.stringify(corsAllowedOrigins.join(',')),
    },
  }) as const satisfies BundlingOptions;

/**
 * The pre-traffic hook's bundle: as every function's, but with the SDK's event-stream codecs. The
 * Lambda client it invokes versions with imports them (for InvokeWithResponseStream), so the
 * event-streams stand-in, which has only what the DynamoDB client loads, cannot replace them.
 * And `yaml` (which reads a deployment's AppSpec) as its ES module build: its Node build is
 * CommonJS that requires `process`, which an ES module bundle cannot do at import.
 */
export const HOOK_BUNDLING = {
  ...FUNCTION_BUNDLING,
  esbuildArgs: {
    '--alias': [
      `@aws-sdk/credential-provider-node=${LAMBDA_ALIASES['@aws-sdk/credential-provider-node']}`,
      `yaml=${resolve(projectRoot, 'node_modules/yaml/browser/index.js')}`,
    ],
  },
} as const satisfies BundlingOptions;
