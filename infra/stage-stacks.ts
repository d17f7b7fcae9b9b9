/**
 * A stage's stacks: one PetStore-<stage> stack, in the deployer's region, for a stage in one region;
 * for a stage with regions, one in each, all named PetStore-<stage> (stack names are per region),
 * each construct id `PetStore-<stage>-<region>`. The other regions' stacks depend on the home
 * region's, which defines the global tables they import: `cdk deploy --all` deploys it first.
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
  const home = stacks.find((stack) => stack.region === homeRegionOf(settings));
  if (home)
    for (const stack of stacks)
      if (stack !== home) stack.addStackDependency(home, 'it imports the replicas of the global tables the home region defines');
  return stacks;
};
