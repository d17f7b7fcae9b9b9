/**
 * IAM with AWS's own authorization data, for the roles of the stages in one region (staging and
 * prod): test/infra/iam-simulation-suite.ts. Every region's stack of a stage in several:
 * iam-simulation-regions.test.ts.
 */
import { describeRoleChecks } from './iam-simulation-suite';
import { synthStage, type SynthesizedStage } from './synth';

describeRoleChecks((['staging', 'prod'] as const).map((stage): [string, SynthesizedStage] => [stage, synthStage(stage)]));
