/**
 * DomainCreationOrder: a stack's API Gateway custom domains, made one after another, each after a
 * pause. API Gateway takes CreateDomainName (and DeleteDomainName) once every 30 seconds per
 * account, a quota that cannot be raised
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html: "CreateDomainName | 1
 * request every 30 seconds per account | No"). CloudFormation makes unordered resources at once,
 * and AWS documents no retry of its own that would space two such calls 30 s apart (it advises
 * DependsOn, which "reduces the occurrence of throttling":
 * https://repost.aws/knowledge-center/cloudformation-rate-exceeded-error). So each domain depends
 * on a pause (functions/deploy-pause.ts) that depends on the domain before it: two domains of a
 * stack are made, and deleted, at least the pause apart. The first one's pause keeps it that far
 * from whatever the stack before it made: the stacks of a stage in several regions are deployed
 * one after another (infra/stage-stacks.ts), and deleted in the reverse order.
 *
 * A pause waits on create, on delete, and on an update that changes a domain beside it (its
 * properties carry a fingerprint of each: UpdateDomainName is held to the same 30 s); a deploy that
 * changes no domain runs none.
 */
import { createHash } from 'node:crypto';
import { CustomResource, Duration, Lazy, Stack, type CfnResource, type RemovalPolicy } from 'aws-cdk-lib';
import type { CfnDomainName, IDomainName } from 'aws-cdk-lib/aws-apigateway';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { MAX_PAUSE_SECONDS, PAUSE_SECONDS_PROPERTY } from '../../shared/deploy-pause';
import { ApiFunction } from './api-function';
import { functionNameOf } from './names';

/** API Gateway's fixed quota: one CreateDomainName (and one DeleteDomainName) every this many seconds, per account. */
export const CREATE_DOMAIN_NAME_INTERVAL_SECONDS = 30;
/** The pause before each domain: the quota's interval, and a margin for API Gateway's clock and CloudFormation's not being ours. */
export const DOMAIN_PAUSE_SECONDS = CREATE_DOMAIN_NAME_INTERVAL_SECONDS + 5;
/** A short, stable fingerprint of a JSON value: the same value, the same text, on every synth. */
const fingerprintOf = (value: unknown): string => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

/** The CloudFormation type of a pause. */
export const DEPLOY_PAUSE_TYPE = 'Custom::DeployPause';

export interface DomainCreationOrderProps {
  /** The stack's custom domains, in the order they are made. */
  readonly domains: readonly IDomainName[];
  /** Names the pause's function `<namePrefix>-deployPause`. */
  readonly namePrefix: string;
  readonly serviceName: string;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

export class DomainCreationOrder extends Construct {
  /** The pause before each domain, in the domains' order. */
  readonly pauses: readonly CustomResource[];

  constructor(scope: Construct, id: string, { domains, namePrefix, serviceName, logRetention, removalPolicy }: DomainCreationOrderProps) {
    super(scope, id);
    if (DOMAIN_PAUSE_SECONDS > MAX_PAUSE_SECONDS) throw new Error(`A pause of ${DOMAIN_PAUSE_SECONDS} s is more than the function takes.`);
    const pause = new ApiFunction(this, 'Pause', {
      entry: 'functions/deploy-pause.ts',
      functionName: functionNameOf(namePrefix, 'deployPause'),
      description: "pet store: waits between a stack's API Gateway custom domains, for API Gateway's CreateDomainName quota",
      serviceName,
      environment: {},
      // Its wait and its answer to CloudFormation, with time to spare.
      timeout: Duration.seconds(MAX_PAUSE_SECONDS + 30),
      // CloudFormation invokes it by its ARN: no version, no alias.
      withLiveAlias: false,
      logRetention,
      removalPolicy,
    });
    const stack = Stack.of(this);
    /**
     * A domain's name and a fingerprint of its whole template: any change CloudFormation makes to
     * it (UpdateDomainName, held to the same 30 s; a replacement) changes this.
     */
    const described = (resource: CfnDomainName) =>
      Lazy.string({ produce: () => `${stack.resolve(resource.domainName)} ${fingerprintOf(stack.resolve(resource._toCloudFormation()))}` });
    let previous: CfnDomainName | undefined;
    this.pauses = domains.map((domain, position) => {
      const resource = domain.node.defaultChild as CfnDomainName;
      const before = new CustomResource(this, `BeforeDomain${position + 1}`, {
        serviceToken: pause.function.functionArn,
        resourceType: DEPLOY_PAUSE_TYPE,
        properties: {
          [PAUSE_SECONDS_PROPERTY]: DOMAIN_PAUSE_SECONDS,
          // Ignored by the function: a change of either domain beside it updates the pause, which then waits again.
          Before: described(resource),
          ...(previous ? { After: described(previous) } : {}),
        },
      });
      const beforeResource = before.node.defaultChild as CfnResource;
      if (previous) beforeResource.addResourceDependency(previous, 'a pause waits for the domain before it');
      resource.addResourceDependency(beforeResource, 'a domain waits for its pause');
      previous = resource;
      return before;
    });
  }
}
