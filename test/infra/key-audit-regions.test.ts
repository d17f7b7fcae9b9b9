/**
 * The expiry sweep of a stage in several regions (the `global` stage's regions, infra/stages.ts),
 * at the construct level: its role may delete and count API keys in each of the stage's regions
 * and in no other (IAM simulation with AWS's authorization data), it is told those regions (as is
 * the key-audit function), and UsageKeysNearLimit watches the fullest region's count.
 */
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { AttributeType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { KeyAuditTrail } from '../../infra/constructs/key-audit';
import { usageKeysAlarmMetric } from '../../infra/constructs/monitoring';
import { homeRegionOf, stageSettings } from '../../infra/stages';
import { PROJECT_NAME } from '../../shared/project';
import { STAGE_NAME } from '../../shared/routes';
import { STAGE_REGIONS_VARIABLE, USAGE_KEYS_REGION_DIMENSION } from '../../shared/usage-key-release';
import {
  ACCOUNT,
  functionsOf,
  REGION as ELSEWHERE,
  rolePoliciesOf,
  simulate,
  templateResolver,
  type CfnTemplate,
  type IamRequest,
} from '../support/iam-simulation';
import { resourcesOf } from './synth';

const STAGE = 'global';
const settings = stageSettings(STAGE);
const regions = settings.regions ?? [];
const home = homeRegionOf(settings) ?? '';
const namePrefix = `${PROJECT_NAME}-${STAGE}`;

/** The audit trail alone, in a stack of the home region, for a stage in `stageRegions` (none: one region). */
const synthTrail = (stageRegions?: readonly string[]) => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Trail', { env: { account: ACCOUNT, region: home } });
  const apiKeys = new Table(stack, 'ApiKeys', {
    partitionKey: { name: 'keyHash', type: AttributeType.STRING },
    stream: StreamViewType.NEW_AND_OLD_IMAGES,
  });
  new KeyAuditTrail(stack, 'KeyAudit', {
    namePrefix,
    serviceName: namePrefix,
    apiKeys,
    apiStage: { restApiId: 'a1b2c3d4e5', stageName: STAGE_NAME },
    logRetention: RetentionDays.ONE_WEEK,
    removalPolicy: RemovalPolicy.DESTROY,
    runsSweep: true,
    regions: stageRegions,
  });
  return { app, template: Template.fromStack(stack) };
};

/** The environment of the trail's function named `<namePrefix>-<name>`. */
const environmentOf = (template: Template, name: 'keyExpiry' | 'keyAudit'): Record<string, unknown> => {
  const found = resourcesOf(template, 'AWS::Lambda::Function').find(
    ({ properties }) => properties.FunctionName === `${namePrefix}-${name}`,
  );
  return (found?.properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
};
const sweepEnvironment = (template: Template): Record<string, unknown> => environmentOf(template, 'keyExpiry');

describe(`the key-audit function of a stage in ${regions.join(', ')}`, () => {
  it("is told the stage's regions, its home first: a change stamped with none of them is the home region's to record", () => {
    expect(environmentOf(synthTrail(regions).template, 'keyAudit')[STAGE_REGIONS_VARIABLE]).toBe(regions.join(','));
  });

  it('of a stage in one region, is told no regions', () => {
    expect(environmentOf(synthTrail().template, 'keyAudit')).not.toHaveProperty(STAGE_REGIONS_VARIABLE);
  });
});

describe(`the expiry sweep of a stage in ${regions.join(', ')}`, () => {
  const { app, template } = synthTrail(regions);
  const json = template.toJSON() as CfnTemplate;
  const resolver = templateResolver(json);
  const functionId = functionsOf(json, `${namePrefix}-`).get('keyExpiry') ?? '';
  const { roleArn, policies } = rolePoliciesOf(json, resolver, functionId);
  const decision = async (action: string, resource: string) =>
    (await simulate({ function: 'keyExpiry', action, resource, context: {}, by: 'code' } satisfies IamRequest, roleArn, policies)).decision;

  it('is told the stage’s regions, its home first', () => {
    expect(sweepEnvironment(template)[STAGE_REGIONS_VARIABLE]).toBe(regions.join(','));
  });

  it.each(regions)('may delete any API key, and list the API keys, in %s', async (region) => {
    expect(await decision('apigateway:DELETE', `arn:aws:apigateway:${region}::/apikeys/ak-0123456789`)).toBe('Allowed');
    expect(await decision('apigateway:GET', `arn:aws:apigateway:${region}::/apikeys`)).toBe('Allowed');
  });

  it('may not touch the API keys of a region the stage does not run in, nor anything else of API Gateway', async () => {
    expect(regions).not.toContain(ELSEWHERE);
    expect(await decision('apigateway:DELETE', `arn:aws:apigateway:${ELSEWHERE}::/apikeys/ak-0123456789`)).not.toBe('Allowed');
    expect(await decision('apigateway:GET', `arn:aws:apigateway:${ELSEWHERE}::/apikeys`)).not.toBe('Allowed');
    for (const region of regions) {
      // Reading one key (its value), changing one, or deleting another resource: none is the sweep's.
      expect(await decision('apigateway:GET', `arn:aws:apigateway:${region}::/apikeys/ak-0123456789`)).not.toBe('Allowed');
      expect(await decision('apigateway:DELETE', `arn:aws:apigateway:${region}::/usageplans/up-1`)).not.toBe('Allowed');
      expect(await decision('apigateway:PATCH', `arn:aws:apigateway:${region}::/apikeys/ak-0123456789`)).not.toBe('Allowed');
    }
  });

  it('of a stage in one region, is told no regions', () => {
    expect(sweepEnvironment(synthTrail().template)).not.toHaveProperty(STAGE_REGIONS_VARIABLE);
  });

  it("leaves cdk-nag nothing unacknowledged on its role: each region's API keys are acknowledged with the reason", () => {
    const onSweep = new AwsSolutionsChecks()
      .validateScope(app)
      .violations.filter((violation) =>
        violation.violatingResources.some((resource) =>
          String((resource as { constructPath?: string }).constructPath).includes('ExpirySweep'),
        ),
      )
      .map((violation) => violation.ruleName);
    expect(onSweep).toEqual([]);
  });
});

describe('UsageKeysNearLimit of a stage in several regions', () => {
  it('watches the most API keys any of its regions holds: the maximum of each region’s UsageKeys', () => {
    const stack = new Stack(new App(), 'Alarm', { env: { account: ACCOUNT, region: home } });
    new Alarm(stack, 'UsageKeysNearLimit', { metric: usageKeysAlarmMetric(namePrefix, regions), threshold: 1, evaluationPeriods: 1 });
    const [alarm] = resourcesOf(Template.fromStack(stack), 'AWS::CloudWatch::Alarm');
    const metrics = (alarm?.properties.Metrics ?? []) as Array<{
      Id: string;
      Expression?: string;
      ReturnData?: boolean;
      MetricStat?: { Metric: { MetricName: string; Dimensions: Array<{ Name: string; Value: string }> } };
    }>;
    const [expression] = metrics.filter((metric) => metric.Expression !== undefined);
    const inputs = metrics.filter((metric) => metric.MetricStat !== undefined);
    expect(expression?.Expression).toBe(`MAX([${inputs.map(({ Id }) => Id).join(', ')}])`);
    expect(
      inputs.map(({ MetricStat }) => [
        MetricStat?.Metric.MetricName,
        MetricStat?.Metric.Dimensions.find(({ Name }) => Name === USAGE_KEYS_REGION_DIMENSION)?.Value,
      ]),
    ).toEqual(regions.map((region) => ['UsageKeys', region]));
  });
});
