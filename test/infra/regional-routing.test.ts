/**
 * A stage in several regions, one region's stack: its custom domains, its Route 53 health check
 * of GET /v1/health through the region's own name, its latency and simple alias records; the
 * template passes cfn-lint; and the stage settings refuse a domain that lacks a region's certificate.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { HEALTH_CHECK, HEALTH_CHECK_SEARCH_STRING } from '../../infra/constructs/regional-routing';
import { PetStoreStack } from '../../infra/pet-store-stack';
import { isRegionalCustomDomain, regionalDomainName, stageSettings, type RegionalCustomDomain } from '../../infra/stages';
import { BASE_PATH, routeOf, STAGE_NAME } from '../../shared/routes';
import { stackName, stackOutputs } from '../../shared/stack';
import { runCommand } from '../support/command';
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

  it("checks GET /v1/health over HTTPS through the region's own name, for its body, every 10 s, unhealthy after 3 failures", () => {
    const [check, ...others] = resourcesOf(template, 'AWS::Route53::HealthCheck');
    expect(others).toEqual([]);
    expect(check?.properties.HealthCheckConfig).toMatchObject({
      Type: 'HTTPS_STR_MATCH',
      FullyQualifiedDomainName: ownName,
      Port: 443,
      ResourcePath: `${BASE_PATH}${routeOf('getHealth').path}`,
      SearchString: '{"status":"ok"}',
      EnableSNI: true,
      RequestInterval: HEALTH_CHECK.intervalSeconds,
      FailureThreshold: HEALTH_CHECK.failureThreshold,
    });
    // Not inverted: an operator inverts it by hand to take the region out (docs/operations.md, Failover and failback).
    expect(check?.properties.HealthCheckConfig).not.toMatchObject({ Inverted: true });
    expect(HEALTH_CHECK_SEARCH_STRING).toBe('{"status":"ok"}');
  });

  it("answers the stage's domain by latency (A and AAAA), this region's only while its health check passes, and its own name simply", () => {
    const records = resourcesOf(template, 'AWS::Route53::RecordSet').map(({ properties }) => properties);
    const [check] = resourcesOf(template, 'AWS::Route53::HealthCheck');
    const latency = records.filter((record) => record.Name === `${domain.domainName}.`);
    expect(latency.map((record) => record.Type).sort()).toEqual(['A', 'AAAA']);
    for (const record of latency) {
      expect(record).toMatchObject({
        HostedZoneId: domain.hostedZoneId,
        SetIdentifier: region,
        Region: region,
        HealthCheckId: { Ref: check?.logicalId },
        AliasTarget: { EvaluateTargetHealth: true },
      });
    }
    const own = records.filter((record) => record.Name === `${ownName}.`);
    expect(own.map((record) => record.Type).sort()).toEqual(['A', 'AAAA']);
    for (const record of own) {
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

  const cfnLintInstalled = spawnSync('cfn-lint', ['--version'], { stdio: 'ignore' }).status === 0;
  it.skipIf(!cfnLintInstalled)('passes cfn-lint without an error', { timeout: 120_000 }, async () => {
    const directory = mkdtempSync(join(tmpdir(), 'pet-store-routing-'));
    try {
      const file = join(directory, 'template.json');
      writeFileSync(file, JSON.stringify(template.toJSON()));
      const { status, stdout, stderr } = await runCommand(
        'cfn-lint',
        ['--format', 'json', '--regions', region, '--', file],
        {},
        { timeout: 120_000 },
      );
      expect(status === null || (status & 1) === 1, stderr.slice(0, 500)).toBe(false);
      const errors = (JSON.parse(stdout) as Array<{ Level: string; Rule: { Id: string }; Message: string }>).filter(
        (match) => match.Level === 'Error',
      );
      expect(errors.map((match) => `${match.Rule.Id}: ${match.Message}`)).toEqual([]);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
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
