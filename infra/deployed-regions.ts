/**
 * The regions each stage that keeps its data is deployed to, as committed in
 * infra/deployed-regions.json, and the refusal, at synth, of a change of a stage's regions that
 * would drop a replica of its tables with the data in it.
 *
 * Synth knows nothing of the last deploy, so the record stands in for it: a kept stage must have
 * one, a region it adds must be in it (so that a later drop of it is caught), and a region it no
 * longer lists is refused unless the deploy names it, `-c dropRegions=<region>[,<region>…]`. Once
 * that deploy has succeeded, the region comes out of the record; until then, every synth without
 * the flag refuses, so the record cannot silently fall behind what is deployed.
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

/** `-c dropRegions=us-west-2[,…]`: the regions this deploy may drop from its stage; none when absent. */
export const parseDropRegions = (value: unknown): readonly string[] => {
  if (value === undefined) return [];
  const regions = String(value)
    .split(',')
    .map((region) => region.trim());
  if (regions.some((region) => !REGION_PATTERN.test(region))) {
    throw new Error(`Invalid dropRegions '${String(value)}': give the regions to drop, comma-separated (e.g. -c dropRegions=us-west-2).`);
  }
  return regions;
};

/** `a`, `a and b`, `a, b and c`. */
const listed = (regions: readonly string[]): string =>
  regions.length < 2 ? (regions[0] ?? '') : `${regions.slice(0, -1).join(', ')} and ${regions.at(-1) ?? ''}`;

/**
 * Refuses, in one line, a stage's regions that differ from its record but by the regions this
 * deploy names in `dropRegions`: a kept stage with no record, a region the record lacks, a
 * recorded region dropped without the flag, and a flag naming a region the stage does not drop.
 */
export const checkDeployedRegions = (
  stage: string,
  settings: Pick<StageSettings, 'regions' | 'removalPolicy'>,
  deployed: DeployedRegions,
  dropRegions: readonly string[],
): void => {
  const regions = settings.regions ?? [];
  const recorded = deployed[stage];
  if (recorded === undefined) {
    if (settings.removalPolicy !== RemovalPolicy.DESTROY) {
      throw new Error(
        `Stage '${stage}' keeps its data, and ${DEPLOYED_REGIONS_FILE} has no record of its regions: add "${stage}": ${JSON.stringify(regions)} to it.`,
      );
    }
    if (dropRegions.length > 0) throw new Error(`Invalid dropRegions: stage '${stage}' has no recorded regions to drop; leave it out.`);
    return;
  }
  const added = regions.filter((region) => !recorded.includes(region));
  if (added.length > 0) {
    throw new Error(
      `Stage '${stage}': regions lists ${listed(added)}, which its record in ${DEPLOYED_REGIONS_FILE} does not: add ${added.length > 1 ? 'them' : 'it'} there first.`,
    );
  }
  const dropped = recorded.filter((region) => !regions.includes(region));
  const unapproved = dropped.filter((region) => !dropRegions.includes(region));
  if (unapproved.length > 0) {
    const [it, its] = unapproved.length > 1 ? ['them', 'their'] : ['it', 'its'];
    throw new Error(
      `Stage '${stage}': regions no longer lists ${listed(unapproved)}, and the deploy would delete ${its} replica of every table, with its data: ` +
        `to drop ${it} on purpose, turn off the deletion protection of ${its} replicas and deploy with -c dropRegions=${dropped.join(',')}, ` +
        `then take ${it} out of the stage's record in ${DEPLOYED_REGIONS_FILE}.`,
    );
  }
  const notDropped = dropRegions.filter((region) => !dropped.includes(region));
  if (notDropped.length > 0) {
    throw new Error(
      `Invalid dropRegions: stage '${stage}' does not drop ${listed(notDropped)} (its record in ${DEPLOYED_REGIONS_FILE}: ${recorded.join(', ') || 'one region'}); leave ${notDropped.length > 1 ? 'them' : 'it'} out.`,
    );
  }
};
