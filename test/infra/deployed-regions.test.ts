/**
 * A stage's regions against the committed record of where it is deployed (infra/deployed-regions.ts):
 * a change that would drop a replica of a kept stage's tables, with its data, is refused at synth in
 * one line (a stage's regions are fixed: a new stage takes others); the usual deploy needs nothing,
 * and the record cannot fall behind unnoticed.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDeployedRegions, DEPLOYED_REGIONS_FILE, readDeployedRegions, type DeployedRegions } from '../../infra/deployed-regions';
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
        refusalOf(() => checkDeployedRegions(stage, stageSettings(stage), record)),
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
  const check = (changed: Partial<StageSettings>) => refusalOf(() => checkDeployedRegions(STAGE, { ...settings, ...changed }, deployed));

  it('is not one when the regions are those recorded: the usual deploy needs no flag', () => {
    expect(regions.length).toBeGreaterThan(2);
    expect(check({})).toBe('');
  });

  it('dropping a region of a stage in several: refused in one line, as a strongly consistent table’s regions are fixed: a new stage', () => {
    const refusal = check({ regions: [home, second] });
    expectOneLine(refusal);
    expect(refusal).toBe(
      `Stage '${STAGE}': regions no longer lists ${third}, which would delete its replica of every table, with the data, ` +
        `and a strongly consistent table's regions are fixed: make a new stage (to destroy this one, list its recorded regions again).`,
    );
    expect(check({ regions: [home] })).toMatch(
      new RegExp(`^Stage '${STAGE}': regions no longer lists ${second} and ${third}, which would delete their replicas `),
    );
    expect(check({ regions: undefined })).toMatch(/regions are fixed: make a new stage/);
  });

  it('moving a stage recorded in one region: refused in one line, its regions being fixed too', () => {
    const refusal = refusalOf(() => checkDeployedRegions(STAGE, { ...settings, regions: undefined }, { [STAGE]: [home] }));
    expectOneLine(refusal);
    expect(refusal).toBe(
      `Stage '${STAGE}': regions no longer lists ${home} (recorded in ${DEPLOYED_REGIONS_FILE}), and its regions are fixed: make a new stage ` +
        `(to destroy this one, list its recorded regions again).`,
    );
  });

  it('a region the record lacks: refused until it is recorded, so that dropping it later is caught', () => {
    const unlisted = Object.values(MRSC_REGION_SETS)
      .flat()
      .find((region) => !regions.includes(region));
    if (!unlisted) throw new Error(`no region outside ${STAGE}'s`);
    const refusal = check({ regions: [home, second, unlisted] });
    expectOneLine(refusal);
    expect(refusal).toBe(
      `Stage '${STAGE}': regions lists ${unlisted}, which its record in ${DEPLOYED_REGIONS_FILE} does not: add it there first.`,
    );
  });

  it('a stage that keeps its data with no record: refused, naming what to add; a stage thrown away with its tables needs none', () => {
    const refusal = refusalOf(() => checkDeployedRegions('fixture-stage', settings, {}));
    expectOneLine(refusal);
    expect(refusal).toBe(
      `Stage 'fixture-stage' keeps its data, and ${DEPLOYED_REGIONS_FILE} has no record of its regions: add "fixture-stage": ${JSON.stringify(regions)} to it.`,
    );
    const destroyable = { ...settings, removalPolicy: RemovalPolicy.DESTROY } as const;
    expect(refusalOf(() => checkDeployedRegions('fixture-stage', destroyable, {}))).toBe('');
  });
});
