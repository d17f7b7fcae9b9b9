/**
 * RegionalRouting: how clients reach this region of a stage that runs in several. The stage's
 * domain (`api.example.com`) is served by every region's API Gateway (a regional custom domain of
 * the same name, made by PetStoreApi with this region's certificate); here, this region's own name
 * (`us-east-2.api.example.com`), a Route 53 health check that follows this region's health probe
 * alarm (infra/constructs/health-probe.ts), and this region's records: a latency alias (A and AAAA)
 * of the stage's domain, set apart by the region and answered only while the health check passes,
 * and a simple alias of the region's own name. Route 53 answers each client with the healthy region
 * nearest to it (https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/routing-policy-latency.html).
 *
 * The check calls nothing public: it is the alarm's state (CLOUDWATCH_METRIC), so no caller of the
 * API can fail it, and it reveals nothing to anyone
 * (https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/health-checks-types.html).
 */
import { Tags } from 'aws-cdk-lib';
import { CfnDomainName, DomainName, EndpointType, SecurityPolicy, type IDomainName, type IRestApi } from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import {
  AaaaRecord,
  ARecord,
  HealthCheck,
  HealthCheckType,
  HostedZone,
  InsufficientDataHealthStatusEnum,
  RecordTarget,
  type IAliasRecordTarget,
  type IHealthCheck,
  type IHostedZone,
} from 'aws-cdk-lib/aws-route53';
import { ApiGatewayDomain } from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';
import { STAGE_NAME } from '../../shared/routes';
import { regionalDomainName, type RegionalCustomDomain } from '../stages';

export interface RegionalRoutingProps {
  /** The REST API of this region: its own name maps to its stage. */
  readonly api: IRestApi;
  /** The API Gateway custom domain of the stage's domain in this region (PetStoreApi's). */
  readonly stageDomain: IDomainName;
  readonly domain: RegionalCustomDomain;
  /** This stack's region, a concrete one: it names the records and the region's own name, and is the alarm's. */
  readonly region: string;
  /** The region's health probe alarm (HealthProbe's), in ALARM while the region cannot read its tables. */
  readonly healthAlarm: IAlarm;
}

export class RegionalRouting extends Construct {
  /** This region's own name, `<region>.<domainName>`. */
  readonly regionalName: string;
  /** The API Gateway custom domain of the region's own name. */
  readonly regionalDomain: DomainName;
  readonly healthCheck: HealthCheck;

  constructor(scope: Construct, id: string, { api, stageDomain, domain, region, healthAlarm }: RegionalRoutingProps) {
    super(scope, id);
    this.regionalName = regionalDomainName(domain.domainName, region);
    const certificate = Certificate.fromCertificateArn(this, 'Certificate', domain.certificateArns[region] ?? '');
    const regionalDomain = (this.regionalDomain = new DomainName(this, 'RegionalDomain', {
      domainName: this.regionalName,
      certificate,
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
      mapping: api,
      basePath: STAGE_NAME,
    }));
    // IPv6 clients too (the AAAA records): API Gateway answers both on a dualstack domain.
    for (const served of [regionalDomain, stageDomain]) dualstack(served);

    this.healthCheck = new HealthCheck(this, 'HealthCheck', {
      type: HealthCheckType.CLOUDWATCH_METRIC,
      alarmIdentifier: { name: healthAlarm.alarmName, region },
      // No data (a new alarm, or CloudWatch unable to say) is unhealthy too: a region is answered only once proven.
      insufficientDataHealthStatus: InsufficientDataHealthStatusEnum.UNHEALTHY,
    });
    // What the console lists the check by: the region's own name.
    Tags.of(this.healthCheck).add('Name', this.regionalName);

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
