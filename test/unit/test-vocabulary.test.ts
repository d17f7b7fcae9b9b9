/**
 * The tests' vocabulary comes from shared/: no test line spells out two or more real scopes,
 * operation ids or plan names (a list written by hand breaks as soon as one is added), and no
 * fixture borrows a name a real scope or operation could take (test/support/fixture-names.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { plans } from '../../shared/plans';
import { projectRoot } from '../../shared/project-root';
import { routes } from '../../shared/routes';
import { SCOPES } from '../../shared/scopes';
import { fixtureOperationId, fixtureScope, isFixtureName } from '../support/fixture-names';

/** Every TypeScript file below a folder of the project. */
const sourceFiles = (folder: string): string[] =>
  readdirSync(resolve(projectRoot, folder), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.ts') && !path.includes('node_modules'))
    .map((path) => join(folder, path));

const realScopes: readonly string[] = SCOPES;
const realOperationIds: readonly string[] = routes.map((route) => route.operationId);
const realPlanNames: readonly string[] = Object.keys(plans);

/** The verbs a scope could take: the real scopes' and the usual ones of an HTTP API. */
const scopeVerbs = new Set([...realScopes.map((scope) => scope.split(':')[1] ?? ''), 'create', 'delete', 'update', 'list', 'get', 'admin']);
const scopeResources = new Set(realScopes.map((scope) => scope.split(':')[0] ?? ''));
/**
 * An operation id as the route table names them: a verb, then a capitalised resource. A name of
 * that form that the code already defines (a function under test) is no fixture.
 */
const OPERATION_ID_FORM = /^(get|list|create|update|delete|patch)[A-Z]\w*$/;

const CODE_FOLDERS = ['shared', 'functions', 'infra', 'tools', 'client'];
const codeIdentifiers = new Set(
  CODE_FOLDERS.flatMap((folder) => sourceFiles(folder)).flatMap(
    (file) => readFileSync(resolve(projectRoot, file), 'utf8').match(/\b[A-Za-z_]\w*\b/g) ?? [],
  ),
);

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The distinct names of a vocabulary a line spells out, each as a whole token. */
const spelled = (line: string, names: readonly string[], token: (name: string) => RegExp) => names.filter((name) => token(name).test(line));
const scopeToken = (scope: string) => new RegExp(`(?<![\\w:-])${escaped(scope)}(?![\\w:-])`);
const wordToken = (word: string) => new RegExp(`\\b${escaped(word)}\\b`);
/** A plan name as a string: quoted, or a whole tab- or comma-separated field. */
const planToken = (plan: string) => new RegExp(`(['"\`])${escaped(plan)}\\1|\\\\t${escaped(plan)}\\b`);

/** The problems of one line of a test file, as sentences. */
export const problemsOf = (source: string): string[] => {
  // A tab or newline written as an escape separates names as whitespace does.
  const line = source.replace(/\\[tn]/g, ' ');
  const problems: string[] = [];
  const listed = (kind: string, names: string[]) => {
    if (names.length >= 2) problems.push(`spells ${kind} ${names.join(', ')}: derive them from shared/`);
  };
  listed('the scopes', spelled(line, realScopes, scopeToken));
  listed('the operations', spelled(line, realOperationIds, wordToken));
  listed('the plans', spelled(line, realPlanNames, planToken));
  for (const [scope, resource = '', verb = ''] of line.matchAll(/(?<![\w:/.@-])([a-z][a-z0-9-]*):([a-z][a-z0-9-]*)(?![\w:/-])/g)) {
    const looksReal = scopeResources.has(resource) || scopeVerbs.has(verb);
    if (looksReal && !realScopes.includes(scope) && !isFixtureName(scope))
      problems.push(`'${scope}' could be a real scope one day: use fixtureScope() (test/support/fixture-names.ts)`);
  }
  for (const [, name = ''] of line.matchAll(/['"`]([A-Za-z]\w*)['"`]/g)) {
    if (OPERATION_ID_FORM.test(name) && !realOperationIds.includes(name) && !codeIdentifiers.has(name))
      problems.push(`'${name}' could be a real operation one day: use fixtureOperationId() (test/support/fixture-names.ts)`);
  }
  return problems;
};

describe("the tests' vocabulary", () => {
  it('finds a hand-written list of scopes, operations or plans, and a fixture name that could be real', () => {
    const quoted = (names: readonly string[]) => names.map((name) => `'${name}'`).join(', ');
    expect(problemsOf(`const all = [${quoted(realScopes)}];`)).toHaveLength(1);
    expect(problemsOf(`expect(line).toBe('x\\t${realScopes.join(',')}\\tactive');`)).toHaveLength(1);
    expect(problemsOf(`for (const id of [${quoted(realOperationIds)}]) send(id);`)).toHaveLength(1);
    expect(problemsOf(`const names = [${quoted(realPlanNames)}];`)).toHaveLength(1);
    // A real resource with a usual verb that no real scope has (today's unreal one may be added tomorrow).
    const [resource] = [...scopeResources];
    const unreal = [...scopeVerbs].map((verb) => `${resource}:${verb}`).find((scope) => !realScopes.includes(scope));
    expect(problemsOf(`const unknown = '${unreal}';`)).toHaveLength(1);
    expect(problemsOf(`const unknown = '${['reports', 'read'].join(':')}';`)).toHaveLength(1);
    expect(problemsOf(`released([...names, '${'delete'}Thing'])`)).toHaveLength(1);
  });

  it('lets one real name, and fixture names, through', () => {
    expect(problemsOf(`grant('${realScopes[0]}'); call('${realOperationIds[0]}'); plan('${realPlanNames[0]}');`)).toEqual([]);
    expect(problemsOf(`['${fixtureScope('delete')}', '${fixtureOperationId('delete')}Thing']`)).toEqual([]);
    expect(problemsOf("import { readFileSync } from 'node:fs'; const url = 'http://127.0.0.1:3000'; // by default")).toEqual([]);
  });

  it('no real scope or operation takes a fixture name', () => {
    expect([...realScopes, ...realOperationIds, ...routes.map((route) => route.path)].filter(isFixtureName)).toEqual([]);
  });

  it('is kept by every test file', () => {
    const problems = sourceFiles('test').flatMap((file) =>
      readFileSync(resolve(projectRoot, file), 'utf8')
        .split('\n')
        .flatMap((line, index) => problemsOf(line).map((problem) => `${file}:${index + 1}: ${problem}`)),
    );
    expect(problems).toEqual([]);
  });
});
