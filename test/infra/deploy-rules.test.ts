/**
 * Rules CloudFormation and API Gateway apply at deploy time that `cdk synth`, cdk-nag and cfn-lint
 * do not: each one, broken, fails a real deploy (or its retry) rather than the build.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS } from '../../shared/stack';
import { tableDefinitions } from '../../shared/tables';
import { templateResolver, type CfnTemplate } from '../support/iam-simulation';
import { multiRegionStacks, resourcesOf, synthStage, type SynthesizedStage } from './synth';

/** The stages in one region, and every region's stack of each stage in several. */
const stacks: Array<[string, SynthesizedStage]> = [
  ...(['dev', 'staging', 'prod'] as const).map((stage): [string, SynthesizedStage] => [stage, synthStage(stage)]),
  ...multiRegionStacks(),
];

/**
 * The property that gives each resource type of these stacks a fixed physical name, when set;
 * `null` for a type CloudFormation always names itself. A type missing here fails the test, so a
 * new kind of resource is classified before it can be kept by a plain Retain.
 */
const PHYSICAL_NAME_PROPERTY: Readonly<Record<string, string | null>> = {
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::DynamoDB::GlobalTable': 'TableName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::SQS::Queue': 'QueueName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::Lambda::Function': 'FunctionName',
  // The account's API Gateway settings: one per account and region, never named.
  'AWS::ApiGateway::Account': null,
};

describe.each(stacks)('%s: a failed first deploy can be deployed again', (_name, { template, settings, stack }) => {
  const resources = Object.entries(
    template.toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string; Properties?: Record<string, unknown> }>,
  );

  it('keeps no resource with a fixed name by a plain Retain (a rolled-back create would leave it, and the retry fail on "already exists")', () => {
    const retained = resources.filter(([, resource]) => resource.DeletionPolicy === 'Retain');
    for (const [logicalId, resource] of retained) {
      expect(PHYSICAL_NAME_PROPERTY, `${logicalId}: classify ${resource.Type}`).toHaveProperty([resource.Type]);
      const nameProperty = PHYSICAL_NAME_PROPERTY[resource.Type];
      if (nameProperty)
        expect(resource.Properties ?? {}, `${logicalId} (${resource.Type}) is named and kept by Retain`).not.toHaveProperty(nameProperty);
    }
  });

  it('keeps what it keeps except when its create is rolled back (RetainExceptOnCreate), and replaces nothing kept', () => {
    const kept = resources.filter(([, resource]) => resource.DeletionPolicy === 'RetainExceptOnCreate');
    if (settings.removalPolicy !== RemovalPolicy.DESTROY) {
      const keptTypes = new Set(kept.map(([, resource]) => resource.Type));
      // The tables are the home region's stack's (the others import their replicas).
      const tables = stack.isHomeRegion ? ['AWS::DynamoDB::GlobalTable'] : [];
      expect([...keptTypes].sort()).toEqual(expect.arrayContaining([...tables, 'AWS::Logs::LogGroup', 'AWS::SQS::Queue']));
      for (const [, resource] of kept) expect(resource).toMatchObject({ UpdateReplacePolicy: 'Retain' });
    } else {
      expect(kept).toEqual([]);
    }
  });

  it('makes nothing its own rollback cannot delete: no deletion protection (of a table or any replica) in what it keeps except on create, or deletes', () => {
    // A rolled-back create deletes what it made (all but a plain Retain's); DynamoDB refuses
    // DeleteTable of a protected table, the stack ends ROLLBACK_FAILED and the retry meets the
    // fixed name ("already exists").
    const deletedOnRollback = resources.filter(([, resource]) => resource.DeletionPolicy !== 'Retain');
    expect(deletedOnRollback.some(([, resource]) => resource.DeletionPolicy === 'RetainExceptOnCreate')).toBe(
      settings.removalPolicy !== RemovalPolicy.DESTROY,
    );
    for (const [logicalId, resource] of deletedOnRollback)
      expect(protectionsIn(resource.Properties ?? {}), `${logicalId} (${resource.Type})`).toEqual([]);
  });
});

/** The paths of every deletion protection turned on in a resource's properties, at any depth (a table's replicas). */
const protectionsIn = (value: unknown, path = 'Properties'): string[] => {
  if (Array.isArray(value)) return value.flatMap((item, index) => protectionsIn(item, `${path}[${index}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) =>
    /^DeletionProtection(Enabled)?$/.test(key) && child !== false ? [`${path}.${key}`] : protectionsIn(child, `${path}.${key}`),
  );
};

/** A template's resources, as CloudFormation reads them. */
type TemplateResources = Record<
  string,
  { Type: string; DependsOn?: string[]; DeletionPolicy?: string; UpdateReplacePolicy?: string; Properties?: Record<string, unknown> }
>;

/** An SDK call of a custom resource (CDK's AwsCustomResource), as its handler reads it. */
interface SdkCall {
  readonly service?: string;
  readonly action?: string;
  readonly region?: string;
  readonly parameters?: { readonly TableName?: string; readonly DeletionProtectionEnabled?: boolean };
  readonly ignoreErrorCodesMatching?: string;
}

/** Every resource a resource waits for: its DependsOn and the resources it refers to, and theirs, at any depth. */
const waitsFor = (resources: TemplateResources, logicalId: string): Set<string> => {
  const found = new Set<string>();
  const direct = (id: string): string[] => {
    const resource = resources[id];
    if (!resource) return [];
    const referred = [...JSON.stringify(resource.Properties ?? {}).matchAll(/\{"(?:Ref|Fn::GetAtt)":(?:\[)?"([A-Za-z0-9]+)"/g)].map(
      (match) => match[1] ?? '',
    );
    const substituted = [...JSON.stringify(resource.Properties ?? {}).matchAll(/\$\{([A-Za-z0-9]+)(?:\.[A-Za-z0-9.]+)?\}/g)].map(
      (match) => match[1] ?? '',
    );
    return [...(resource.DependsOn ?? []), ...referred, ...substituted].filter((id) => id in resources);
  };
  const pending = direct(logicalId);
  while (pending.length > 0) {
    const id = pending.pop() ?? '';
    if (found.has(id)) continue;
    found.add(id);
    pending.push(...direct(id));
  }
  return found;
};

describe.each(stacks)(
  '%s: a successful deploy ends with every replica of every table protected from deletion',
  (_name, { template, settings, stack }) => {
    const json = template.toJSON() as CfnTemplate;
    const resources = json.Resources as TemplateResources;
    const resolver = templateResolver(json, stack.region);
    const kept = settings.removalPolicy !== RemovalPolicy.DESTROY;
    /** The resources whose calls set a table's deletion protection, with their calls. */
    const protections = Object.entries(resources).flatMap(([logicalId, resource]) => {
      const call = (name: 'Create' | 'Update' | 'Delete'): SdkCall | undefined => {
        const value = resource.Properties?.[name];
        return value === undefined ? undefined : (JSON.parse(String(resolver.resolve(value))) as SdkCall);
      };
      const [create, update, remove] = [call('Create'), call('Update'), call('Delete')];
      const setsProtection = [create, update, remove].some((sdkCall) => sdkCall?.parameters?.DeletionProtectionEnabled !== undefined);
      return setsProtection ? [{ logicalId, resource, create, update, remove }] : [];
    });
    const tables = Object.values(resources).filter(({ Type }) => Type === 'AWS::DynamoDB::GlobalTable');

    it(
      kept
        ? 'protects each replica of each table, in its region, on create and on every update'
        : 'protects none: the stage is thrown away with its tables',
      () => {
        if (!kept) return expect(protections).toEqual([]);
        expect(tables.length).toBe(stack.isHomeRegion ? Object.keys(tableDefinitions).length : 0);
        const replicas = tables.flatMap(({ Properties = {} }) =>
          (Properties.Replicas as Array<{ Region: unknown }>).map(
            ({ Region }) => `${String(Properties.TableName)} in ${String(resolver.resolve(Region))}`,
          ),
        );
        expect(replicas.length).toBeGreaterThanOrEqual(tables.length);
        const protecting = (sdkCall: SdkCall | undefined) =>
          sdkCall?.service === 'DynamoDB' && sdkCall.action === 'updateTable' && sdkCall.parameters?.DeletionProtectionEnabled === true
            ? [`${sdkCall.parameters.TableName} in ${sdkCall.region ?? stack.region}`]
            : [];
        // On create, and on an update (the table's own change makes CloudFormation update it, after the table).
        expect(protections.flatMap(({ create }) => protecting(create)).sort()).toEqual([...replicas].sort());
        expect(protections.flatMap(({ update }) => protecting(update)).sort()).toEqual([...replicas].sort());
      },
    );

    it('turns the protection off only in the rollback of the operation that made it, and never fails that rollback', () => {
      for (const { logicalId, resource, create, remove } of protections) {
        // RetainExceptOnCreate: a stack deleted, the resource removed or replaced, sends no Delete; the tables stay protected.
        expect(resource, logicalId).toMatchObject({ DeletionPolicy: 'RetainExceptOnCreate', UpdateReplacePolicy: 'Retain' });
        // The rollback deletes the tables it made, which DynamoDB refuses while they are protected.
        expect(remove, logicalId).toEqual({
          ...create,
          parameters: { ...create?.parameters, DeletionProtectionEnabled: false },
          ignoreErrorCodesMatching: '.*',
        });
      }
    });

    it('protects last: each protection waits for every other resource of the stack, and for the protections before it', () => {
      for (const { logicalId } of protections) {
        const waited = waitsFor(resources, logicalId);
        expect(waited.has(logicalId), `${logicalId} waits for itself`).toBe(false);
        const notWaited = Object.keys(resources).filter(
          (id) => id !== logicalId && !waited.has(id) && !protections.some((protection) => protection.logicalId === id),
        );
        expect(notWaited, `${logicalId} does not wait for`).toEqual([]);
      }
      // One at a time: of any two, one waits for the other.
      const order = protections.map(({ logicalId }) => ({ logicalId, waited: waitsFor(resources, logicalId) }));
      for (const a of order)
        for (const b of order)
          if (a !== b) expect(a.waited.has(b.logicalId) || b.waited.has(a.logicalId), `${a.logicalId}, ${b.logicalId}`).toBe(true);
    });
  },
);

describe.each(stacks)('%s: every function a request waits on answers within API Gateway’s integration timeout', (_name, { template }) => {
  const functions = new Map(resourcesOf(template, 'AWS::Lambda::Function').map(({ logicalId, properties }) => [logicalId, properties]));
  const aliases = new Map(resourcesOf(template, 'AWS::Lambda::Alias').map(({ logicalId, properties }) => [logicalId, properties]));

  /** The function logical ids an API Gateway URI (an integration's or the authorizer's) names through their `live` alias. */
  const functionsNamedBy = (uri: unknown): string[] => {
    const text = JSON.stringify(uri);
    const ids = [...text.matchAll(/"Ref":"([A-Za-z0-9]+)"/g), ...text.matchAll(/"Fn::GetAtt":\["([A-Za-z0-9]+)"/g)].map(
      (match) => match[1] ?? '',
    );
    return ids.flatMap((id) => {
      if (functions.has(id)) return [id];
      const alias = aliases.get(id);
      if (!alias) return [];
      const target = JSON.stringify(alias.FunctionName);
      return [...functions.keys()].filter((functionId) => target.includes(`"${functionId}"`));
    });
  };

  const waitedOn = [
    ...resourcesOf(template, 'AWS::ApiGateway::Method').flatMap(({ properties }) =>
      (properties.Integration as { Type?: string; Uri?: unknown } | undefined)?.Type === 'AWS_PROXY'
        ? functionsNamedBy((properties.Integration as { Uri: unknown }).Uri)
        : [],
    ),
    ...resourcesOf(template, 'AWS::ApiGateway::Authorizer').flatMap(({ properties }) => functionsNamedBy(properties.AuthorizerUri)),
  ];

  it('finds the functions behind the API: every integration and the authorizer', () => {
    const proxyMethods = resourcesOf(template, 'AWS::ApiGateway::Method').filter(
      ({ properties }) => (properties.Integration as { Type?: string } | undefined)?.Type === 'AWS_PROXY',
    );
    expect(proxyMethods.length).toBeGreaterThan(0);
    expect(new Set(waitedOn).size).toBe(
      new Set(proxyMethods.map(({ properties }) => JSON.stringify((properties.Integration as { Uri: unknown }).Uri))).size + 1,
    );
  });

  it(`gives each a timeout under ${API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS} s, so the function, not the gateway, decides what the client gets`, () => {
    for (const logicalId of new Set(waitedOn)) {
      expect(Number(functions.get(logicalId)?.Timeout), logicalId).toBeLessThan(API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS);
    }
  });
});
