/**
 * AWS's CloudFormation linter (cfn-lint) over the synthesized staging and prod templates, staging
 * with reserved concurrency, and every region's template of each stage in several: no error. Skipped, and named so, where cfn-lint is not
 * installed (it is a Python tool).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../support/command';
import { multiRegionStacks, synthStage } from './synth';

const CFN_LINT = 'cfn-lint';
const installed = spawnSync(CFN_LINT, ['--version'], { stdio: 'ignore' }).status === 0;

interface Match {
  readonly Filename: string;
  readonly Level: 'Error' | 'Warning' | 'Informational';
  readonly Message: string;
  readonly Rule: { readonly Id: string };
  readonly Location: { readonly Path: ReadonlyArray<string | number> };
}

/** cfn-lint's findings for some templates, in one run. */
const cfnLint = async (files: readonly string[], regions: readonly string[]): Promise<Match[]> => {
  const { status, stdout, stderr } = await runCommand(
    CFN_LINT,
    ['--format', 'json', '--regions', ...regions, '--', ...files],
    {},
    // A busy machine's cfn-lint over every region's template takes minutes, not its quiet 75 s.
    { timeout: 290_000 },
  );
  // The exit code is a bit mask of what was found (2 errors, 4 warnings, 8 informational); 1 is a crash.
  if (status === null || (status & 1) === 1) throw new Error(`cfn-lint failed (${status}): ${stderr.slice(0, 1000)}`);
  return JSON.parse(stdout) as Match[];
};

const shown = (matches: readonly Match[]) =>
  matches.map((match) => `${match.Rule.Id} ${match.Location.Path.join('/')}: ${match.Message}`).join('\n');

describe.skipIf(!installed)(installed ? 'cfn-lint on the synthesized templates' : 'cfn-lint (not installed: skipped)', () => {
  let directory = '';
  beforeAll(() => {
    directory = mkdtempSync(join(tmpdir(), 'pet-store-cfn-lint-'));
  });
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it(
    'finds no error in the staging and prod templates, nor in any region’s of a stage in several, and does find one in a broken template',
    { timeout: 300_000 },
    async () => {
      const templates: Record<string, Record<string, unknown>> = {};
      const regions = new Set(['us-east-1']);
      for (const stage of ['staging', 'prod']) {
        const { stack, template } = synthStage(stage);
        templates[stage] = template.toJSON();
        regions.add(stack.region);
      }
      const regional = multiRegionStacks();
      for (const [name, { stack, template }] of regional) {
        templates[name] = template.toJSON();
        regions.add(stack.region);
      }
      // Staging with reserved concurrency (off on every stage by default).
      templates.reserving = synthStage('staging', { reservedConcurrency: { authorizer: 200, eachOperation: 150 } }).template.toJSON();
      // The gate works: a Lambda timeout over CloudFormation's 900 s maximum is refused.
      templates.broken = {
        Resources: {
          Function: {
            Type: 'AWS::Lambda::Function',
            Properties: {
              Runtime: 'nodejs22.x',
              Handler: 'index.handler',
              Role: 'arn:aws:iam::123456789012:role/pet-store',
              Code: { ZipFile: 'exports.handler = async () => ({});' },
              Timeout: 901,
            },
          },
        },
      };
      const files = Object.entries(templates).map(([name, template]) => {
        const file = join(directory, `${name}.json`);
        writeFileSync(file, JSON.stringify(template, null, 1));
        return file;
      });
      // A stage in one region deploys to the deployer's region: check the tests' region and us-east-1,
      // cfn-lint's default; and every region a stage in several names.
      const errors = (await cfnLint(files, [...regions])).filter((match) => match.Level === 'Error');
      const inFile = (name: string) => errors.filter((match) => match.Filename === join(directory, `${name}.json`));

      expect(inFile('staging'), shown(inFile('staging'))).toEqual([]);
      expect(inFile('prod'), shown(inFile('prod'))).toEqual([]);
      expect(inFile('reserving'), shown(inFile('reserving'))).toEqual([]);
      expect(regional.length).toBeGreaterThan(1);
      for (const [name] of regional) expect(inFile(name), `${name}: ${shown(inFile(name))}`).toEqual([]);
      expect(inFile('broken').map((match) => match.Rule.Id)).toEqual(['E3034']);
    },
  );
});
