/** Every relative link in the documentation resolves: the file exists, and so does its #anchor. */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../shared/project-root';
import { anchorsOf, brokenLinks, relativeLinks, slugOf } from '../support/doc-links';

const documents = [
  'README.md',
  'BENCHMARKS.md',
  ...readdirSync(join(projectRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

describe('the documentation', () => {
  it('has README.md, BENCHMARKS.md and one document per reader in docs/', () => {
    expect(documents).toEqual(expect.arrayContaining(['docs/api.md', 'docs/operations.md', 'docs/reliability.md', 'docs/architecture.md']));
  });

  it('has no relative link that does not resolve', () => {
    const checked = relativeLinks(projectRoot, documents).map(({ file, target }) => `${file} -> ${target}`);
    expect(checked).toEqual(expect.arrayContaining(['README.md -> docs/api.md', 'docs/reliability.md -> api.md#idempotent-creates']));
    const broken = brokenLinks(projectRoot, documents).map(({ file, line, target, problem }) => `${file}:${line} (${target}): ${problem}`);
    expect(broken).toEqual([]);
  });
});

describe('the link check', () => {
  const root = mkdtempSync(join(tmpdir(), 'doc-links-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (files: Record<string, string>) => {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
  };
  const problems = (file: string) => brokenLinks(root, [file]).map(({ line, target, problem }) => ({ line, target, problem }));

  it('finds a missing file, a missing anchor, and a missing anchor in the same file', () => {
    write({
      'docs/guide.md': '# Guide\n\n## The contract: `openapi.json`\n',
      'README.md': [
        '# Title',
        'See [the guide](docs/guide.md) and [its contract](docs/guide.md#the-contract-openapijson).',
        'Broken: [gone](docs/missing.md), [no such part](docs/guide.md#no-such-part), [here](#nowhere).',
        'Fine: [top](#title), ![a picture](docs/guide.md), [a site](https://example.com/x.md#y), [mail](mailto:a@b.c).',
        '[defined]: docs/absent.md',
      ].join('\n'),
    });
    expect(problems('README.md')).toEqual([
      { line: 3, target: 'docs/missing.md', problem: 'docs/missing.md does not exist' },
      { line: 3, target: 'docs/guide.md#no-such-part', problem: 'no heading in docs/guide.md has the anchor #no-such-part' },
      { line: 3, target: '#nowhere', problem: 'no heading in README.md has the anchor #nowhere' },
      { line: 5, target: 'docs/absent.md', problem: 'docs/absent.md does not exist' },
    ]);
  });

  it('resolves a link from the linking file’s folder, and refuses one that leaves the repository', () => {
    write({ 'docs/a.md': '[up](../README.md#title) [beside](guide.md) [wrong folder](docs/guide.md) [out](../../elsewhere.md)\n' });
    expect(problems('docs/a.md').map(({ target }) => target)).toEqual(['docs/guide.md', '../../elsewhere.md']);
  });

  it('ignores what only looks like a link: code blocks and code spans', () => {
    write({ 'code.md': '# Code\n\n```ts\nconst x = [a](missing.md);\n```\n\n`[b](missing.md)` and ~~~ is no fence\n' });
    expect(problems('code.md')).toEqual([]);
  });

  it('makes anchors as GitHub does', () => {
    expect(slugOf('The contract: openapi.json')).toBe('the-contract-openapijson');
    expect(slugOf('Nothing half written, nothing twice')).toBe('nothing-half-written-nothing-twice');
    expect(slugOf('**Keys** and `npm run keys`')).toBe('keys-and-npm-run-keys');
    expect(slugOf('Retries and timeouts ##')).toBe('retries-and-timeouts');
    expect(slugOf('Stage settings_and-more')).toBe('stage-settings_and-more');
    expect([...anchorsOf('# Logs\n## Logs\n```\n# not a heading\n```\n### Logs\n')]).toEqual(['logs', 'logs-1', 'logs-2']);
  });
});
