/** The run's file order (test/support/sequencer.ts): the long poles first, within each group of projects. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import { projectRoot } from '../../shared/project-root';
import LongPolesFirst, { LONG_POLES } from '../support/sequencer';

/** A file of a project, as Vitest hands it to the sequencer. */
const spec = (path: string, project: string, groupOrder = 0) =>
  ({
    moduleId: join(projectRoot, path),
    project: { name: project, config: { isolate: true, sequence: { groupOrder } } },
  }) as unknown as TestSpecification;

/** A fresh clone's run: no durations cached, no sizes known. */
const freshRun = {
  config: { root: projectRoot },
  cache: { getTestSpecificationResult: () => undefined },
} as unknown as Vitest;

const pathsOf = (files: TestSpecification[]) => files.map((file) => file.moduleId.slice(projectRoot.length + 1));

describe('the order of a run', () => {
  it('lists long poles that exist, each once', () => {
    expect(LONG_POLES.filter((path) => !existsSync(join(projectRoot, path)))).toEqual([]);
    expect(new Set(LONG_POLES).size).toBe(LONG_POLES.length);
  });

  it('starts the long poles first, longest first, and keeps a later group after them all', async () => {
    const [longest = '', second = ''] = LONG_POLES;
    const files = [
      spec('test/unit/quick-one.test.ts', 'unit'),
      spec('test/infra/judged-after.test.ts', 'aws-rules', 1),
      spec(second, 'behaviour'),
      spec('test/e2e/quick-two.test.ts', 'behaviour'),
      spec(longest, 'behaviour'),
    ];
    expect(pathsOf(await new LongPolesFirst(freshRun).sort(files))).toEqual([
      longest,
      second,
      'test/e2e/quick-two.test.ts',
      'test/unit/quick-one.test.ts',
      'test/infra/judged-after.test.ts',
    ]);
  });
});
