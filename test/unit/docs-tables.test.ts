/** The documents' tables of operations: generated from the route table, and never stale. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../shared/project-root';
import { releaseChecks } from '../../shared/release-checks';
import { BASE_PATH, routes, type Route } from '../../shared/routes';
import { docTables, generatedDocuments, NO_KEY, regionsOf, withTables } from '../../tools/openapi/docs-tables';
import { CHECK_NAMES } from '../../tools/smoke/checks';

const region = (name: string, contents: string) => `<!-- generated: ${name} (npm run openapi) -->\n${contents}<!-- end generated -->`;

describe("the documents' generated tables", () => {
  it('are what npm run openapi writes now, in every document that has one', async () => {
    const documents = await generatedDocuments();
    expect(documents.map(({ path }) => path)).toEqual(expect.arrayContaining(['docs/api.md', 'docs/operations.md']));
    for (const { path, contents } of documents) {
      const committed = readFileSync(resolve(projectRoot, path), 'utf8');
      const now = new Map(regionsOf(contents));
      for (const [table, rows] of regionsOf(committed)) {
        expect(rows, `${path}: the ${table} table is stale: run npm run openapi`).toBe(now.get(table));
      }
      expect(committed, `${path} is stale: run npm run openapi`).toBe(contents);
    }
  });

  it('list every operation, with its method, path and scope; every function; and each released one with its check', () => {
    const now = new Date();
    const tables = docTables(now);
    for (const route of routes as readonly Route[]) {
      expect(tables.operations).toContain(`| \`${route.operationId}\``);
      expect(tables.operations).toContain(`\`${route.method} ${BASE_PATH}${route.path}`);
      expect(tables.operations).toContain(route.scope === undefined ? NO_KEY : `\`${route.scope}\``);
      if ('handler' in route) {
        expect(tables.functions).toContain(`\`pet-store-<stage>-${route.operationId}\` | \`${route.handler}\``);
        expect(tables.release).toContain(`\`pet-store-<stage>-${route.operationId}\``);
        expect(tables.grants).toContain(`| \`${route.operationId}\` |`);
      }
    }
    for (const check of releaseChecks(now)) expect(tables.release).toContain(`\`${check.name}\``);
    for (const name of CHECK_NAMES) expect(tables.smoke).toContain(`| \`${name}\` |`);
  });

  it('rewrite a stale region and leave the rest of the document as it is', () => {
    const tables = { operations: '| a |\n' };
    const document = `# Title\n\nBefore.\n\n${region('operations', '| old |\n| rows |\n')}\n\nAfter.\n`;
    expect(withTables('docs/x.md', document, tables)).toBe(`# Title\n\nBefore.\n\n${region('operations', '| a |\n')}\n\nAfter.\n`);
    const fresh = withTables('docs/x.md', document, tables);
    expect(withTables('docs/x.md', fresh, tables)).toBe(fresh);
  });

  it('refuse a region naming no table, or one never closed, naming the document', () => {
    expect(() => withTables('docs/x.md', region('operatoins', ''), { operations: '' })).toThrow(
      'docs/x.md: no generated table named operatoins (known: operations).',
    );
    expect(() => withTables('docs/x.md', '<!-- generated: operations (npm run openapi) -->\n| a |\n', { operations: '' })).toThrow(
      'docs/x.md: a generated region has no <!-- end generated --> after it.',
    );
  });
});
