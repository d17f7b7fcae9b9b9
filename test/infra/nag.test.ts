/**
 * cdk-nag's AWS Solutions checks: no unacknowledged error or warning on any stage shape, and
 * every acknowledgement says why, specifically.
 */
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Table, AttributeType } from 'aws-cdk-lib/aws-dynamodb';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { keylessMethods, multiRegionStacks, synthStage, type SynthesizedStage } from './synth';

/** The app's findings; with a stack, those of its resources only (an app holds a stage's every region's stack). */
const findings = (app: App, stack?: Stack) =>
  new AwsSolutionsChecks()
    .validateScope(app)
    .violations.map((violation) => ({
      rule: violation.ruleName,
      severity: violation.severity,
      resources: violation.violatingResources.map((resource) => (resource as { constructPath?: string }).constructPath),
    }))
    .filter(({ resources }) => stack === undefined || resources.some((path) => path?.startsWith(`${stack.node.path}/`)));

const acknowledgementsIn = (scope: IConstruct) =>
  scope.node
    .findAll()
    .flatMap((construct) => construct.node.metadata)
    .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
    .flatMap((entry) => Object.entries(entry.data as Record<string, string>))
    .map(([key, reason]) => ({ rule: key.replace(/^Annotation::/, ''), reason }));

const shapes: Record<string, () => SynthesizedStage> = {
  staging: () => synthStage('staging'),
  prod: () => synthStage('prod'),
  'a stage with every option set': () =>
    synthStage('loaded', {
      corsAllowedOrigins: ['https://app.example.com', 'https://admin.example.com'],
      alarmEmail: 'ops@example.com',
      customDomain: { domainName: 'pets.example.com', certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' },
      webAclArn: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/shared/abc',
      reservedConcurrency: { authorizer: 200, eachOperation: 150 },
    }),
  // Every region's stack of a stage in several regions: all are in one app, so each one's own findings.
  ...Object.fromEntries(multiRegionStacks().map(([name, synthesized]) => [name, () => synthesized])),
};

describe.each(Object.entries(shapes))('cdk-nag on %s', (name, synthesize) => {
  const { app, stack, settings } = synthesize();

  it('finds nothing that is not acknowledged, error or warning', () => {
    expect(findings(app, stack)).toEqual([]);
  });

  it('acknowledges only specific rules, each with a specific reason', () => {
    const acknowledged = acknowledgementsIn(stack);
    expect(acknowledged.length).toBeGreaterThan(0);
    for (const { rule, reason } of acknowledged) {
      expect(rule).toMatch(/^AwsSolutions-[A-Z]+\d+(\[.+\])?$/);
      expect(reason.length).toBeGreaterThan(60);
    }
    const rules = acknowledged.map(({ rule }) => rule);
    expect(new Set(rules)).toEqual(
      new Set([
        'AwsSolutions-IAM5[Resource::*]',
        // The expiry sweep's DeleteApiKey of the usage keys no live key uses, whose ids are made at run
        // time: in the stack's region, or in each region of a stage in several.
        ...(stack.keyAudit.expirySweep
          ? (settings.regions ?? ['<AWS::Region>']).map(
              (region) => `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:apigateway:${region}::/apikeys/*]`,
            )
          : []),
        'AwsSolutions-APIG2',
        'AwsSolutions-COG4',
        // The keyless health route's method, which has no authorizer (checked below to be on it only).
        'AwsSolutions-APIG4',
        'AwsSolutions-SQS3',
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        // With a web ACL the WAF rule is met, not acknowledged.
        ...(name === 'a stage with every option set' ? [] : ['AwsSolutions-APIG3']),
        // A gradual release (staging's and prod's canary): CodeDeploy's grant of the pre-traffic
        // hook, and the hook's of any version of each function it checks.
        ...(stack.release
          ? [stack.release.preTrafficHook, ...stack.functions.operations.values(), stack.functions.authorizer].map(
              (fn) => `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(fn.function.node.defaultChild as CfnFunction)}.Arn>:*]`,
            )
          : []),
      ]),
    );
  });
});

describe('the keyless routes', () => {
  const { stack } = synthStage('staging');

  it('are the only methods acknowledged for having no authorization (APIG4), each with its reason', () => {
    // Each construct's own acknowledgements, not its children's.
    const own = (construct: IConstruct) =>
      construct.node.metadata
        .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((entry) => Object.entries(entry.data as Record<string, string>));
    const acknowledgedOn = stack.node
      .findAll()
      .filter((construct) => own(construct).some(([rule, reason]) => rule.endsWith('AwsSolutions-APIG4') && reason.length > 60))
      .map((construct) => construct.node.path.split('/').slice(-2).join(' '));
    expect(acknowledgedOn.sort()).toEqual(keylessMethods.map((method) => method.replace(/^(\w+) \/(.*)$/, '$2 $1')).sort());
  });
});

describe('the checks themselves', () => {
  it('report a resource that breaks a rule, so a clean report means something', () => {
    const app = new App();
    const stack = new Stack(app, 'Careless');
    new Table(stack, 'NoRecovery', { partitionKey: { name: 'id', type: AttributeType.STRING } });
    expect(findings(app)).toContainEqual(expect.objectContaining({ rule: 'AwsSolutions-DDB3' }));
    // And a stack's findings are its own: another stack's resource is not reported with it.
    const careful = new Stack(app, 'Careful');
    new Table(careful, 'Recovered', {
      partitionKey: { name: 'id', type: AttributeType.STRING },
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    });
    expect(findings(app, stack)).toContainEqual(expect.objectContaining({ rule: 'AwsSolutions-DDB3' }));
    expect(findings(app, careful)).toEqual([]);
  });
});
