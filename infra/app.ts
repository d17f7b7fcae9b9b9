#!/usr/bin/env node
/**
 * The CDK app: one PetStore-<stage> stack, for the stage named by `-c stage=<name>`, checked by
 * cdk-nag's AWS Solutions rules on every synth.
 */
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { stackName } from '../shared/stack';
import { PetStoreStack } from './pet-store-stack';
import { parseStageName, stageSettings } from './stages';

const app = new App();
const stage = parseStageName(app.node.tryGetContext('stage'));
new PetStoreStack(app, stackName(stage), {
  stage,
  settings: stageSettings(stage),
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
