/**
 * One Node: the tests, the local server and every tool run on the Node.js major that Lambda runs
 * the functions on, whatever Node the machine has. `npm ci` installs it (the optional dependency
 * `node-<platform>-<arch>` for this machine, from the npm registry, locked by integrity and run by
 * no install script), and npm scripts find it first on PATH (node_modules/.bin).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUNCTION_NODE_MAJOR } from '../../infra/bundling';
import { projectRoot } from '../../shared/project-root';

const majorOf = (version: string): number => Number(/^v?(\d+)\./.exec(version.trim())?.[1]);

describe("the project's Node.js", () => {
  it("is the functions' runtime's major in the test workers", () => {
    expect(majorOf(process.version)).toBe(FUNCTION_NODE_MAJOR);
  });

  it('is the `node` on PATH, which npm scripts, the cdk app command and child processes run', () => {
    expect(majorOf(execFileSync('node', ['--version'], { encoding: 'utf8' }))).toBe(FUNCTION_NODE_MAJOR);
  });

  it("is what `npm ci` installs: the lockfile's Node for this machine, and every other platform's, is of the runtime's major", () => {
    const lockfile = JSON.parse(readFileSync(join(projectRoot, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string }>;
    };
    const nodes = Object.entries(lockfile.packages).filter(([path]) => /^node_modules\/node-(linux|win|darwin)-[a-z0-9]+$/.test(path));
    expect(nodes.map(([path]) => path)).toContain(`node_modules/node-${process.platform}-${process.arch}`);
    for (const [path, { version }] of nodes) expect(majorOf(version ?? ''), path).toBe(FUNCTION_NODE_MAJOR);
  });
});
