/**
 * A stage's regions against the committed record of where it is deployed (infra/deployed-regions.ts):
 * a change that would drop a replica of a kept stage's tables, with its data, is refused at synth in
 * one line, unless the deploy names the region with `-c dropRegions=…`; the usual deploy needs
 * nothing, and the record cannot fall behind unnoticed.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  checkDeployedRegions,
  DEPLOYED_REGIONS_FILE,
  parseDropRegions,
  readDeployedRegions,
  type DeployedRegions,
} from '../../infra/deployed-regions';
import { MRSC_REGION_SETS, stages, stageSettings, type StageSettings } from '../../infra/stages';
import { runCommand } from '../support/command';
import { multiRegionStages } from './synth';

/** The message a check throws, or '' when it passes. */
const refusalOf = (check: () => unknown): string => {
  try {
    check();
    return '';
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
};

const expectOneLine = (refusal: string) => {
  expect(refusal).not.toBe('');
  expect(refusal).not.toContain('\n');
};

describe(`the committed record, ${DEPLOYED_REGIONS_FILE}`, () => {
  const record = readDeployedRegions();

  it('records every stage that keeps its data, with each region it lists: the stages deploy as they are, with no flag', () => {
    const kept = Object.keys(stages).filter((stage) => stageSettings(stage).removalPolicy !== RemovalPolicy.DESTROY);
    expect(kept.length).toBeGreaterThan(0);
    for (const stage of kept) {
      expect(record, stage).toHaveProperty([stage]);
      expect(record[stage], stage).toEqual(expect.arrayContaining([...(stageSettings(stage).regions ?? [])]));
    }
    for (const stage of Object.keys(stages))
      expect(
        refusalOf(() => checkDeployedRegions(stage, stageSettings(stage), record, [])),
        stage,
      ).toBe('');
  });

  it('refuses, in one line naming the file, a record that is not one', () => {
    const folder = mkdtempSync(join(tmpdir(), 'deployed-regions-'));
    const records: Array<[string, string]> = [
      ['not-json', '{ "prod": ['],
      ['a-list', '["us-east-1"]'],
      ['not-regions', '{ "prod": "us-east-1" }'],
      ['not-a-region', '{ "prod": ["US East"] }'],
    ];
    for (const [name, text] of records) {
      const file = join(folder, `${name}.json`);
      writeFileSync(file, text);
      const refusal = refusalOf(() => readDeployedRegions(file));
      expectOneLine(refusal);
      expect(refusal, name).toMatch(new RegExp(`^${DEPLOYED_REGIONS_FILE.replace(/\./g, '\\.')} is not a record of regions`));
    }
  });
});

describe('a change of a kept stage’s regions', () => {
  const [STAGE = ''] = multiRegionStages();
  const settings = stageSettings(STAGE);
  const regions = settings.regions ?? [];
  const [home = '', second = '', third = ''] = regions;
  const deployed: DeployedRegions = { [STAGE]: regions };
  const check = (changed: Partial<StageSettings>, dropRegions: readonly string[] = []) =>
    refusalOf(() => checkDeployedRegions(STAGE, { ...settings, ...changed }, deployed, dropRegions));

  it('is not one when the regions are those recorded: the usual deploy needs no flag', () => {
    expect(regions.length).toBeGreaterThan(2);
    expect(check({})).toBe('');
  });

  it('dropping a region: refused in one line naming the stage, the region and the flag that allows it', () => {
    const refusal = check({ regions: [home, second] });
    expectOneLine(refusal);
    expect(refusal).toBe(
      `Stage '${STAGE}': regions no longer lists ${third}, and the deploy would delete its replica of every table, with its data: ` +
        `to drop it on purpose, turn off the deletion protection of its replicas and deploy with -c dropRegions=${third}, ` +
        `then take it out of the stage's record in ${DEPLOYED_REGIONS_FILE}.`,
    );
  });

  it('dropping a region the deploy names: allowed', () => {
    expect(check({ regions: [home, second] }, [third])).toBe('');
    expect(check({ regions: [home] }, [third, second])).toBe('');
  });

  it('dropping two regions, the deploy naming one: refused, naming the other, and the flag for both', () => {
    const refusal = check({ regions: [home] }, [third]);
    expectOneLine(refusal);
    expect(refusal).toMatch(new RegExp(`^Stage '${STAGE}': regions no longer lists ${second}, .* -c dropRegions=${second},${third}, `));
  });

  it('a flag naming a region the stage does not drop: refused, so that a flag left in a script approves nothing later', () => {
    const refusal = check({}, [third]);
    expectOneLine(refusal);
    expect(refusal).toBe(
      `Invalid dropRegions: stage '${STAGE}' does not drop ${third} (its record in ${DEPLOYED_REGIONS_FILE}: ${regions.join(', ')}); leave it out.`,
    );
  });

  it('a region the record lacks: refused until it is recorded, so that dropping it later is caught', () => {
    const unlisted = Object.values(MRSC_REGION_SETS)
      .flat()
      .find((region) => !regions.includes(region));
    if (!unlisted) throw new Error(`no region outside ${STAGE}'s`);
    const refusal = check({ regions: [home, second, unlisted] }, [third]);
    expectOneLine(refusal);
    expect(refusal).toBe(
      `Stage '${STAGE}': regions lists ${unlisted}, which its record in ${DEPLOYED_REGIONS_FILE} does not: add it there first.`,
    );
  });

  it('a stage that keeps its data with no record: refused, naming what to add; a stage thrown away with its tables needs none', () => {
    const refusal = refusalOf(() => checkDeployedRegions('fixture-stage', settings, {}, []));
    expectOneLine(refusal);
    expect(refusal).toBe(
      `Stage 'fixture-stage' keeps its data, and ${DEPLOYED_REGIONS_FILE} has no record of its regions: add "fixture-stage": ${JSON.stringify(regions)} to it.`,
    );
    const destroyable = { ...settings, removalPolicy: RemovalPolicy.DESTROY } as const;
    expect(refusalOf(() => checkDeployedRegions('fixture-stage', destroyable, {}, []))).toBe('');
    expectOneLine(refusalOf(() => checkDeployedRegions('fixture-stage', destroyable, {}, [third])));
  });
});

describe('-c dropRegions', () => {
  it('is none when absent, and each region of a comma-separated list', () => {
    expect(parseDropRegions(undefined)).toEqual([]);
    const [first = '', second = ''] = MRSC_REGION_SETS.US ?? [];
    expect(parseDropRegions(first)).toEqual([first]);
    expect(parseDropRegions(`${first},${second}`)).toEqual([first, second]);
  });

  it.each(['', 'US-EAST-1', 'us-east-1;rm', 'us-east-1,,us-east-2', 'true'])('refuses %j in one line', (value) => {
    expect(() => parseDropRegions(value)).toThrow(
      /^Invalid dropRegions '.*': give the regions to drop, comma-separated \(e\.g\. -c dropRegions=[a-z0-9-]+\)\.$/,
    );
  });
});

describe('the CDK app', () => {
  it('refuses a dropRegions its stage does not drop, in one line and no stack trace, before it builds anything', async () => {
    const [stage = ''] = multiRegionStages();
    const [, , third = ''] = stageSettings(stage).regions ?? [];
    const { status, stdout, stderr } = await runCommand('node', ['--env-file=tools/local.env', '--import', 'tsx', 'infra/app.ts'], {
      CDK_CONTEXT_JSON: JSON.stringify({ stage, dropRegions: third }),
      CDK_OUTDIR: mkdtempSync(join(tmpdir(), 'deployed-regions-app-')),
    });
    expect(status).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^Invalid dropRegions: stage '${stage}' does not drop ${third} `)),
    ]);
  });
});
