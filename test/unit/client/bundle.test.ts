/**
 * The package as shipped: one ES module that imports nothing (no run-time dependency but fetch,
 * no Node built-in, so browsers run it too), at most 15 KB minified; package.json points at what
 * the build writes.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { bundleClient, CLIENT_BUILD } from '../../../client/build';
import { projectRoot } from '../../../shared/project-root';

const MAX_MINIFIED_BYTES = 15 * 1024;
const client = (path: string) => resolve(projectRoot, 'client', path);

describe('the client bundle', () => {
  it(`is at most ${MAX_MINIFIED_BYTES} bytes minified`, async () => {
    const minified = Buffer.byteLength(await bundleClient({ minify: true }));
    expect(minified).toBeGreaterThan(1_000); // a bundle of the code, not of nothing
    expect(minified, `minified ${minified} B, gzip ${gzipSync(await bundleClient({ minify: true })).length} B`).toBeLessThanOrEqual(
      MAX_MINIFIED_BYTES,
    );
  });

  it('imports nothing, and builds for browsers as it is (no Node built-in)', async () => {
    const { metafile } = await build({ ...CLIENT_BUILD, platform: 'browser', write: false, outfile: 'index.js', metafile: true });
    const outputs = Object.values(metafile.outputs);
    expect(outputs.flatMap((output) => output.imports)).toEqual([]);
    const sources = Object.keys(metafile.inputs);
    expect(sources.every((path) => path.startsWith('client/src/') || path.startsWith('generated/openapi-'))).toBe(true);
    expect(await bundleClient({ minify: false })).not.toMatch(/\brequire\(|["']node:/);
  });

  it("package.json's exports name the module and the declarations the build writes", () => {
    const pkg = JSON.parse(readFileSync(client('package.json'), 'utf8'));
    const tsconfig = JSON.parse(readFileSync(client('tsconfig.json'), 'utf8'));
    const { outDir, rootDir } = tsconfig.compilerOptions as { outDir: string; rootDir: string };
    // tsc writes src/index.ts's declarations at outDir / (its path from rootDir).
    const declarations = `./${outDir}/${resolve(client('src/index.d.ts')).slice(resolve(client(rootDir)).length + 1)}`;
    expect(pkg).toMatchObject({
      name: '@pet-store/client',
      type: 'module',
      types: declarations,
      exports: { '.': { types: declarations, import: './dist/index.js' } },
    });
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.scripts.build).toBe('tsx build.ts && tsc -p tsconfig.json');
  });
});
