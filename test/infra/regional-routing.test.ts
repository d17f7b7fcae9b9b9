/**
 * A stage in several regions, one region's stack: its custom domains; its Route 53 health check,
 * which follows the region's health probe alarm and calls nothing public; the probe, run each
 * minute, allowed only its reads; its latency and simple alias records, each aliasing the right
 * API Gateway domain; and the stage settings refuse a domain that lacks a region's certificate.
 * cfn-lint checks every region's template in test/infra/cfn-lint.test.ts.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { HEALTH_PROBE_INTERVAL } from '../../infra/constructs/health-probe';
import { tableAccess } from '../../infra/constructs/pet-store-functions';
import { PetStoreStack } from '../../infra/pet-store-stack';
import { isRegionalCustomDomain, regionalDomainName, stageSettings, type RegionalCustomDomain } from '../../infra/stages';
import { PROJECT_NAME } from '../../shared/project';
import { routeOf, STAGE_NAME } from '../../shared/routes';
import { stackName, stackOutputs } from '../../shared/stack';
import { resourcesOf } from './synth';

const STAGE = 'global';
const settings = stageSettings(STAGE);
const regions = settings.regions ?? [];
const domain = settings.customDomain as RegionalCustomDomain;
/** A region that is not the home region, so the stack is no special case. */
const region = regions[1] ?? '';

const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false });
const stack = new PetStoreStack(app, `${stackName(STAGE)}-${region}`, {
  stage: STAGE,
  settings,
  env: { account: '111111111111', region },
});
const template = Template.fromStack(stack);
const ownName = regionalDomainName(domain.domainName, region);

describe(`the ${STAGE} stage's routing, in ${region}`, () => {
  it('has example values for a domain in every region, so that it synthesizes offline', () => {
    expect(isRegionalCustomDomain(domain)).toBe(true);
    expect(Object.keys(domain.certificateArns).sort()).toEqual([...regions].sort());
    expect(regions.length).toBeGreaterThan(1);
  });

  it("serves the stage's domain and the region's own name, each with this region's certificate, TLS 1.2, dualstack, mapped to the stage v1", () => {
    const domains = resourcesOf(template, 'AWS::ApiGateway::DomainName').map(({ properties }) => properties);
    expect(domains.map((properties) => properties.DomainName).sort()).toEqual([domain.domainName, ownName].sort());
    for (const properties of domains) {
      expect(properties).toMatchObject({
        RegionalCertificateArn: domain.certificateArns[region],
        SecurityPolicy: 'TLS_1_2',
        EndpointConfiguration: { Types: ['REGIONAL'], IpAddressType: 'dualstack' },
      });
    }
    const mappings = resourcesOf(template, 'AWS::ApiGateway::BasePathMapping').map(({ properties }) => properties);
    expect(mappings).toHaveLength(2);
    for (const mapping of mappings) expect(mapping.BasePath).toBe(STAGE_NAME);
  });

  const [probeAlarm] = resourcesOf(template, 'AWS::CloudWatch::Alarm').filter(
    ({ properties }) => properties.MetricName === 'DatabaseReadable',
  );

  it("checks the region by its health probe's alarm (CLOUDWATCH_METRIC), calling nothing public, unhealthy without data", () => {
    const [check, ...others] = resourcesOf(template, 'AWS::Route53::HealthCheck');
    expect(others).toEqual([]);
    const config = check?.properties.HealthCheckConfig as Record<string, unknown>;
    expect(config).toEqual({
      Type: 'CLOUDWATCH_METRIC',
      AlarmIdentifier: { Name: { Ref: probeAlarm?.logicalId }, Region: region },
      InsufficientDataHealthStatus: 'Unhealthy',
      // Not inverted, and a deploy resets a hand inversion: an operator drains a region with npm run region (docs).
      Inverted: false,
    });
    // Listed in the console by the region's own name, which the runbook finds it by.
    expect(check?.properties.HealthCheckTags).toContainEqual({ Key: 'Name', Value: ownName });
    // Nothing Route 53's checkers would call: no address, name, port or path.
    for (const field of ['FullyQualifiedDomainName', 'IPAddress', 'Port', 'ResourcePath', 'SearchString']) {
      expect(config).not.toHaveProperty(field);
    }
  });

  it("alarms when the minute's lowest DatabaseReadable, by the stage's service, is below 1, or when the minute has none", () => {
    expect(probeAlarm?.properties).toMatchObject({
      Namespace: 'PetStore',
      MetricName: 'DatabaseReadable',
      // The stage's own service, as every function of the stage writes its metrics under.
      Dimensions: [{ Name: 'service', Value: `${PROJECT_NAME}-${STAGE}` }],
      Statistic: 'Minimum',
      Period: 60,
      EvaluationPeriods: 1,
      DatapointsToAlarm: 1,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      TreatMissingData: 'breaching',
    });
    // Standard resolution and a plain statistic: what Route 53 can follow.
    expect(probeAlarm?.properties).not.toHaveProperty('ExtendedStatistic');
    expect(probeAlarm?.properties).not.toHaveProperty('Metrics');
  });

  it('runs the probe each minute, through its live alias, late runs dropped', () => {
    const probe = resourcesOf(template, 'AWS::Lambda::Function').find(({ properties }) =>
      String(properties.FunctionName).endsWith('-healthProbe'),
    );
    const alias = resourcesOf(template, 'AWS::Lambda::Alias').find(
      ({ properties }) => (properties.FunctionName as { Ref?: string }).Ref === probe?.logicalId,
    );
    const rules = resourcesOf(template, 'AWS::Events::Rule').filter(({ properties }) =>
      (properties.Targets as Array<{ Arn: unknown }>).some(
        (target) => JSON.stringify(target.Arn) === JSON.stringify({ Ref: alias?.logicalId }),
      ),
    );
    expect(rules.map(({ properties }) => properties)).toEqual([
      expect.objectContaining({
        ScheduleExpression: `rate(${HEALTH_PROBE_INTERVAL.toMinutes()} minute)`,
        State: 'ENABLED',
        Targets: [expect.objectContaining({ RetryPolicy: { MaximumEventAgeInSeconds: 60, MaximumRetryAttempts: 2 } })],
      }),
    ]);
    expect(HEALTH_PROBE_INTERVAL.toSeconds()).toBe(60);
  });

  it("allows the probe the health route's reads and nothing else: its metric is a log line", () => {
    expect(tableAccess.healthProbe).toEqual(routeOf('getHealth').tableAccess);
    for (const grant of tableAccess.healthProbe) {
      expect(grant).toMatchObject({ actions: ['dynamodb:GetItem'], attributes: [expect.any(String)] });
    }
  });

  it("answers the stage's domain by latency (A and AAAA), this region's only while its health check passes, and its own name simply", () => {
    const records = resourcesOf(template, 'AWS::Route53::RecordSet').map(({ properties }) => properties);
    const [check] = resourcesOf(template, 'AWS::Route53::HealthCheck');
    const latency = records.filter((record) => record.Name === `${domain.domainName}.`);
    expect(latency.map((record) => record.Type).sort()).toEqual(['A', 'AAAA']);
    // Each alias names the API Gateway domain of its name, by that domain's regional target.
    const domainIds = new Map(
      resourcesOf(template, 'AWS::ApiGateway::DomainName').map(({ logicalId, properties }) => [properties.DomainName, logicalId]),
    );
    const aliasOf = (name: string) => ({
      DNSName: { 'Fn::GetAtt': [domainIds.get(name), 'RegionalDomainName'] },
      HostedZoneId: { 'Fn::GetAtt': [domainIds.get(name), 'RegionalHostedZoneId'] },
    });
    for (const record of latency) {
      expect(record).toMatchObject({
        HostedZoneId: domain.hostedZoneId,
        SetIdentifier: region,
        Region: region,
        HealthCheckId: { Ref: check?.logicalId },
        AliasTarget: { ...aliasOf(domain.domainName), EvaluateTargetHealth: true },
      });
    }
    const own = records.filter((record) => record.Name === `${ownName}.`);
    expect(own.map((record) => record.Type).sort()).toEqual(['A', 'AAAA']);
    for (const record of own) {
      expect(record).toMatchObject({ HostedZoneId: domain.hostedZoneId, AliasTarget: aliasOf(ownName) });
      expect(record).not.toHaveProperty('SetIdentifier');
      expect(record).not.toHaveProperty('HealthCheckId');
    }
  });

  it("outputs the stage's URL and the region's own", () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs[stackOutputs.apiUrl]?.Value).toBe(`https://${domain.domainName}/${STAGE_NAME}`);
    expect(outputs[stackOutputs.regionalApiUrl]?.Value).toBe(`https://${ownName}/${STAGE_NAME}`);
  });

  it('gives cdk-nag nothing to find that is not acknowledged', () => {
    const found = new AwsSolutionsChecks().validateScope(app).violations.map((violation) => `${violation.ruleName} ${violation.severity}`);
    expect(found).toEqual([]);
  });
});

describe("a stage's custom domain, checked at synth", () => {
  const withDomain =
    (customDomain: object, extra: object = {}) =>
    () =>
      stageSettings('fixture', { fixture: { ...extra, customDomain } as never });
  const regional = { domainName: 'api.example.com', hostedZoneId: 'Z0EXAMPLE', zoneName: 'example.com' };

  it('refuses a stage in several regions without a certificate for one of them, in one line naming it', () => {
    expect(
      withDomain(
        { ...regional, certificateArns: { 'us-east-1': 'arn:aws:acm:us-east-1:111111111111:certificate/a' } },
        { regions: ['us-east-1', 'us-east-2'] },
      ),
    ).toThrow(
      "Stage 'fixture': customDomain.certificateArns has no certificate for us-east-2: each region serves api.example.com with its own (ACM is regional).",
    );
  });

  it('refuses a single certificate for a stage in several regions, and certificates by region for a stage in one', () => {
    expect(withDomain({ domainName: 'api.example.com', certificateArn: 'arn:x' }, { regions: ['us-east-1', 'us-east-2'] })).toThrow(
      /needs certificateArns \(one per region: us-east-1, us-east-2\), hostedZoneId and zoneName/,
    );
    expect(withDomain({ ...regional, certificateArns: { 'us-east-1': 'arn:x' } })).toThrow(
      /gives certificateArns, for a stage with regions/,
    );
  });

  it('refuses a domain outside its hosted zone', () => {
    expect(
      withDomain({ ...regional, domainName: 'api.example.org', certificateArns: { 'us-east-1': 'arn:x' } }, { regions: ['us-east-1'] }),
    ).toThrow("Stage 'fixture': customDomain.domainName api.example.org is not in the hosted zone example.com.");
  });

  it("keeps a one-region stage's domain as it is", () => {
    expect(withDomain({ domainName: 'pets.example.com', certificateArn: 'arn:x' })().customDomain).toEqual({
      domainName: 'pets.example.com',
      certificateArn: 'arn:x',
    });
  });
});
