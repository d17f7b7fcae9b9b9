/**
 * The order in which the run hands files to its workers: the files that take longest first, so
 * that the workers finish together rather than one of them starting a long file near the end.
 *
 * Vitest orders by the durations it cached on an earlier run, and by file size without them, as
 * on CI's fresh clone, where size puts some of the longest files late. The long poles below are
 * listed, longest first; every other file keeps Vitest's order behind them.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The files that take longest (10 s and more each), longest first. */
export const LONG_POLES = [
  'test/e2e/local-server-cli.test.ts',
  'test/integration/keys-cli.test.ts',
  'test/infra/cdk-cli.test.ts',
  'test/e2e/faults.test.ts',
  'test/e2e/hostile-input.test.ts',
  'test/e2e/load.test.ts',
  'test/e2e/regions.test.ts',
  'test/infra/cfn-lint.test.ts',
  'test/e2e/smoke.test.ts',
  'test/e2e/body-budget.test.ts',
  'test/integration/api-keys-repository.test.ts',
  'test/infra/console.test.ts',
];

export default class LongPolesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const index = LONG_POLES.indexOf(relative(this.ctx.config.root, file.moduleId));
      return index === -1 ? LONG_POLES.length : index;
    };
    // A stable sort: groups (sequence.groupOrder) keep their order, and so do files of equal rank.
    const groupOf = (file: TestSpecification) => file.project.config.sequence.groupOrder;
    return sorted.toSorted((a, b) => groupOf(a) - groupOf(b) || rank(a) - rank(b));
  }
}
