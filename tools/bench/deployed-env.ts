/**
 * How a bundle runs on Lambda, read from the synthesized template: the Node.js binary of the
 * function's runtime, and the environment the function gets (its Environment.Variables, plus
 * stand-ins for the variables the Lambda runtime sets itself). The cold-start benchmark imports
 * each bundle under exactly that, so a setting in the template (NODE_OPTIONS above all) is measured.
 */
import { execFileSync } from 'node:child_process';
import { nodeMajorOf } from '../../infra/bundling';

/** What the benchmark needs of an AWS::Lambda::Function resource. */
export interface TemplateFunction {
  readonly logicalId: string;
  readonly functionName: string;
  readonly runtime: string;
  readonly memorySize: number;
  readonly variables: Readonly<Record<string, string>>;
}

interface FunctionResource {
  readonly Type: string;
  readonly Properties?: {
    readonly FunctionName?: unknown;
    readonly Runtime?: unknown;
    readonly MemorySize?: unknown;
    readonly Environment?: { readonly Variables?: Record<string, unknown> };
  };
}

/**
 * A template value as a string. A `Ref` (a table's name) becomes the logical id it names, which
 * stands in for the name CloudFormation would give. Any other intrinsic is refused, so a new kind
 * of variable is looked at rather than guessed.
 */
const standIn = (logicalId: string, name: string, value: unknown): string => {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const intrinsic =
    value !== null && typeof value === 'object' && Object.keys(value).length === 1 ? (value as Record<string, unknown>) : {};
  const ref = intrinsic.Ref;
  if (typeof ref === 'string') return ref;
  throw new Error(`${logicalId}: environment variable ${name} is ${JSON.stringify(value)}, which the benchmark cannot stand in for`);
};

/** Every AWS::Lambda::Function of a synthesized template, by logical id. */
export const templateFunctions = (template: { Resources?: Record<string, FunctionResource> }): Map<string, TemplateFunction> => {
  const functions = new Map<string, TemplateFunction>();
  for (const [logicalId, resource] of Object.entries(template.Resources ?? {})) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const properties = resource.Properties ?? {};
    if (typeof properties.Runtime !== 'string') throw new Error(`${logicalId}: no Runtime in the template`);
    const variables = Object.fromEntries(
      Object.entries(properties.Environment?.Variables ?? {}).map(([name, value]) => [name, standIn(logicalId, name, value)]),
    );
    functions.set(logicalId, {
      logicalId,
      functionName: typeof properties.FunctionName === 'string' ? properties.FunctionName : logicalId,
      runtime: properties.Runtime,
      memorySize: typeof properties.MemorySize === 'number' ? properties.MemorySize : 128,
      variables,
    });
  }
  return functions;
};

export const BENCH_REGION = 'eu-west-1';

/**
 * What the Lambda runtime sets in every function's environment (reserved: a template cannot set
 * them), with stand-in values. The credentials are fake: an import sends nothing.
 */
const lambdaRuntimeVariables = (fn: Pick<TemplateFunction, 'functionName' | 'runtime' | 'memorySize'>): Record<string, string> => ({
  AWS_REGION: BENCH_REGION,
  AWS_DEFAULT_REGION: BENCH_REGION,
  AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
  AWS_LAMBDA_FUNCTION_NAME: fn.functionName,
  AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
  AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySize),
  AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
  AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.functionName}`,
  AWS_LAMBDA_LOG_STREAM_NAME: '2026/01/01/[$LATEST]bench',
  AWS_LAMBDA_LOG_FORMAT: 'JSON',
  AWS_ACCESS_KEY_ID: 'ASIABENCHBENCHBENCH0',
  AWS_SECRET_ACCESS_KEY: 'bench-secret-access-key',
  AWS_SESSION_TOKEN: 'bench-session-token',
  AWS_XRAY_DAEMON_ADDRESS: '169.254.79.129:2000',
  AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
  _HANDLER: 'index.handler',
  TZ: ':UTC',
  LANG: 'en_US.UTF-8',
});

/**
 * The environment a bundle's process gets: the function's own variables from the template, then
 * the runtime's (which win, as on Lambda, where they are reserved), and PATH to find nothing else.
 */
export const coldStartEnvironment = (fn: TemplateFunction): Record<string, string> => ({
  ...fn.variables,
  ...lambdaRuntimeVariables(fn),
  PATH: process.env.PATH ?? '/usr/bin:/bin',
});

const majorOfBinary = (binary: string): number | undefined => {
  try {
    const version = execFileSync(binary, ['--version'], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    return Number(/^v(\d+)\./.exec(version.trim())?.[1]);
  } catch {
    return undefined;
  }
};

/**
 * A node binary of the runtime's major version, among the candidates (by default this process's
 * own: `npm run bench` runs on the Node.js that `npm ci` installs (node-<platform>-<arch>), of
 * the runtime's major). Fails with one line when none is, rather than measure another Node.
 */
export const nodeForRuntime = (runtime: string, candidates: readonly string[] = [process.execPath]): string => {
  const major = nodeMajorOf(runtime);
  const binary = candidates.find((candidate) => majorOfBinary(candidate) === major);
  if (!binary) {
    throw new Error(
      `no Node.js ${major} for runtime ${runtime} (tried ${candidates.join(', ')}): run the benchmark with npm run bench, after npm ci`,
    );
  }
  return binary;
};

/** How a bundle is run to measure its cold start: which node binary, with which environment. */
export interface ImportRun {
  readonly node: string;
  readonly env: Readonly<Record<string, string>>;
}

/** A function as deployed: its runtime's Node.js major, and its environment from the template. */
export const coldStartRun = (fn: TemplateFunction, candidates?: readonly string[]): ImportRun => ({
  node: nodeForRuntime(fn.runtime, candidates),
  env: coldStartEnvironment(fn),
});
