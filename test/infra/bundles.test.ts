/**
 * The request path's bundles, built as the stack builds them (the esbuild command CDK's own
 * Bundling class derives from infra/bundling.ts): each within its byte budget, and without what its
 * route, or the design, says it must not take in (infra/bundle-budgets.ts). Bytes are deterministic,
 * so they are held here; import times vary with the machine, and `npm run bench` holds them.
 */
import { execFile } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestPathBudgets, type BundleBudget } from '../../infra/bundle-budgets';
import { cdkEsbuildCommand, runEsbuild } from '../../infra/esbuild-command';
import { generateApiKey } from '../../shared/api-keys';
import { tokenEvent } from '../../shared/gateway-events';

const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'pet-store-bundles-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Built {
  readonly file: string;
  readonly bytes: number;
  /** Each input of the bundle (a path relative to the project root), and its bytes in the output. */
  readonly inputs: ReadonlyMap<string, number>;
}

/** The bundle of a budget's function, with esbuild's account of what went into it. */
const build = (budget: BundleBudget): Built => {
  const outputDir = join(work, budget.name);
  const metafile = join(outputDir, 'meta.json');
  runEsbuild([...cdkEsbuildCommand(budget.entry, outputDir), `--metafile=${metafile}`]);
  const file = join(outputDir, 'index.mjs');
  const { outputs } = JSON.parse(readFileSync(metafile, 'utf8')) as {
    outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
  };
  const inputs = new Map(
    Object.values(outputs).flatMap((output) =>
      Object.entries(output.inputs).map(([input, { bytesInOutput }]) => [input, bytesInOutput] as const),
    ),
  );
  return { file, bytes: statSync(file).size, inputs };
};

/** Whether an input is the module: a package's file (`node_modules/<module>/…`), or the project's module itself. */
const isOf = (input: string, module: string) => input.includes(`node_modules/${module}/`) || input === module;

const require = createRequire(import.meta.url);
const DYNAMODB_CLIENT_VERSION = (require('@aws-sdk/client-dynamodb/package.json') as { version: string }).version;

describe.each(requestPathBudgets())('the $name bundle', (budget) => {
  let built: Built;
  beforeAll(() => {
    built = build(budget);
  });

  it(`is at most ${budget.maxBytes / 1000} KB`, () => {
    expect(built.bytes).toBeLessThanOrEqual(budget.maxBytes);
  });

  it.each(budget.excludes)('takes in no $module: $why', ({ module }) => {
    expect([...built.inputs.keys()].filter((input) => isOf(input, module))).toEqual([]);
  });

  it("keeps none of the DynamoDB client's package.json, the one JSON file it imports (its version is defined at build)", () => {
    const json = [...built.inputs].filter(([input]) => input.endsWith('.json'));
    expect(json.map(([input]) => input)).toEqual(['node_modules/@aws-sdk/client-dynamodb/package.json']);
    // Its stand-in: an empty module (esbuild's `empty` loader), a few bytes of wrapper.
    for (const [, bytes] of json) expect(bytes).toBeLessThan(64);
  });
});

describe('the authorizer bundle, run', () => {
  let seen: IncomingHttpHeaders[];
  let server: ReturnType<typeof createServer>;
  let endpoint: string;
  beforeAll(async () => {
    seen = [];
    // A stand-in DynamoDB that finds no item: the key is unknown, and refused.
    server = createServer((request, response) => {
      seen.push(request.headers);
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' });
        response.end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('signs its reads, and names the DynamoDB client it ships in its user agent', async () => {
    const authorizer = requestPathBudgets().find(({ name }) => name === 'authorizer');
    if (!authorizer) throw new Error('no authorizer budget');
    const { file } = build(authorizer);
    const script =
      'const { handler } = await import(process.argv[1]);' +
      'await handler(JSON.parse(process.argv[2]), {}).then(() => console.log("allowed"), (error) => console.log(error.message));';
    const { stdout } = await run(
      process.execPath,
      ['--input-type=module', '-e', script, file, JSON.stringify(tokenEvent(`Bearer ${generateApiKey()}`))],
      {
        env: {
          PATH: process.env.PATH ?? '',
          AWS_REGION: 'eu-west-1',
          AWS_ACCESS_KEY_ID: 'ASIABUNDLETESTKEY000',
          AWS_SECRET_ACCESS_KEY: 'bundle-test-secret',
          AWS_SESSION_TOKEN: 'bundle-test-session',
          DYNAMODB_ENDPOINT: endpoint,
          POWERTOOLS_LOG_LEVEL: 'SILENT',
        },
      },
    );
    expect(stdout.trim()).toBe('Unauthorized');
    // The key's item and its last use, each read once.
    expect(seen).toHaveLength(2);
    for (const headers of seen) {
      expect(headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=ASIABUNDLETESTKEY000\//);
      expect(headers['x-amz-user-agent']).toBe(`aws-sdk-js/${DYNAMODB_CLIENT_VERSION}`);
      expect(headers['user-agent']).toContain(`api/dynamodb#${DYNAMODB_CLIENT_VERSION}`);
    }
  });
});
