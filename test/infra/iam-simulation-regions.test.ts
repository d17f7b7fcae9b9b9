/**
 * IAM with AWS's own authorization data, for the roles of every region's stack of each stage in
 * several regions: test/infra/iam-simulation-suite.ts.
 */
import { describeRoleChecks } from './iam-simulation-suite';
import { multiRegionStacks } from './synth';

describeRoleChecks(multiRegionStacks());
