#!/usr/bin/env node
/**
 * The CDK app: one PetStore-<stage> stack, for the stage named by `-c stage=<name>`, checked by
 * cdk-nag's AWS Solutions rules on every synth.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { stackName } from '../shared/stack';
import { PetStoreStack } from './pet-store-stack';
import { parseIgnoreReleaseAlarms, parseStageName, stageRegionIndex, stageSettings } from './stages';

const app = new App();
/**
 * The stage and its settings, and whether this deploy's release ignores its alarms; a bad value is
 * the operator's to fix: its message alone, no stack trace.
 */
const { stage, settings, ignoreReleaseAlarms } = (() => {
  try {
    const name = parseStageName(app.node.tryGetContext('stage'));
    const settings = stageSettings(name);
    // The stack checks this too; here a region the stage does not run in fails in one line.
    stageRegionIndex(name, settings, process.env.CDK_DEFAULT_REGION);
    return {
      stage: name,
      settings,
      ignoreReleaseAlarms: parseIgnoreReleaseAlarms(app.node.tryGetContext('ignoreReleaseAlarms')),
    };
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    return process.exit(1);
  }
})();
new PetStoreStack(app, stackName(stage), {
  stage,
  settings,
  ignoreReleaseAlarms,
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
