/**
 * A stage's stacks: one PetStore-<stage> stack, in the deployer's region, for a stage in one region;
 * for a stage with regions, one in each, all named PetStore-<stage> (stack names are per region),
 * each construct id `PetStore-<stage>-<region>`. The home region's stack, which defines the global
 * tables the others import, comes first; each other region's depends on the one before it, so
 * `cdk deploy --all` deploys one region at a time, in the order of the stage's regions.
 */
import type { App } from 'aws-cdk-lib';
import { stackName } from '../shared/stack';
import { PetStoreStack, type PetStoreStackProps } from './pet-store-stack';
import { homeRegionOf, type StageSettings } from './stages';

export interface StageStacksProps extends Pick<PetStoreStackProps, 'ignoreReleaseAlarms'> {
  readonly stage: string;
  readonly settings: StageSettings;
  /** The account to deploy to (CDK_DEFAULT_ACCOUNT); none: the deployer's, at deploy. */
  readonly account?: string;
  /** The region of a stage in one region (CDK_DEFAULT_REGION): a stage with regions ignores it. */
  readonly defaultRegion?: string;
}

/** The construct id of a stage's stack in one of its regions: unique in the app, as stack names are not. */
export const regionalStackId = (stage: string, region: string): string => `${stackName(stage)}-${region}`;

export const stageStacks = (app: App, { stage, settings, account, defaultRegion, ...deploy }: StageStacksProps): PetStoreStack[] => {
  const regions = settings.regions ?? [];
  if (regions.length === 0) {
    return [new PetStoreStack(app, stackName(stage), { stage, settings, ...deploy, env: { account, region: defaultRegion } })];
  }
  const stacks = regions.map(
    (region) =>
      new PetStoreStack(app, regionalStackId(stage, region), {
        stage,
        settings,
        ...deploy,
        stackName: stackName(stage),
        env: { account, region },
      }),
  );
  chainReleases(stacks, homeRegionOf(settings));
  return stacks;
};

/**
 * The home region's stack first, then each other region's after the one before it in the stage's
 * regions: the home region's defines the global tables the others import, and a chain releases
 * one region at a time whatever `cdk deploy --concurrency` says, so that a release that rolls back
 * stops the deploy before the next region (docs/deploy.md, Releasing to prod).
 */
const chainReleases = (stacks: readonly PetStoreStack[], homeRegion: string | undefined): void => {
  const home = stacks.find((stack) => stack.region === homeRegion);
  if (!home) return;
  const ordered = [home, ...stacks.filter((stack) => stack !== home)];
  ordered.forEach((stack, position) => {
    const previous = ordered[position - 1];
    if (!previous) return;
    stack.addStackDependency(
      previous,
      previous === home
        ? 'it imports the replicas of the global tables the home region defines'
        : `regions release one at a time, after ${previous.region}`,
    );
  });
};
