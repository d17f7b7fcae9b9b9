/**
 * The benchmark harness's own logic, without running a benchmark: the statistics, the hot
 * partition arithmetic docs/architecture.md's Scaling section quotes, the esbuild command taken from
 * CDK (a private CDK API: an upgrade that changes it must fail here, not in `npm run bench`), and
 * that the cold start is measured as deployed (the template's Node.js major and environment).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { FUNCTION_BUNDLING } from '../../infra/bundling';
import { ApiFunction } from '../../infra/constructs/api-function';
import { cdkEsbuildCommand, otherSourceMapChoice } from '../../tools/bench/cold';
import { coldStartEnvironment, coldStartRun, nodeForRuntime, templateFunctions } from '../../tools/bench/deployed-env';
import { synthStage } from '../infra/synth';
import { simulateHotStatus } from '../../tools/bench/scaling';
import { median, quantile } from '../../tools/stats';
import { handledOperationIds } from '../support/operations';

describe('statistics', () => {
  it('takes medians and interpolated percentiles, whatever the order', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(quantile([10, 0], 0.99)).toBeCloseTo(9.9);
  });
});

describe('status index hot partition', () => {
  it('caps one status at 1,000 creates/s and lifts the cap n-fold with n shards', () => {
    expect(simulateHotStatus(2_000, 1)).toEqual({ accepted: 1_000, throttled: 1_000 });
    expect(simulateHotStatus(5_000, 4).accepted).toBe(4_000);
    expect(simulateHotStatus(5_000, 10)).toEqual({ accepted: 5_000, throttled: 0 });
  });
});

describe('the esbuild command CDK runs, as the cold-start benchmark rebuilds it', () => {
  it('follows FUNCTION_BUNDLING: entry, format, minification, main fields, output file', () => {
    const args = cdkEsbuildCommand('functions/get-pet.ts', '/tmp/out');
    expect(args[0]).toBe('--bundle');
    expect(args[1]).toMatch(/functions\/get-pet\.ts$/);
    expect(args).toContain(`--format=${FUNCTION_BUNDLING.format}`);
    expect(args).toContain(`--target=${FUNCTION_BUNDLING.target}`);
    expect(args.includes('--minify')).toBe(FUNCTION_BUNDLING.minify);
    expect(args).toContain(`--main-fields=${FUNCTION_BUNDLING.mainFields.join(',')}`);
    expect(args).toContain('--outfile=/tmp/out/index.mjs');
  });
});

describe('the cold-start benchmark runs each bundle as its function is deployed', () => {
  const bench = synthStage('bench');
  const template = bench.template.toJSON() as Parameters<typeof templateFunctions>[0] & {
    Resources: Record<
      string,
      { Type: string; Properties: { Runtime: string; FunctionName: string; Environment: { Variables: Record<string, unknown> } } }
    >;
  };
  const deployed = Object.entries(template.Resources).filter(([, resource]) => resource.Type === 'AWS::Lambda::Function');
  /** Stand-ins for node binaries: scripts that print a version, as `node --version` does. */
  const fakeNodes = () => {
    const dir = mkdtempSync(join(tmpdir(), 'pet-store-node-'));
    const fake = (version: string) => {
      const path = join(dir, `node-${version}`);
      writeFileSync(path, `#!/bin/sh\necho ${version}\n`, { mode: 0o755 });
      return path;
    };
    return { node20: fake('v20.20.2'), node24: fake('v24.21.0'), remove: () => rmSync(dir, { recursive: true, force: true }) };
  };

  it('under the Node.js major of the runtime in the template', () => {
    // Every function of the stack is one of its own bundles (an ApiFunction): each operation's, the
    // authorizer, the key audit's writer and expiry sweep, the idempotency sweep; no other.
    const ownFunctions = bench.stack.node
      .findAll()
      .filter((construct): construct is ApiFunction => construct instanceof ApiFunction)
      .map((fn) => bench.stack.getLogicalId(fn.function.node.defaultChild as CfnFunction));
    expect(ownFunctions.length).toBeGreaterThanOrEqual(handledOperationIds.length + 1);
    expect(deployed.map(([logicalId]) => logicalId).sort()).toEqual(ownFunctions.sort());
    for (const [logicalId, { Properties }] of deployed) {
      const fn = templateFunctions(template).get(logicalId);
      if (!fn) throw new Error(`no ${logicalId}`);
      expect(Properties.Runtime).toBe('nodejs24.x');
      const nodes = fakeNodes();
      try {
        expect(coldStartRun(fn, [nodes.node20, nodes.node24]).node).toBe(nodes.node24);
      } finally {
        nodes.remove();
      }
    }
  });

  it("with the function's own Environment.Variables, NODE_OPTIONS included, and Lambda's runtime variables", () => {
    for (const [logicalId, { Properties }] of deployed) {
      const fn = templateFunctions(template).get(logicalId);
      if (!fn) throw new Error(`no ${logicalId}`);
      const env = coldStartEnvironment(fn);
      const variables = Properties.Environment.Variables;
      // Table names are Refs in the template; the logical id they name stands in for the name.
      const expected = Object.fromEntries(
        Object.entries(variables).map(([name, value]) => [name, typeof value === 'string' ? value : (value as { Ref: string }).Ref]),
      );
      expect(env).toMatchObject(expected);
      expect(env.NODE_OPTIONS).toBe(variables.NODE_OPTIONS);
      expect(env).toMatchObject({
        AWS_REGION: 'eu-west-1',
        AWS_LAMBDA_FUNCTION_NAME: Properties.FunctionName,
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
      });
      // Nothing of this machine's environment leaks in but PATH.
      expect(
        Object.keys(env).filter(
          (name) => !(name in expected) && !name.startsWith('AWS_') && !['_HANDLER', 'TZ', 'LANG', 'PATH'].includes(name),
        ),
      ).toEqual([]);
    }
  });

  it("picks the binary of the runtime's major, whichever Node runs the benchmark", () => {
    const nodes = fakeNodes();
    try {
      expect(nodeForRuntime('nodejs24.x', [nodes.node20, nodes.node24])).toBe(nodes.node24);
      expect(nodeForRuntime('nodejs20.x', [nodes.node24, nodes.node20])).toBe(nodes.node20);
    } finally {
      nodes.remove();
    }
  });

  it('refuses what it cannot stand in for, or a Node.js it does not have, with one line', () => {
    const withGetAtt = {
      Resources: {
        Fn: {
          Type: 'AWS::Lambda::Function',
          Properties: {
            Runtime: 'nodejs24.x',
            Environment: { Variables: { URL: { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['Api', 'Url'] }]] } } },
          },
        },
      },
    };
    expect(() => templateFunctions(withGetAtt)).toThrow(/^Fn: environment variable URL is .* cannot stand in for$/);
    expect(() => nodeForRuntime('nodejs24.x', [])).toThrow(/^no Node\.js 24 for runtime nodejs24\.x/);
    expect(() => nodeForRuntime('python3.13')).toThrow('runtime python3.13 is not a Node.js runtime');
  });

  it('measures the other choice about source maps beside the deployed one', () => {
    const env = { PATH: '/bin', NODE_OPTIONS: '--enable-source-maps' };
    const without = otherSourceMapChoice(['--bundle', 'a.ts', '--minify', '--sourcemap', '--sources-content=false'], { node: 'node', env });
    expect(without.args).toEqual(['--bundle', 'a.ts', '--minify']);
    expect(without.run.env).toEqual({ PATH: '/bin' });
    const withMaps = otherSourceMapChoice(without.args, without.run);
    expect(withMaps.args).toEqual(['--bundle', 'a.ts', '--minify', '--sourcemap', '--sources-content=false']);
    expect(withMaps.run.env).toEqual(env);
  });
});
