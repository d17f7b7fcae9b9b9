/**
 * The regions each stage that keeps its data is deployed to, as committed in
 * infra/deployed-regions.json, and the refusal, at synth, of a change of a stage's regions that
 * would drop a replica of its tables with the data in it.
 *
 * Synth knows nothing of the last deploy, so the record stands in for it: a kept stage must have
 * one, a region it adds must be in it (so that a later drop of it is caught), and a region it no
 * longer lists is refused: a stage's regions are fixed (checkDeployedRegions).
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { projectRoot } from '../shared/project-root';
import type { StageSettings } from './stages';

/** The record, from the project root. */
export const DEPLOYED_REGIONS_FILE = 'infra/deployed-regions.json';

/** By stage, the regions its tables have replicas in: none listed for a stage in one region (its replica is its stack's region's). */
export type DeployedRegions = Readonly<Record<string, readonly string[]>>;

/** An AWS region's name, e.g. `us-west-2`, `ap-southeast-2`, `us-gov-west-1`. */
const REGION_PATTERN = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/** The record as committed; one line naming the file when it is not a record. */
export const readDeployedRegions = (file: string = resolve(projectRoot, DEPLOYED_REGIONS_FILE)): DeployedRegions => {
  const invalid = `${DEPLOYED_REGIONS_FILE} is not a record of regions: give each stage that keeps its data a list of region names, e.g. { "prod": [] }.`;
  let record: unknown;
  try {
    record = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new Error(invalid);
  }
  if (typeof record !== 'object' || record === null || Array.isArray(record)) throw new Error(invalid);
  const entries = Object.entries(record);
  const isRegions = (value: unknown): value is string[] =>
    Array.isArray(value) && value.every((region) => typeof region === 'string' && REGION_PATTERN.test(region));
  if (!entries.every(([, regions]) => isRegions(regions))) throw new Error(invalid);
  return Object.fromEntries(entries) as DeployedRegions;
};

/** `a`, `a and b`, `a, b and c`. */
const listed = (regions: readonly string[]): string =>
  regions.length < 2 ? (regions[0] ?? '') : `${regions.slice(0, -1).join(', ')} and ${regions.at(-1) ?? ''}`;

/**
 * Refuses, in one line, a stage's regions that differ from its record: a kept stage with no record,
 * a region the record lacks, and any recorded region no longer listed. A stage in several regions
 * has a strongly consistent (MRSC) idempotency table, whose replicas cannot be dropped one at a
 * time: DynamoDB deletes a replica of one only with another replica or its witness, leaving a table
 * of one region (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_DeleteGlobalTableWitnessGroupMemberAction.html),
 * and a stage cannot move from several regions to one by a deploy. A stage in one region has no
 * replica to drop. So no deploy drops a region: its regions are fixed, and a new stage takes others.
 */
export const checkDeployedRegions = (
  stage: string,
  settings: Pick<StageSettings, 'regions' | 'removalPolicy'>,
  deployed: DeployedRegions,
): void => {
  const regions = settings.regions ?? [];
  const recorded = deployed[stage];
  if (recorded === undefined) {
    if (settings.removalPolicy !== RemovalPolicy.DESTROY) {
      throw new Error(
        `Stage '${stage}' keeps its data, and ${DEPLOYED_REGIONS_FILE} has no record of its regions: add "${stage}": ${JSON.stringify(regions)} to it.`,
      );
    }
    return;
  }
  const added = regions.filter((region) => !recorded.includes(region));
  if (added.length > 0) {
    throw new Error(
      `Stage '${stage}': regions lists ${listed(added)}, which its record in ${DEPLOYED_REGIONS_FILE} does not: add ${added.length > 1 ? 'them' : 'it'} there first.`,
    );
  }
  const dropped = recorded.filter((region) => !regions.includes(region));
  if (dropped.length > 0) {
    const why =
      recorded.length > 1
        ? `, which would delete ${dropped.length > 1 ? 'their replicas' : 'its replica'} of every table, with the data, and a strongly consistent table's`
        : ` (recorded in ${DEPLOYED_REGIONS_FILE}), and its`;
    throw new Error(
      `Stage '${stage}': regions no longer lists ${listed(dropped)}${why} regions are fixed: make a new stage ` +
        `(to destroy this one, list its recorded regions again).`,
    );
  }
};
