/**
 * RegionalRouting: how clients reach this region of a stage that runs in several. The stage's
 * domain (`api.example.com`) is served by every region's API Gateway (a regional custom domain of
 * the same name, made by PetStoreApi with this region's certificate); here, this region's own name
 * (`us-east-2.api.example.com`), a Route 53 health check of this region's `GET /v1/health` through
 * that name, and this region's records: a latency alias (A and AAAA) of the stage's domain, set
 * apart by the region and answered only while the health check passes, and a simple alias of the
 * region's own name. Route 53 answers each client with the healthy region nearest to it
 * (https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/routing-policy-latency.html).
 */
import { Duration } from 'aws-cdk-lib';
import { CfnDomainName, DomainName, EndpointType, SecurityPolicy, type IDomainName, type IRestApi } from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AaaaRecord,
  ARecord,
  HealthCheck,
  HealthCheckType,
  HostedZone,
  RecordTarget,
  type IAliasRecordTarget,
  type IHealthCheck,
  type IHostedZone,
} from 'aws-cdk-lib/aws-route53';
import { ApiGatewayDomain } from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';
import type { Health } from '../../shared/models';
import { BASE_PATH, routeOf, STAGE_NAME } from '../../shared/routes';
import { regionalDomainName, type RegionalCustomDomain } from '../stages';

/**
 * The health check's cadence. Every 10 s (Route 53's fast interval) from each checker, and
 * unhealthy after 3 failures in a row: a region that cannot read its tables is out of the stage's
 * answers about 30 s after it starts failing, and back about 30 s after it recovers. Route 53's
 * checkers (about 15 per check) then send the health route about 1.5 requests a second, far below
 * its method throttle, and each execution environment reads the tables at most once in 5 s.
 */
export const HEALTH_CHECK = { intervalSeconds: 10, failureThreshold: 3 } as const;

/** What the check looks for in the first 5,120 bytes of the answer, besides a 2xx: the health route's own body. */
export const HEALTH_CHECK_SEARCH_STRING = JSON.stringify({ status: 'ok' } satisfies Health);

export interface RegionalRoutingProps {
  /** The REST API of this region: its own name maps to its stage. */
  readonly api: IRestApi;
  /** The API Gateway custom domain of the stage's domain in this region (PetStoreApi's). */
  readonly stageDomain: IDomainName;
  readonly domain: RegionalCustomDomain;
  /** This stack's region, a concrete one: it names the records and the region's own name. */
  readonly region: string;
}

export class RegionalRouting extends Construct {
  /** This region's own name, `<region>.<domainName>`. */
  readonly regionalName: string;
  readonly healthCheck: HealthCheck;

  constructor(scope: Construct, id: string, { api, stageDomain, domain, region }: RegionalRoutingProps) {
    super(scope, id);
    this.regionalName = regionalDomainName(domain.domainName, region);
    const certificate = Certificate.fromCertificateArn(this, 'Certificate', domain.certificateArns[region] ?? '');
    const regionalDomain = new DomainName(this, 'RegionalDomain', {
      domainName: this.regionalName,
      certificate,
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
      mapping: api,
      basePath: STAGE_NAME,
    });
    // IPv6 clients too (the AAAA records): API Gateway answers both on a dualstack domain.
    for (const served of [regionalDomain, stageDomain]) dualstack(served);

    this.healthCheck = new HealthCheck(this, 'HealthCheck', {
      type: HealthCheckType.HTTPS_STR_MATCH,
      fqdn: this.regionalName,
      port: 443,
      // Through the region's own name: the global one would be answered by whichever region is nearest the checker.
      resourcePath: `${BASE_PATH}${routeOf('getHealth').path}`,
      searchString: HEALTH_CHECK_SEARCH_STRING,
      enableSNI: true,
      requestInterval: Duration.seconds(HEALTH_CHECK.intervalSeconds),
      failureThreshold: HEALTH_CHECK.failureThreshold,
    });

    const zone = HostedZone.fromHostedZoneAttributes(this, 'Zone', { hostedZoneId: domain.hostedZoneId, zoneName: domain.zoneName });
    latencyAliases(this, zone, domain.domainName, stageDomain, region, this.healthCheck);
    const regionalTarget = RecordTarget.fromAlias(new ApiGatewayDomain(regionalDomain));
    new ARecord(this, 'RegionalA', { zone, recordName: this.regionalName, target: regionalTarget });
    new AaaaRecord(this, 'RegionalAaaa', { zone, recordName: this.regionalName, target: regionalTarget });
  }
}

/** Lets IPv6 clients call a regional custom domain (CloudFormation's EndpointConfiguration.IpAddressType). */
const dualstack = (domain: IDomainName): void => {
  const resource = domain.node.defaultChild as CfnDomainName;
  resource.addPropertyOverride('EndpointConfiguration.IpAddressType', 'dualstack');
};

/**
 * The stage's domain in this region: one latency record per address family, told apart from the
 * other regions' by SetIdentifier, answered only while the region's health check passes, and
 * evaluating the target's health too (which sees API Gateway's own outages, not the tables').
 */
const latencyAliases = (
  scope: Construct,
  zone: IHostedZone,
  recordName: string,
  stageDomain: IDomainName,
  region: string,
  healthCheck: IHealthCheck,
): void => {
  const target = RecordTarget.fromAlias(evaluatingTargetHealth(new ApiGatewayDomain(stageDomain)));
  const options = { zone, recordName, target, region, setIdentifier: region, healthCheck };
  new ARecord(scope, 'LatencyA', options);
  new AaaaRecord(scope, 'LatencyAaaa', options);
};

const evaluatingTargetHealth = (alias: IAliasRecordTarget): IAliasRecordTarget => ({
  bind: (record, zone) => ({ ...alias.bind(record, zone), evaluateTargetHealth: true }),
});
