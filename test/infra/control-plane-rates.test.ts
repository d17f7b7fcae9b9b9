/**
 * API Gateway's control-plane quotas, which CloudFormation does not space for us: CreateDomainName
 * (and DeleteDomainName) once every 30 seconds per account, a quota that cannot be raised
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html). A stack's custom
 * domains are made one after another, each after a pause at least that long that follows every
 * domain before it (infra/constructs/domain-order.ts); and a stage's stacks that make domains are
 * deployed one after another (infra/stage-stacks.ts), so that each stack's first pause follows the
 * stack before it. Broken, a first deploy of a stage in several regions fails on "Too Many Requests".
 */
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { DomainName, EndpointType } from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { CREATE_DOMAIN_NAME_INTERVAL_SECONDS, DEPLOY_PAUSE_TYPE, DomainCreationOrder } from '../../infra/constructs/domain-order';
import { DEFAULT_STAGE, stages } from '../../infra/stages';
import { PAUSE_SECONDS_PROPERTY } from '../../shared/deploy-pause';
import { FIXTURE_PREFIX } from '../support/fixture-names';
import { stageStacksOf, synthStage, TEST_ACCOUNT, TEST_REGION, type SynthesizedStage } from './synth';

/** The resource types whose create and delete are API Gateway's CreateDomainName and DeleteDomainName. */
const DOMAIN_TYPES = ['AWS::ApiGateway::DomainName', 'AWS::ApiGateway::DomainNameV2', 'AWS::ApiGatewayV2::DomainName'];

interface CfnResource {
  readonly Type: string;
  readonly DependsOn?: string | string[];
  readonly Properties?: Readonly<Record<string, unknown>>;
}
type Resources = Readonly<Record<string, CfnResource>>;

/** Every logical id a value refers to (Ref or Fn::GetAtt), at any depth. */
const referencedIds = (value: unknown): string[] =>
  [...JSON.stringify(value ?? null).matchAll(/\{"(?:Ref|Fn::GetAtt)":(?:\[)?"([A-Za-z0-9]+)"/g)].map((match) => match[1] ?? '');

/** Whether CloudFormation makes `later` only once `earlier` is made: a chain of DependsOn, Ref and Fn::GetAtt. */
const ordering = (resources: Resources) => {
  const direct = (id: string): string[] => {
    const resource = resources[id];
    if (!resource) return [];
    return [...[resource.DependsOn ?? []].flat(), ...referencedIds(resource.Properties)].filter((target) => target in resources);
  };
  const closure = new Map<string, ReadonlySet<string>>();
  const after = (id: string): ReadonlySet<string> => {
    const known = closure.get(id);
    if (known) return known;
    const reached = new Set<string>();
    const pending = direct(id);
    while (pending.length > 0) {
      const next = pending.pop() ?? '';
      if (reached.has(next)) continue;
      reached.add(next);
      pending.push(...direct(next));
    }
    closure.set(id, reached);
    return reached;
  };
  return (later: string, earlier: string) => after(later).has(earlier);
};

/** What breaks the quota in a template: two domains made at once, or a domain made less than the quota's interval after another. */
const domainQuotaFindings = (resources: Resources): string[] => {
  const comesAfter = ordering(resources);
  const domains = Object.keys(resources).filter((id) => DOMAIN_TYPES.includes(resources[id]?.Type ?? ''));
  const pauses = Object.keys(resources).filter(
    (id) =>
      resources[id]?.Type === DEPLOY_PAUSE_TYPE &&
      Number(resources[id]?.Properties?.[PAUSE_SECONDS_PROPERTY]) >= CREATE_DOMAIN_NAME_INTERVAL_SECONDS,
  );
  const findings: string[] = [];
  domains.forEach((domain, position) => {
    for (const other of domains.slice(position + 1))
      if (!comesAfter(domain, other) && !comesAfter(other, domain)) findings.push(`${domain} and ${other} are made at once`);
    const earlier = domains.filter((other) => other !== domain && comesAfter(domain, other));
    const paused = pauses.some((pause) => comesAfter(domain, pause) && earlier.every((other) => comesAfter(pause, other)));
    if (!paused)
      findings.push(
        `${domain} follows no pause of ${CREATE_DOMAIN_NAME_INTERVAL_SECONDS} s or more after ${earlier.join(', ') || 'its stack began'}`,
      );
  });
  return findings;
};

const resourcesOfStack = ({ template }: Pick<SynthesizedStage, 'template'>): Resources =>
  (template.toJSON() as { Resources: Resources }).Resources;
const hasDomains = (synthesized: SynthesizedStage) =>
  Object.values(resourcesOfStack(synthesized)).some(({ Type }) => DOMAIN_TYPES.includes(Type));

/** Every stage's stacks, the default stage's included, and a stage in one region with a custom domain. */
const stageNames = [...new Set([...Object.keys(stages), DEFAULT_STAGE])];
const stacksByStage: Array<[string, SynthesizedStage[]]> = [
  ...stageNames.map((stage): [string, SynthesizedStage[]] => [stage, stageStacksOf(stage)]),
  [
    'a stage in one region with a custom domain',
    [
      synthStage(`${FIXTURE_PREFIX}-domain`, {
        customDomain: { domainName: 'pets.example.com', certificateArn: `arn:aws:acm:${TEST_REGION}:${TEST_ACCOUNT}:certificate/abc` },
      }),
    ],
  ],
];
const stacks = stacksByStage.flatMap(([stage, synthesized]) =>
  synthesized.map((one): [string, SynthesizedStage] => [`${stage} in ${one.stack.region}`, one]),
);

describe.each(stacks)('%s: its custom domains hold against CreateDomainName’s quota', (_name, synthesized) => {
  it('makes its custom domains one after another, each after a pause of the quota’s interval or more', () => {
    expect(domainQuotaFindings(resourcesOfStack(synthesized))).toEqual([]);
  });
});

describe('the stacks of a stage that make custom domains', () => {
  it('are deployed one after another, so that no two stacks make domains at once', () => {
    const making = stacksByStage.map(([stage, synthesized]) => [stage, synthesized.filter(hasDomains).map(({ stack }) => stack)] as const);
    // A stage in several regions makes domains in each.
    expect(making.some(([, stacksMaking]) => stacksMaking.length > 1)).toBe(true);
    for (const [stage, stacksMaking] of making) {
      const dependsOn = (later: Stack, earlier: Stack): boolean =>
        later.dependencies.some((direct) => direct === earlier || dependsOn(direct, earlier));
      stacksMaking.forEach((stack, position) => {
        for (const other of stacksMaking.slice(position + 1))
          expect(dependsOn(stack, other) || dependsOn(other, stack), `${stage}: ${stack.region} and ${other.region}`).toBe(true);
      });
    }
  });
});

describe('the check of the quota', () => {
  /** A stack with `count` regional custom domains, in the order DomainCreationOrder gives them or in none; the first with `certificate`. */
  const domainsStack = (count: number, ordered: boolean, firstCertificate = 'abc'): Resources => {
    const stack = new Stack(
      new App({ context: { 'aws:cdk:bundling-stacks': [] }, builtinCloudFormationValidation: false }),
      'FixtureStack',
      {
        env: { account: TEST_ACCOUNT, region: TEST_REGION },
      },
    );
    const certificate = Certificate.fromCertificateArn(stack, 'Certificate', `arn:aws:acm:${TEST_REGION}:${TEST_ACCOUNT}:certificate/abc`);
    const first = Certificate.fromCertificateArn(
      stack,
      'First',
      `arn:aws:acm:${TEST_REGION}:${TEST_ACCOUNT}:certificate/${firstCertificate}`,
    );
    const domains = Array.from(
      { length: count },
      (_, index) =>
        new DomainName(stack, `Domain${index}`, {
          domainName: `d${index}.example.com`,
          certificate: index === 0 ? first : certificate,
          endpointType: EndpointType.REGIONAL,
        }),
    );
    if (ordered) {
      new DomainCreationOrder(stack, 'Order', {
        domains,
        namePrefix: `${FIXTURE_PREFIX}-stack`,
        serviceName: `${FIXTURE_PREFIX}-stack`,
        logRetention: RetentionDays.ONE_DAY,
        removalPolicy: RemovalPolicy.DESTROY,
      });
    }
    return (Template.fromStack(stack).toJSON() as { Resources: Resources }).Resources;
  };

  it('finds two domains made at once, and a domain with no pause before it', () => {
    const findings = domainQuotaFindings(domainsStack(2, false));
    expect(findings.filter((finding) => finding.includes('made at once'))).toHaveLength(1);
    expect(findings.filter((finding) => finding.includes('follows no pause'))).toHaveLength(2);
  });

  it('finds a pause shorter than the quota’s interval', () => {
    const resources = domainsStack(2, true);
    const shortened = Object.fromEntries(
      Object.entries(resources).map(([id, resource]) => [
        id,
        resource.Type === DEPLOY_PAUSE_TYPE
          ? { ...resource, Properties: { ...resource.Properties, [PAUSE_SECONDS_PROPERTY]: CREATE_DOMAIN_NAME_INTERVAL_SECONDS - 1 } }
          : resource,
      ]),
    );
    expect(domainQuotaFindings(shortened)).toHaveLength(2);
  });

  it('pauses again, on an update, beside a domain that changes (UpdateDomainName is held to the same 30 s), and only there', () => {
    const pausesOf = (resources: Resources) =>
      Object.entries(resources)
        .filter(([, { Type }]) => Type === DEPLOY_PAUSE_TYPE)
        .map(([, { Properties }]) => JSON.stringify(Properties));
    const [before, between, after] = pausesOf(domainsStack(3, true));
    const changed = pausesOf(domainsStack(3, true, 'renewed'));
    // The first domain's certificate changed: its own pause and the one after it send an update; the last does not.
    expect(changed).toHaveLength(3);
    expect(changed[0]).not.toBe(before);
    expect(changed[1]).not.toBe(between);
    expect(changed[2]).toBe(after);
  });

  it('passes any number of domains in DomainCreationOrder, one pause before each', () => {
    const resources = domainsStack(3, true);
    expect(Object.values(resources).filter(({ Type }) => Type === DEPLOY_PAUSE_TYPE)).toHaveLength(3);
    expect(domainQuotaFindings(resources)).toEqual([]);
  });
});
