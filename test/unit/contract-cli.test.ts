/**
 * `npm run contract` and `npm run contract:accept` as an operator runs them, on a contract and a
 * document in a temporary folder (never the repository's contract/v1.json).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { check, resolveConfig } from 'prettier';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { projectRoot } from '../../shared/project-root';
import { routes, type Route } from '../../shared/routes';
import { literally } from '../support/vocabulary';
import { CONTRACT_PATH } from '../../tools/contract/paths';
import { HTTP_METHODS } from '../../tools/contract/place';
import { buildOpenApiDocument } from '../../tools/openapi/document';
import { contractToolName, runContractCommand } from '../../tools/contract/cli';
import { expectOneLineFailure, npmRun, runInProcess, type CommandResult } from '../support/command';

interface Document {
  paths: Record<string, Record<string, unknown>>;
  components: {
    schemas: Record<string, { properties: Record<string, unknown>; required: string[] }>;
    headers: Record<string, { schema: { maxLength?: number } }>;
  };
}

const generated = (): Document => JSON.parse(JSON.stringify(buildOpenApiDocument()));

let folder: string;
let contractFile: string;
let documentFile: string;

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'contract-'));
  contractFile = join(folder, 'v1.json');
  documentFile = join(folder, 'openapi.json');
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

const write = (file: string, document: Document) => writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);

/** The generated document, broken twice: a field removed from Pet, and a new required field in NewPet. */
const broken = (): Document => {
  const document = generated();
  const pet = document.components.schemas.Pet;
  const newPet = document.components.schemas.NewPet;
  if (!pet || !newPet) throw new Error('no Pet or NewPet schema');
  delete pet.properties.categoryId;
  pet.required = pet.required.filter((field) => field !== 'categoryId');
  newPet.properties.tag = { type: 'string' };
  newPet.required.push('tag');
  return document;
};

/**
 * The command in this process (tools/contract/cli.ts), as npm run shows it: each script has a test
 * through npm run as well.
 */
const contract = (script: 'contract' | 'contract:accept', argv: readonly string[]): Promise<CommandResult> => {
  const args = script === 'contract:accept' ? ['accept', ...argv] : argv;
  return runInProcess(contractToolName(args), (output) => runContractCommand(args, output));
};

/** What the command wrote on stderr, without npm's warnings about this machine's npm configuration. */
const errorLines = (result: CommandResult) =>
  result.stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm warn'));

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The lines of broken()'s changes: one per operation answering a Pet (or a list of them), one per operation taking a NewPet. */
const BROKEN_LINES = (routes as readonly Route[]).flatMap((route) => {
  const place = `^ {2}${escaped(`${route.method} ${route.path}`)}: `;
  const answer = route.success?.model;
  return [
    ...(answer === 'Pet' || answer === 'Pets'
      ? [
          new RegExp(
            `${place}response ${route.success?.status} body \`${answer === 'Pets' ? '\\[\\]\\.' : ''}categoryId\` \\(required\\): removed`,
          ),
        ]
      : []),
    ...(route.request?.body === 'NewPet' ? [new RegExp(`${place}request body \`tag\` \\(required\\): added`)] : []),
  ];
});

describe('npm run contract', () => {
  it('lists the breaking changes of a broken document and exits 1', async () => {
    write(contractFile, generated());
    write(documentFile, broken());
    const result = await npmRun('contract', ['--contract', contractFile, '--document', documentFile]);
    expect(result.status).toBe(1);
    for (const line of BROKEN_LINES) expect(result.stdout.split('\n')).toContainEqual(expect.stringMatching(line));
    expect(errorLines(result)).toEqual([`npm run contract: ${BROKEN_LINES.length} breaking, 0 to review: see the list above`]);
  });

  it('refuses an unknown option in one line, exit status 2', async () => {
    const line = expectOneLineFailure(await contract('contract', ['--contracts', contractFile]), { status: 2 });
    expect(line).toBe("npm run contract: unknown option '--contracts': see npm run contract -- --help");
  });
});

describe('npm run contract:accept', () => {
  it('takes an additive change: the contract becomes the document generated now, formatted as Prettier leaves it', async () => {
    // One operation the released contract lacks (the table's last, whichever it is), its path's others (if any) kept.
    const { method, path } = routes[routes.length - 1] as Route;
    const released = generated();
    const pathItem = released.paths[path] ?? {};
    delete pathItem[method.toLowerCase()];
    if (!Object.keys(pathItem).some((key) => HTTP_METHODS.has(key))) delete released.paths[path];
    write(contractFile, released);
    const result = await npmRun('contract:accept', ['--contract', contractFile]);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain(`${contractFile}: accepted 1 change:\n  ${method} ${path}: added`);
    const text = readFileSync(contractFile, 'utf8');
    expect(JSON.parse(text)).toEqual(generated());
    const filepath = resolve(projectRoot, CONTRACT_PATH);
    expect(await check(text, { ...(await resolveConfig(filepath)), filepath })).toBe(true);
  });

  it('refuses a breaking change: exit 1, one line per change, the contract unchanged', async () => {
    write(contractFile, generated());
    const before = readFileSync(contractFile, 'utf8');
    write(documentFile, broken());
    const result = await contract('contract:accept', ['--contract', contractFile, '--document', documentFile]);
    expect(result.status).toBe(1);
    const [summary, ...changes] = errorLines(result);
    expect(summary).toBe(`npm run contract:accept: refused, ${contractFile} is unchanged: ${BROKEN_LINES.length} would break /v1:`);
    expect(changes).toHaveLength(BROKEN_LINES.length);
    for (const line of BROKEN_LINES) expect(changes).toContainEqual(expect.stringMatching(line));
    expect(readFileSync(contractFile, 'utf8')).toBe(before);
  });

  it('holds a change the diff tool cannot classify until --reviewed says a person has checked it', async () => {
    write(contractFile, generated());
    const before = readFileSync(contractFile, 'utf8');
    const document = generated();
    const location = document.components.headers.Location;
    if (!location) throw new Error('no Location header');
    location.schema.maxLength = 64;
    write(documentFile, document);

    const held = await contract('contract:accept', ['--contract', contractFile, '--document', documentFile]);
    expect(held.status).toBe(1);
    // One change in each operation whose success carries a Location (the route table's creates).
    const creates = (routes as readonly Route[]).filter((route) => route.success?.requiredHeaders?.includes('Location'));
    expect(errorLines(held)).toEqual([
      `npm run contract:accept: refused, ${contractFile} is unchanged: ${creates.length} to review (accept with --reviewed once checked):`,
      ...creates.map((route) =>
        expect.stringMatching(
          `^ {2}${route.method} ${literally(route.path)}: response ${route.success?.status} header \`Location\` maxLength: changed from \\d+ to 64$`,
        ),
      ),
    ]);
    expect(readFileSync(contractFile, 'utf8')).toBe(before);

    const reviewed = await contract('contract:accept', ['--contract', contractFile, '--document', documentFile, '--reviewed']);
    expect(reviewed.status, reviewed.stderr).toBe(0);
    expect(JSON.parse(readFileSync(contractFile, 'utf8'))).toEqual(document);
  });
});
