/**
 * `npm run openapi`: writes generated/openapi.json, the TypeScript types a client is typed with
 * (openapi-typescript), and the documents' tables of operations, all generated from the shared
 * definitions. `--check` only compares, and fails when a committed file is stale.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { projectRoot } from '../../shared/project-root';
import { generatedFiles } from './files';

const check = process.argv.includes('--check');
let stale = 0;
for (const { path, contents } of await generatedFiles()) {
  const target = resolve(projectRoot, path);
  const current = await readFile(target, 'utf8').catch(() => undefined);
  if (current === contents) continue;
  if (check) {
    console.error(`${path} is stale: run npm run openapi`);
    stale += 1;
  } else {
    await writeFile(target, contents);
    console.log(`wrote ${path}`);
  }
}
if (stale > 0) process.exit(1);
