/**
 * openapi.json through Stoplight Spectral, with the OpenAPI rules and the OWASP API Security
 * rules (.spectral.yaml): no error, apart from the exceptions the ruleset lists with their reasons.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../shared/project-root';
import { OPENAPI_PATH } from '../../tools/openapi/paths';
import { runCommand } from '../support/command';
import { noContentRoute, noContentRouteDocs } from '../support/fixture-routes';
import { routes, type Route } from '../../shared/routes';
import { buildOpenApiDocument } from '../../tools/openapi/document';

interface Finding {
  readonly code: string;
  readonly message: string;
  readonly path: readonly string[];
  /** 0 error, 1 warning, 2 information, 3 hint. */
  readonly severity: number;
}

const DOCUMENT_PATH = resolve(projectRoot, OPENAPI_PATH);
const SPECTRAL = resolve(projectRoot, 'node_modules/.bin/spectral');

/** Spectral's findings for a document, linted as openapi.json (so the ruleset's per-file exceptions apply). */
const lint = async (document: string): Promise<Finding[]> => {
  // Its standard input is a file, not a pipe: Spectral reads it at once, and a pipe holding less
  // than a document larger than its buffer (64 KiB) fails that read with EAGAIN.
  const folder = mkdtempSync(join(tmpdir(), 'spectral-'));
  const file = join(folder, 'openapi.json');
  writeFileSync(file, document);
  const quoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
  try {
    const { status, stdout, stderr } = await runCommand('sh', [
      '-c',
      `${quoted(SPECTRAL)} lint --quiet --format json --stdin-filepath ${quoted(DOCUMENT_PATH)} < ${quoted(file)}`,
    ]);
    return findingsOf(status, stdout, stderr);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
};

const findingsOf = (status: number | null, stdout: string, stderr: string): Finding[] => {
  // Exit 1 means "errors found"; anything else but 0 means Spectral itself failed.
  if (status !== 0 && status !== 1) throw new Error(`spectral exited with ${status}: ${stderr}`);
  try {
    return JSON.parse(stdout) as Finding[];
  } catch {
    throw new Error(`spectral printed no JSON: ${stdout.slice(0, 500)} ${stderr.slice(0, 500)}`);
  }
};

const errorsIn = (findings: readonly Finding[]) => findings.filter((finding) => finding.severity === 0);
const shown = (findings: readonly Finding[]) =>
  findings.map((finding) => `${finding.code} at ${finding.path.join('.')}: ${finding.message}`).join('\n');

describe.concurrent('openapi.json under Spectral (spectral:oas and the OWASP API Security ruleset)', () => {
  const committed = readFileSync(DOCUMENT_PATH, 'utf8');

  it('has no error', { timeout: 60_000 }, async () => {
    const errors = errorsIn(await lint(committed));
    expect(errors, `Spectral finds:\n${shown(errors)}`).toEqual([]);
  });

  it('has no error with an operation whose success has no content (a fixture route)', { timeout: 60_000 }, async () => {
    const errors = errorsIn(
      await lint(JSON.stringify(buildOpenApiDocument({ routes: [...routes, noContentRoute], docs: noContentRouteDocs }), null, 2)),
    );
    expect(errors, `Spectral finds:\n${shown(errors)}`).toEqual([]);
  });

  it(
    'refuses a document that breaks a rule, and excepts the local http server and operations that answer 501 only',
    { timeout: 60_000 },
    async () => {
      const broken = JSON.parse(committed);
      delete broken.components.schemas.Error.properties.message.maxLength;
      broken.servers[0].url = broken.servers[0].url.replace(/^https:/, 'http:');
      // An operation that answers no 501 loses its success: it must document one.
      const specified = (routes as readonly Route[]).find(
        (route) => route.success !== undefined && !route.errors.includes('not_implemented'),
      );
      if (!specified) throw new Error('no operation with a success');
      const method = specified.method.toLowerCase();
      delete broken.paths[specified.path][method].responses[String(specified.success?.status)];
      const errors = errorsIn(await lint(JSON.stringify(broken, null, 2)));
      expect(errors.map(({ code, path }) => `${code} at ${path.join('.')}`)).toEqual(
        expect.arrayContaining([
          'owasp:api4:2023-string-limit at components.schemas.Error.properties.message',
          'owasp:api8:2023-no-server-http at servers.0.url',
          `operation-success-or-not-implemented at paths.${specified.path}.${method}.responses`,
        ]),
      );
    },
  );
});
