/**
 * The borders between the project's folders: tools/ never imports from test/ (the tests use the
 * tools, not the other way round), and what the Lambda bundles run (functions/, shared/) imports
 * neither the local tools nor the tests.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../shared/project-root';

/** Every TypeScript file below a folder of the project. */
const sourceFiles = (folder: string): string[] =>
  readdirSync(resolve(projectRoot, folder), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts'))
    .map((path) => join(folder, path));

/** The relative modules a source imports (static, re-exported, or dynamic), as project paths. */
const importsOf = (file: string, source: string): string[] =>
  [...source.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm)].map((match) =>
    relative(projectRoot, resolve(projectRoot, dirname(file), match[1] ?? '')),
  );

const crossings = (folders: readonly string[], forbidden: readonly string[]) =>
  folders.flatMap(sourceFiles).flatMap((file) =>
    importsOf(file, readFileSync(resolve(projectRoot, file), 'utf8'))
      .filter((target) => forbidden.some((folder) => target === folder || target.startsWith(`${folder}/`)))
      .map((target) => `${file} imports ${target}`),
  );

describe('import borders', () => {
  it('reads static, re-exported and dynamic imports, relative to the importing file', () => {
    const source = [
      "import { a } from '../../test/support/events';",
      "export { b } from '../x';",
      "const c = await import('./y');",
      "import './side-effect';",
      "import { z } from 'zod';",
    ].join('\n');
    expect(importsOf('tools/bench/warm.ts', source)).toEqual([
      'test/support/events',
      'tools/x',
      'tools/bench/y',
      'tools/bench/side-effect',
    ]);
  });

  it('tools/ imports nothing from test/', () => {
    expect(sourceFiles('tools').length).toBeGreaterThan(10);
    expect(crossings(['tools'], ['test'])).toEqual([]);
  });

  it('functions/ and shared/ import nothing from tools/ or test/', () => {
    expect(crossings(['functions', 'shared'], ['tools', 'test'])).toEqual([]);
  });
});
