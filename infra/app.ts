#!/usr/bin/env node
/**
 * The CDK app: the stage named by `-c stage=<name>`, one PetStore-<stage> stack in each of its
 * regions (infra/stage-stacks.ts), checked by cdk-nag's AWS Solutions rules on every synth.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { checkDeployedRegions, parseDropRegions, readDeployedRegions } from './deployed-regions';
import { stageStacks } from './stage-stacks';
import { parseIgnoreReleaseAlarms, parseStageName, stageSettings } from './stages';

const app = new App();
/**
 * The stage and its settings (its regions checked against infra/deployed-regions.json), and whether
 * this deploy's release ignores its alarms; a bad value is the operator's to fix: its message
 * alone, no stack trace.
 */
const { stage, settings, ignoreReleaseAlarms } = (() => {
  try {
    const name = parseStageName(app.node.tryGetContext('stage'));
    const settings = stageSettings(name);
    // A region dropped from a kept stage's regions deletes its replicas: refused unless this deploy names it.
    checkDeployedRegions(name, settings, readDeployedRegions(), parseDropRegions(app.node.tryGetContext('dropRegions')));
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
stageStacks(app, {
  stage,
  settings,
  ignoreReleaseAlarms,
  account: process.env.CDK_DEFAULT_ACCOUNT,
  defaultRegion: process.env.CDK_DEFAULT_REGION,
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
