/**
 * The synthesized stack, for a staging and a prod stage: what an operator deploys, checked
 * resource by resource against the shared definitions and the stage settings.
 */
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { ResponseType } from 'aws-cdk-lib/aws-apigateway';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsCustomResource } from 'aws-cdk-lib/custom-resources';
import { describe, expect, it } from 'vitest';
import type { ApiFunction } from '../../infra/constructs/api-function';
import { grantTableAccess, tableAccess, type FunctionName, type TableAccess } from '../../infra/constructs/pet-store-functions';
import { KEYS_REPLICATION_LATENCY_THRESHOLD_MS } from '../../infra/constructs/monitoring';
import { dashboardNameOf } from '../../infra/constructs/names';
import { isMultiRegion, regionalDomainName } from '../../infra/stages';
import { BEARER_PATTERN } from '../../shared/api-keys';
import { API_STAGE_NAME_VARIABLE, REST_API_ID_VARIABLE } from '../../shared/authorizer-cache';
import { AUDIT_LOG_LEVEL } from '../../shared/key-audit';
import { USAGE_KEYS_REGION_DIMENSION } from '../../shared/usage-key-release';
import { isKeyed, routes, STAGE_NAME, type KeylessRoute, type Route } from '../../shared/routes';
import { stackOutputs } from '../../shared/stack';
import {
  apiKeysExpiryIndex,
  apiKeysUsageKeyReleaseIndex,
  apiKeysIdIndex,
  apiKeyLastUseTable,
  apiKeysTable,
  idempotencyTable,
  petsStatusIndex,
  petsTable,
  STATUS_SHARDS_VARIABLE,
  tableDefinitions,
  type TableDefinition,
  type TableNames,
} from '../../shared/tables';
import { CORS_ALLOWED_METHODS } from '../../shared/http/cors';
import {
  expirySweepOf,
  keylessMethods,
  methodsOf,
  multiRegionStacks,
  policyStatementsOf,
  resourcesOf,
  synthStage,
  type SynthesizedStage,
} from './synth';

const keylessRoutes = (routes as readonly Route[]).filter((route): route is KeylessRoute => !isKeyed(route));
import { handledOperationIds } from '../support/operations';
import { THROTTLING_METRICS } from '../../infra/constructs/throttling';
import { PROJECT_NAME } from '../../shared/project';
import type { ReturnValues } from '../../shared/table-access';
import { FIXTURE_PREFIX } from '../support/fixture-names';
import { functionsOf, rolePoliciesOf, simulate, templateResolver, type CfnTemplate } from '../support/iam-simulation';

/** The stages in one region, and every region's stack of each stage in several. */
const stages = { staging: synthStage('staging'), prod: synthStage('prod') };
/** The stacks every check of a stage's stack runs on: the stages', and every region's stack of each stage in several. */
const checkedStacks: Record<string, SynthesizedStage> = { ...stages, ...Object.fromEntries(multiRegionStacks()) };

const logicalIdOf = (synthesized: SynthesizedStage, name: FunctionName) => {
  const fn = name === 'authorizer' ? synthesized.stack.functions.authorizer : synthesized.stack.functions.operations.get(name);
  if (!fn) throw new Error(`no function ${name}`);
  return {
    function: Stack.of(fn).getLogicalId(fn.function.node.defaultChild as CfnFunction),
    role: Stack.of(fn).getLogicalId(fn.function.role!.node.defaultChild as CfnFunction),
    alias: Stack.of(fn).getLogicalId(fn.alias.node.defaultChild as CfnFunction),
    logGroup: Stack.of(fn).getLogicalId(fn.logGroup.node.defaultChild as CfnFunction),
  };
};

/** The newest even-numbered (LTS) Node.js runtime this aws-cdk-lib offers. */
const newestLtsRuntime = () => {
  const majors = Object.keys(Runtime)
    .map((name) => /^NODEJS_(\d+)_X$/.exec(name)?.[1])
    .filter((major): major is string => major !== undefined)
    .map(Number)
    .filter((major) => major % 2 === 0);
  return `nodejs${Math.max(...majors)}.x`;
};

/** Every value of DynamoDB's ReturnValues. */
const RETURN_VALUES = ['NONE', 'ALL_OLD', 'UPDATED_OLD', 'ALL_NEW', 'UPDATED_NEW'] as const satisfies readonly ReturnValues[];
/** An attribute no grant names. */
const NOT_GRANTED_ATTRIBUTE = `${FIXTURE_PREFIX}Attribute`;

const functionNames: readonly FunctionName[] = [...handledOperationIds, 'authorizer'];

/**
 * Every gateway response type API Gateway documents (the ResponseType values of
 * AWS::ApiGateway::GatewayResponse), with the status this API answers: API Gateway's own default,
 * except where the API decided otherwise (404 for no route, 503 for an authorizer or a function
 * that cannot answer, 400 for a body of the wrong type). The catch-alls have none.
 */
const DOCUMENTED_RESPONSE_STATUS: Record<string, number | undefined> = {
  DEFAULT_4XX: undefined,
  DEFAULT_5XX: undefined,
  RESOURCE_NOT_FOUND: 404,
  UNAUTHORIZED: 401,
  INVALID_API_KEY: 403,
  ACCESS_DENIED: 403,
  AUTHORIZER_FAILURE: 503,
  AUTHORIZER_CONFIGURATION_ERROR: 503,
  INVALID_SIGNATURE: 403,
  EXPIRED_TOKEN: 403,
  MISSING_AUTHENTICATION_TOKEN: 404,
  INTEGRATION_FAILURE: 503,
  INTEGRATION_TIMEOUT: 503,
  API_CONFIGURATION_ERROR: 500,
  UNSUPPORTED_MEDIA_TYPE: 400,
  BAD_REQUEST_PARAMETERS: 400,
  BAD_REQUEST_BODY: 400,
  REQUEST_TOO_LARGE: 413,
  THROTTLED: 429,
  QUOTA_EXCEEDED: 429,
  WAF_FILTERED: 403,
};

interface RenderedGatewayResponse {
  readonly StatusCode?: string;
  readonly ResponseParameters: Record<string, string>;
  readonly body: Record<string, unknown>;
}

/** The gateway responses by type, each with its JSON body parsed. */
const gatewayResponsesOf = (template: SynthesizedStage['template']) =>
  new Map(
    resourcesOf(template, 'AWS::ApiGateway::GatewayResponse').map(({ properties }) => {
      const { ResponseType, ResponseTemplates, ...rest } = properties as {
        ResponseType: string;
        ResponseTemplates: Record<string, string>;
      };
      return [
        ResponseType,
        { ...rest, body: JSON.parse(ResponseTemplates['application/json'] ?? '') as Record<string, unknown> } as RenderedGatewayResponse,
      ];
    }),
  );

/** The route the interface names but never specifies, whichever the route table has: API Gateway answers it itself. */
const notImplemented = (() => {
  const route = (routes as readonly Route[]).find((candidate) => candidate.notImplemented);
  if (!route) throw new Error('The tests need a route that is not implemented.');
  return route;
})();

describe.each(Object.entries(checkedStacks))('the %s stack', (_name, synthesized) => {
  const { template, settings, stack } = synthesized;
  const { stage } = stack;
  // Prod-like: kept when the stack is deleted, and protected from it.
  const isProd = settings.removalPolicy !== RemovalPolicy.DESTROY;
  /** A table's name, ARN (of one of its indexes) and stream as the template gives them: its own table's, or an imported replica's. */
  const tableNameRef = (table: keyof TableNames) => stack.resolve(stack.tables.byName[table].tableName) as unknown;
  const tableArnRef = (table: keyof TableNames, index?: string) =>
    stack.resolve(
      index === undefined ? stack.tables.byName[table].tableArn : `${stack.tables.byName[table].tableArn}/index/${index}`,
    ) as unknown;
  const keysStreamRef = () => stack.resolve(stack.tables.apiKeys.tableStreamArn) as unknown;

  it(`is ${isProd ? '' : 'not '}protected from termination, and tags its resources with the project and stage`, () => {
    expect(stack.terminationProtection).toBe(isProd);
    // A global table's tags are its replicas' (the home region's stack's tables).
    if (stack.isHomeRegion)
      template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
        Replicas: Match.arrayWith([
          Match.objectLike({
            Tags: Match.arrayWith([
              { Key: 'project', Value: 'pet-store' },
              { Key: 'stage', Value: stage },
            ]),
          }),
        ]),
      });
    template.hasResourceProperties('AWS::Lambda::Function', { Tags: Match.arrayWith([{ Key: 'stage', Value: stage }]) });
  });

  it(`is named PetStore-${stage} and outputs the API URL and id, the table names and the dashboard URL`, () => {
    expect(stack.stackName).toBe(`PetStore-${stage}`);
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    // Only a region of a stage in several, routed under its domain, has a URL of its own (infra/constructs/regional-routing.ts).
    expect(Object.keys(outputs).sort()).toEqual(
      Object.values(stackOutputs)
        .filter((name) => name !== stackOutputs.regionalApiUrl || stack.routing !== undefined)
        .sort(),
    );
    const domain = settings.customDomain;
    if (domain) {
      // Served under the stage's domain (the same in every region of a stage in several), and under the region's own name.
      expect(outputs[stackOutputs.apiUrl]?.Value).toBe(`https://${domain.domainName}/${STAGE_NAME}`);
      if (stack.routing)
        expect(outputs[stackOutputs.regionalApiUrl]?.Value).toBe(
          `https://${regionalDomainName(domain.domainName, stack.region)}/${STAGE_NAME}`,
        );
    } else {
      const apiUrl = stack.resolve(stack.api.url) as { 'Fn::Join': [string, unknown[]] };
      expect(JSON.stringify(outputs[stackOutputs.apiUrl]?.Value)).toBe(JSON.stringify(apiUrl));
      expect(apiUrl['Fn::Join'][1].at(-1)).toMatch(/\/v1$/);
      expect(JSON.stringify(outputs[stackOutputs.apiUrl]?.Value)).toContain(`.execute-api.${stack.region}.`);
    }
    expect(outputs[stackOutputs.restApiId]?.Value).toEqual({
      Ref: Stack.of(stack).getLogicalId(stack.api.api.node.defaultChild as CfnFunction),
    });
    expect(outputs[stackOutputs.petsTableName]?.Value).toEqual(tableNameRef('pets'));
    expect(outputs[stackOutputs.apiKeysTableName]?.Value).toEqual(tableNameRef('apiKeys'));
    expect(outputs[stackOutputs.apiKeyLastUseTableName]?.Value).toEqual(tableNameRef('apiKeyLastUse'));
    // This region's console, on this region's dashboard.
    expect(outputs[stackOutputs.dashboardUrl]?.Value).toBe(
      `https://${stack.region}.console.aws.amazon.com/cloudwatch/home?region=${stack.region}#dashboards:name=${dashboardNameOf(`pet-store-${stage}`, stack.region)}`,
    );
  });

  describe('API Gateway', () => {
    it('has one REST API whose stage is v1, with tracing, throttling, error logs and JSON access logs', () => {
      template.resourceCountIs('AWS::ApiGateway::RestApi', 1);
      template.resourceCountIs('AWS::ApiGateway::Stage', 1);
      template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] } });
      template.hasResourceProperties('AWS::ApiGateway::Stage', {
        StageName: 'v1',
        TracingEnabled: true,
        MethodSettings: [
          {
            HttpMethod: '*',
            ResourcePath: '/*',
            ThrottlingRateLimit: settings.throttle.rateLimit,
            ThrottlingBurstLimit: settings.throttle.burstLimit,
            LoggingLevel: 'ERROR',
            DataTraceEnabled: false,
            MetricsEnabled: true,
          },
          // Each keyless route's own throttle in place of the stage's, its logging and metrics as the stage's.
          ...keylessRoutes.map((route) => ({
            HttpMethod: route.method,
            // A method setting's resource path escapes each '/' of the path as '~1'.
            ResourcePath: `/${route.path.replace(/\//g, '~1')}`,
            ThrottlingRateLimit: route.keyless.throttle.rateLimit,
            ThrottlingBurstLimit: route.keyless.throttle.burstLimit,
            LoggingLevel: 'ERROR',
            DataTraceEnabled: false,
            MetricsEnabled: true,
          })),
        ],
        AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('^\\{"requestId":"\\$context.requestId"') },
      });
    });

    it('writes its access log to /aws/apigateway/pet-store-<stage>/access, kept for the stage retention', () => {
      template.hasResource('AWS::Logs::LogGroup', {
        Properties: { LogGroupName: `/aws/apigateway/pet-store-${stage}/access`, RetentionInDays: settings.logRetention },
        DeletionPolicy: isProd ? 'RetainExceptOnCreate' : 'Delete',
      });
    });

    it('logs who called what and how it ended, and never a header or a body', () => {
      const [stageResource] = resourcesOf(template, 'AWS::ApiGateway::Stage');
      const format = JSON.parse((stageResource?.properties.AccessLogSetting as { Format: string }).Format) as Record<string, string>;
      expect(format).toMatchObject({
        requestId: '$context.requestId',
        status: '$context.status',
        keyId: '$context.authorizer.principalId',
        resourcePath: '$context.resourcePath',
        responseLatency: '$context.responseLatency',
      });
      for (const variable of Object.values(format)) {
        expect(variable).not.toMatch(/header|body|authorizer\.(?!principalId|plan|status|latency)|apiKey/i);
      }
    });

    it('has exactly the routes of the shared route table, each with its operationId', () => {
      const methods = methodsOf(template).filter(({ method }) => method !== 'OPTIONS');
      expect(methods.map(({ method, path }) => `${method} ${path}`).sort()).toEqual(
        routes.map((route) => `${route.method} ${route.path}`).sort(),
      );
      for (const route of routes) {
        const method = methods.find(({ method: m, path }) => m === route.method && path === route.path);
        expect(method?.properties.OperationName).toBe(route.operationId);
      }
    });

    it("sends each operation to its own function's live alias by Lambda proxy integration", () => {
      const methods = methodsOf(template);
      for (const route of routes) {
        if (!('handler' in route)) continue;
        const method = methods.find(({ method: m, path }) => m === route.method && path === route.path);
        const integration = method?.properties.Integration as { Type: string; Uri: unknown };
        expect(integration.Type).toBe('AWS_PROXY');
        expect(JSON.stringify(integration.Uri)).toContain(`{"Ref":"${logicalIdOf(synthesized, route.operationId).alias}"}`);
      }
    });

    it('checks the bearer key with a TOKEN authorizer on every method, cached for the stage TTL', () => {
      template.resourceCountIs('AWS::ApiGateway::Authorizer', 1);
      const [authorizer] = resourcesOf(template, 'AWS::ApiGateway::Authorizer');
      expect(authorizer?.properties).toMatchObject({
        Type: 'TOKEN',
        IdentitySource: 'method.request.header.Authorization',
        IdentityValidationExpression: BEARER_PATTERN,
        AuthorizerResultTtlInSeconds: settings.authorizerCacheTtlSeconds,
      });
      expect(JSON.stringify(authorizer?.properties.AuthorizerUri)).toContain(`{"Ref":"${logicalIdOf(synthesized, 'authorizer').alias}"}`);
      for (const { method, path, properties } of methodsOf(template)) {
        if (method === 'OPTIONS' || keylessMethods.includes(`${method} ${path}`)) continue;
        expect(properties).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: authorizer?.logicalId } });
      }
    });

    it('serves each keyless route without the authorizer or a key, by its function', () => {
      expect(keylessMethods.length).toBeGreaterThan(0);
      for (const keyless of keylessMethods) {
        const found = methodsOf(template).find(({ method, path }) => `${method} ${path}` === keyless);
        expect(found?.properties, keyless).toMatchObject({ AuthorizationType: 'NONE', ApiKeyRequired: false });
        expect(found?.properties, keyless).not.toHaveProperty('AuthorizerId');
        expect(JSON.stringify(found?.properties.Integration), keyless).toContain('lambda:path');
      }
    });

    it("rejects anything but a Bearer credential in the authorizer's validation regex, before any function runs", () => {
      const regex = new RegExp(BEARER_PATTERN);
      for (const accepted of ['Bearer petstore_abc', 'bearer petstore_abc', 'BEARER  x.y~z']) expect(regex.test(accepted)).toBe(true);
      for (const refused of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'petstore_abc', 'Bearer a b', 'Token petstore_abc']) {
        expect(regex.test(refused)).toBe(false);
      }
    });

    it('answers GET /store/orders itself with 501 in the Error shape, after the authorizer, with no function', () => {
      const method = methodsOf(template).find(({ path, method: verb }) => path === notImplemented.path && verb === notImplemented.method);
      const integration = method?.properties.Integration as {
        Type: string;
        IntegrationResponses: Array<{
          StatusCode: string;
          ResponseTemplates: Record<string, string>;
          ResponseParameters: Record<string, string>;
        }>;
      };
      expect(integration.Type).toBe('MOCK');
      expect(integration.IntegrationResponses).toHaveLength(1);
      const [response] = integration.IntegrationResponses;
      expect(response?.StatusCode).toBe('501');
      const body = response?.ResponseTemplates['application/json'] ?? '';
      expect(JSON.parse(body.split('\n').at(-1) ?? '')).toEqual({
        code: 'not_implemented',
        message: 'This operation is not implemented.',
        status: 501,
      });
      expect(body).toContain('#set($context.responseOverride.header.X-Request-Id = $context.requestId)');
      expect(response?.ResponseParameters).toEqual({
        'method.response.header.Cache-Control': "'no-store'",
        'method.response.header.X-Content-Type-Options': "'nosniff'",
      });
    });

    it('treats every media type as binary, so a body reaches its function base64-encoded, bytes as sent', () => {
      template.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: ['*~1*'] });
    });

    it('enables no payload compression, so a compressed body reaches its function as sent, where jsonBody refuses it', () => {
      template.hasResourceProperties('AWS::ApiGateway::RestApi', { MinimumCompressionSize: Match.absent() });
    });

    it('converts the 501 mock to text both ways, which a mock needs when every media type is binary', () => {
      const integration = methodsOf(template).find(
        ({ path, method: verb }) => path === notImplemented.path && verb === notImplemented.method,
      )?.properties.Integration as {
        ContentHandling?: string;
        IntegrationResponses: Array<{ ContentHandling?: string }>;
      };
      expect(integration.ContentHandling).toBe('CONVERT_TO_TEXT');
      expect(integration.IntegrationResponses.map(({ ContentHandling }) => ContentHandling)).toEqual(['CONVERT_TO_TEXT']);
    });

    it('has its own gateway response for every documented type, with its real status, repeated in the Error body', () => {
      const rendered = gatewayResponsesOf(template);
      expect([...rendered.keys()].sort()).toEqual(Object.keys(DOCUMENTED_RESPONSE_STATUS).sort());
      // The CDK's list of types follows the same documentation.
      const cdkTypes = Object.values(ResponseType).map((value: { responseType?: string }) => value.responseType);
      expect(cdkTypes.filter((type) => type !== undefined).sort()).toEqual(Object.keys(DOCUMENTED_RESPONSE_STATUS).sort());
      for (const [type, status] of Object.entries(DOCUMENTED_RESPONSE_STATUS)) {
        if (status === undefined) continue;
        const response = rendered.get(type);
        expect({ type, status: response?.StatusCode }).toEqual({ type, status: String(status) });
        expect({ type, body: response?.body }).toEqual({ type, body: { code: expect.any(String), message: expect.any(String), status } });
        expect(response?.ResponseParameters).toMatchObject({ 'gatewayresponse.header.Content-Type': "'application/json'" });
      }
      expect(rendered.get('UNAUTHORIZED')).toMatchObject({
        StatusCode: '401',
        ResponseParameters: { 'gatewayresponse.header.WWW-Authenticate': `'Bearer realm="pet-store"'` },
      });
      expect(rendered.get('ACCESS_DENIED')).toMatchObject({
        body: { code: 'forbidden' },
        ResponseParameters: { 'gatewayresponse.header.WWW-Authenticate': `'Bearer realm="pet-store", error="insufficient_scope"'` },
      });
      expect(rendered.get('WAF_FILTERED')?.body.code).toBe('forbidden');
      expect(rendered.get('MISSING_AUTHENTICATION_TOKEN')?.body.code).toBe('not_found');
      expect(rendered.get('UNSUPPORTED_MEDIA_TYPE')?.body.code).toBe('unsupported_media_type');
      for (const [type, code, retryAfter] of [
        ['THROTTLED', 'too_many_requests', '1'],
        // A fixed hint: a gateway response cannot compute when the quota's period starts again.
        ['QUOTA_EXCEEDED', 'quota_exceeded', '3600'],
        ['AUTHORIZER_FAILURE', 'service_unavailable', '1'],
        ['AUTHORIZER_CONFIGURATION_ERROR', 'service_unavailable', '1'],
        ['INTEGRATION_FAILURE', 'service_unavailable', '1'],
        ['INTEGRATION_TIMEOUT', 'service_unavailable', '1'],
      ] as const) {
        expect({ type, ...rendered.get(type) }).toMatchObject({
          type,
          body: { code },
          ResponseParameters: { 'gatewayresponse.header.Retry-After': `'${retryAfter}'` },
        });
      }
    });

    it('lets the catch-alls keep the status of the type they stand in for, with an Error body that says it is generic', () => {
      const rendered = gatewayResponsesOf(template);
      for (const type of ['DEFAULT_4XX', 'DEFAULT_5XX']) {
        const response = rendered.get(type);
        expect(response).toBeDefined();
        expect(response).not.toHaveProperty('StatusCode');
        expect(Object.keys(response?.body ?? {}).sort()).toEqual(['code', 'message', 'status']);
      }
      expect(rendered.get('DEFAULT_4XX')?.body.code).toBe('request_refused');
      expect(rendered.get('DEFAULT_5XX')?.body.code).toBe('internal_error');
    });

    it('has no CORS by default: no preflight methods and no CORS headers', () => {
      expect(methodsOf(template).filter(({ method }) => method === 'OPTIONS')).toEqual([]);
      expect(JSON.stringify(template.toJSON())).not.toContain('Access-Control-Allow-Origin');
      for (const name of functionNames) {
        const { function: logicalId } = logicalIdOf(synthesized, name);
        const variables = (template.toJSON().Resources[logicalId].Properties.Environment as { Variables: object }).Variables;
        expect(variables).not.toHaveProperty('CORS_ALLOWED_ORIGINS');
      }
    });

    it('lets the account-wide API Gateway logging role outlive the stack', () => {
      template.hasResource('AWS::ApiGateway::Account', {});
      template.hasResource('AWS::IAM::Role', {
        DeletionPolicy: 'Retain',
        Properties: {
          AssumeRolePolicyDocument: Match.objectLike({
            Statement: [Match.objectLike({ Principal: { Service: 'apigateway.amazonaws.com' } })],
          }),
        },
      });
    });
  });

  describe('functions', () => {
    it.each(functionNames)('%s: newest LTS Node.js on arm64, ESM bundle, explicit memory and timeout, traced, own log group', (name) => {
      const ids = logicalIdOf(synthesized, name);
      const fn = template.toJSON().Resources[ids.function] as { Properties: Record<string, unknown> };
      expect(fn.Properties).toMatchObject({
        FunctionName: `pet-store-${stage}-${name}`,
        Runtime: newestLtsRuntime(),
        Architectures: ['arm64'],
        Handler: 'index.handler',
        MemorySize: 512,
        Timeout: 10,
        TracingConfig: { Mode: 'Active' },
        LoggingConfig: { LogFormat: 'JSON', LogGroup: { Ref: ids.logGroup } },
        Role: { 'Fn::GetAtt': [ids.role, 'Arn'] },
      });
      // The stage's own service, under which its logs and metrics are counted.
      expect(fn.Properties.Environment).toMatchObject({ Variables: { POWERTOOLS_SERVICE_NAME: `pet-store-${stage}` } });
      // The bundles ship no source map, so Node is not told to look for one at start-up.
      expect((fn.Properties.Environment as { Variables: object }).Variables).not.toHaveProperty('NODE_OPTIONS');
      template.hasResource('AWS::Logs::LogGroup', {
        Properties: { RetentionInDays: settings.logRetention },
        DeletionPolicy: isProd ? 'RetainExceptOnCreate' : 'Delete',
      });
      expect(template.toJSON().Resources[ids.logGroup].Properties).toMatchObject({
        LogGroupName: `/aws/lambda/pet-store-${stage}-${name}`,
        RetentionInDays: settings.logRetention,
      });
    });

    it('knows its table by name from the environment, and nothing else', () => {
      const variablesOf = (name: FunctionName) =>
        (
          template.toJSON().Resources[logicalIdOf(synthesized, name).function].Properties.Environment as {
            Variables: Record<string, unknown>;
          }
        ).Variables;
      // Each function is told the name of each table it is granted, and of no other.
      for (const name of functionNames) {
        const granted = new Set(tableAccess[name].map(({ table }) => table));
        for (const [table, definition] of Object.entries(tableDefinitions) as Array<[keyof typeof tableDefinitions, TableDefinition]>) {
          if (granted.has(table)) {
            expect(variablesOf(name)[definition.nameVariable], name).toEqual(tableNameRef(table));
          } else {
            expect(variablesOf(name), name).not.toHaveProperty(definition.nameVariable);
          }
        }
      }
      expect(tableAccess.createPet.map(({ table }) => table)).toContain('idempotency');
    });

    it('tells each function the name of exactly the tables it is granted', () => {
      const definitions = tableDefinitions;
      const nameVariables: string[] = Object.values(definitions).map((table) => table.nameVariable);
      for (const name of functionNames) {
        const variables = (
          template.toJSON().Resources[logicalIdOf(synthesized, name).function].Properties.Environment as {
            Variables: Record<string, unknown>;
          }
        ).Variables;
        const told = Object.keys(variables).filter((variable) => nameVariables.includes(variable));
        const granted = new Set(tableAccess[name].map(({ table }) => definitions[table].nameVariable));
        expect(told.sort(), name).toEqual([...granted].sort());
      }
    });
  });

  describe('least privilege', () => {
    const tableArn = (table: keyof TableNames) => tableArnRef(table);

    it.each(functionNames)('%s may write its own logs and traces, and use only its own table actions', (name) => {
      const ids = logicalIdOf(synthesized, name);
      const statements = policyStatementsOf(template, ids.role);
      const expected = [
        { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [ids.logGroup, 'Arn'] } },
        { Effect: 'Allow', Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], Resource: '*' },
        ...tableAccess[name].map((access) => ({
          Effect: 'Allow',
          Action: access.actions.length === 1 ? access.actions[0] : access.actions,
          Resource: tableArnRef(access.table, access.index),
          // What a condition allows is simulated below, against AWS's own rules.
          ...(access.attributes || access.returnValues ? { Condition: expect.any(Object) } : {}),
        })),
      ];
      const sortActions = (list: Array<Record<string, unknown>>) =>
        list.map((statement) => ({ ...statement, Action: [statement.Action].flat().sort() }));
      expect(sortActions(statements)).toEqual(sortActions(expected));
      // Only managed policies of our own making: none attached to the function roles.
      expect(template.toJSON().Resources[ids.role].Properties.ManagedPolicyArns).toBeUndefined();
    });

    /** Every function's grants: the operations' (their routes'), the authorizer's and the key audit's two. */
    const allGrants = (Object.entries(tableAccess) as Array<[FunctionName, readonly TableAccess[]]>)
      // The expiry and idempotency sweeps are the home region's stack's only.
      .filter(([name]) => name !== 'keyExpiry' || stack.keyAudit.expirySweep !== undefined)
      .filter(([name]) => name !== 'idempotencySweep' || stack.idempotencySweep !== undefined)
      // The health probe is a stage in several regions' only (its Route 53 health check follows it).
      .filter(([name]) => name !== 'healthProbe' || stack.healthProbe !== undefined)
      .flatMap(([name, grants]) => grants.map((grant) => ({ name, grant })));

    it('grants no wildcard DynamoDB action, no data access on "*", no delete but of an idempotency record by its key and expiry, and updates of named attributes only', () => {
      const statements = resourcesOf(template, 'AWS::IAM::Policy').flatMap(
        ({ properties }) => (properties.PolicyDocument as { Statement: Array<{ Action: string | string[]; Resource: unknown }> }).Statement,
      );
      for (const statement of statements) {
        const actions = [statement.Action].flat();
        if (!actions.some((action) => action.startsWith('dynamodb:'))) continue;
        expect(actions.every((action) => !action.includes('*'))).toBe(true);
        // Listing a table's stream ARNs (the audit's stream mapping) has no resource-level permission; it reads no data.
        if (statement.Resource === '*') expect(actions).toEqual(['dynamodb:ListStreams']);
        // Nothing is ever deleted but an idempotency record, by a DeleteItem alone in its statement that
        // names the record's key and expiry only; records are otherwise only put, never updated.
        expect(actions).not.toEqual(expect.arrayContaining([expect.stringMatching(/^dynamodb:(BatchWriteItem|DeleteTable|PartiQL)/)]));
        if (actions.includes('dynamodb:DeleteItem')) {
          expect(actions).toEqual(['dynamodb:DeleteItem']);
          expect(statement.Resource).toEqual(tableArn('idempotency'));
          expect((statement as { Condition?: unknown }).Condition).toEqual({
            'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['id', 'expiresAt'] },
            Null: { 'dynamodb:Attributes': 'false' },
            StringEqualsIfExists: { 'dynamodb:ReturnValues': ['NONE'] },
          });
        }
        if (actions.includes('dynamodb:UpdateItem')) expect(statement.Resource).not.toEqual(tableArn('idempotency'));
      }
      // Each UpdateItem is alone in its statement, on a table (never an index), restricted to the
      // attributes its grant names and asking nothing back (ALL_OLD or ALL_NEW would return the
      // others): one statement per update grant, whichever function holds it.
      const updates = statements.filter((statement) => [statement.Action].flat().includes('dynamodb:UpdateItem'));
      const updateGrants = allGrants.filter(({ grant }) => grant.actions.includes('dynamodb:UpdateItem'));
      expect(updateGrants.length).toBeGreaterThan(0);
      expect(updates).toHaveLength(updateGrants.length);
      expect(updates).toEqual(
        expect.arrayContaining(
          updateGrants.map(({ grant }) => ({
            Effect: 'Allow',
            Action: 'dynamodb:UpdateItem',
            Resource: tableArn(grant.table),
            Condition: expect.any(Object),
          })),
        ),
      );
      for (const { name, grant } of updateGrants) {
        expect(grant, name).toMatchObject({ actions: ['dynamodb:UpdateItem'], attributes: expect.any(Array), returnValues: ['NONE'] });
        expect(grant.index, name).toBeUndefined();
        // IAM's dynamodb:Attributes names the key too: an update grant without it allows nothing.
        expect(grant.attributes, name).toContain(tableDefinitions[grant.table].partitionKey.name);
        // A key's update can neither widen what the key may do nor make it another key.
        if (grant.table === 'apiKeys') {
          for (const widening of ['scopes', 'name', 'keyId', 'replacedBy', 'createdAt'])
            expect(grant.attributes, name).not.toContain(widening);
        }
      }
      // The expiry sweep (its expiredAt) alone updates a key, in the home region's stack (no function
      // of another region's writes a key); the authorizer updates a key's last use only.
      expect(updateGrants.filter(({ grant }) => grant.table === 'apiKeys').map(({ name }) => name)).toEqual(
        stack.keyAudit.expirySweep ? ['keyExpiry'] : [],
      );
      expect(updateGrants.filter(({ grant }) => grant.table === 'apiKeyLastUse').map(({ name }) => name)).toEqual(['authorizer']);
      expect(tableAccess.listPets).toContainEqual({ table: 'pets', index: petsStatusIndex.indexName, actions: ['dynamodb:Query'] });
    });
    it('lets a grant with attributes name exactly those, its key among them, and ask back only its return values (IAM simulation)', async () => {
      const json = template.toJSON() as CfnTemplate;
      const resolver = templateResolver(json, stack.region);
      const functions = functionsOf(json, `${PROJECT_NAME}-${stage}-`);
      const limited = allGrants.filter(({ grant }) => grant.attributes !== undefined || grant.returnValues !== undefined);
      expect(limited.length).toBeGreaterThan(0);
      for (const { name, grant } of limited) {
        const functionId = functions.get(name);
        if (functionId === undefined) throw new Error(`no function ${name} in the template`);
        const { roleArn, policies } = rolePoliciesOf(json, resolver, functionId);
        const table = String(resolver.resolve(tableArn(grant.table)));
        const resource = grant.index === undefined ? table : `${table}/index/${grant.index}`;
        const attributes = grant.attributes ?? [tableDefinitions[grant.table].partitionKey.name];
        const otherReturnValues = RETURN_VALUES.filter((value) => grant.returnValues !== undefined && !grant.returnValues.includes(value));
        for (const action of grant.actions) {
          const decision = async (context: Record<string, string | string[]>) =>
            (await simulate({ function: name, action, resource, context, by: 'code' }, roleArn, policies)).decision;
          const label = `${name} ${action} on ${grant.table}`;
          expect(await decision({ 'dynamodb:Attributes': [...attributes] }), label).toBe('Allowed');
          for (const returnValues of grant.returnValues ?? [])
            expect(await decision({ 'dynamodb:Attributes': [...attributes], 'dynamodb:ReturnValues': returnValues }), label).toBe(
              'Allowed',
            );
          for (const returnValues of otherReturnValues)
            expect(await decision({ 'dynamodb:Attributes': [...attributes], 'dynamodb:ReturnValues': returnValues }), label).not.toBe(
              'Allowed',
            );
          if (grant.attributes === undefined) continue;
          // One attribute more than the grant's, and none at all (ForAllValues alone would allow that).
          expect(await decision({ 'dynamodb:Attributes': [...attributes, NOT_GRANTED_ATTRIBUTE] }), label).not.toBe('Allowed');
          expect(await decision({}), label).not.toBe('Allowed');
        }
      }
    });
  });

  // The home region's stack (or a stage's one region's) defines the tables; the others import them.
  const describeTables = stack.isHomeRegion
    ? describe
    : (name: string) =>
        describe(name, () => {
          it("defines no table: it imports its replicas of the home region's (test/infra/regions.test.ts)", () => {
            expect(resourcesOf(template, 'AWS::DynamoDB::GlobalTable')).toEqual([]);
            expect(resourcesOf(template, 'AWS::DynamoDB::Table')).toEqual([]);
          });
        });
  describeTables('DynamoDB', () => {
    const tableProperties = (definitionId: string) => {
      const table = resourcesOf(template, 'AWS::DynamoDB::GlobalTable').find(({ logicalId }) =>
        logicalId.startsWith(`Tables${definitionId}`),
      );
      if (!table) throw new Error(`no table ${definitionId}`);
      return table;
    };
    /** The table's replicas: one in each of the stage's regions (a stage in one region: the stack's). */
    const replicasOf = (definitionId: string) => {
      const replicas = tableProperties(definitionId).properties.Replicas as Array<Record<string, unknown>>;
      expect(replicas.map(({ Region }) => Region).sort()).toEqual([...(settings.regions ?? [stack.region])].sort());
      return replicas;
    };
    const multiRegion = isMultiRegion(settings);
    /** The table's every region sees each write at once: the idempotency records, in a stage in several regions. */
    const strong = (definitionId: string) => multiRegion && definitionId === idempotencyTable.id;

    it.each(Object.values(tableDefinitions))(
      "$id: a global table (replicas can be added later to no other kind), named after the stage and the table's definition",
      (definition) => {
        expect(tableProperties(definition.id).properties.TableName).toBe(`pet-store-${stage}-${definition.defaultName}`);
        replicasOf(definition.id);
        expect(tableProperties(definition.id).properties.MultiRegionConsistency).toBe(strong(definition.id) ? 'STRONG' : undefined);
      },
    );

    it('keys the pets table by id (N), on demand, with the status index on status shards, sorted by id', () => {
      expect(tableProperties(petsTable.id).properties).toMatchObject({
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: expect.arrayContaining([
          { AttributeName: 'id', AttributeType: 'N' },
          { AttributeName: 'statusShard', AttributeType: 'S' },
        ]),
        GlobalSecondaryIndexes: [
          {
            IndexName: petsStatusIndex.indexName,
            KeySchema: [
              { AttributeName: 'statusShard', KeyType: 'HASH' },
              { AttributeName: 'id', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
        ],
      });
    });

    it('keys the API-keys table by key hash, with the id index (keys only), the expiry index and the usage-key release index (keys only)', () => {
      expect(tableProperties(apiKeysTable.id).properties).toMatchObject({
        KeySchema: [{ AttributeName: 'keyHash', KeyType: 'HASH' }],
        AttributeDefinitions: expect.arrayContaining([
          { AttributeName: 'keyHash', AttributeType: 'S' },
          { AttributeName: 'keyId', AttributeType: 'S' },
          { AttributeName: 'expiryQueue', AttributeType: 'S' },
          { AttributeName: 'expiryDueAt', AttributeType: 'S' },
          { AttributeName: 'usageKeyRelease', AttributeType: 'S' },
        ]),
        BillingMode: 'PAY_PER_REQUEST',
        GlobalSecondaryIndexes: [
          {
            IndexName: apiKeysIdIndex.indexName,
            KeySchema: [{ AttributeName: 'keyId', KeyType: 'HASH' }],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
          {
            IndexName: apiKeysExpiryIndex.indexName,
            KeySchema: [
              { AttributeName: 'expiryQueue', KeyType: 'HASH' },
              { AttributeName: 'expiryDueAt', KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
          {
            IndexName: apiKeysUsageKeyReleaseIndex.indexName,
            KeySchema: [{ AttributeName: 'usageKeyRelease', KeyType: 'HASH' }],
            Projection: { ProjectionType: 'KEYS_ONLY' },
          },
        ],
      });
    });

    it("keys the keys' last-use table by key hash, with no index and no stream of its own: a use is no change of a key", () => {
      const { properties } = tableProperties(apiKeyLastUseTable.id);
      expect(properties).toMatchObject({
        KeySchema: [{ AttributeName: 'keyHash', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'keyHash', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
      });
      expect(properties).not.toHaveProperty('GlobalSecondaryIndexes');
      // A global table with replicas streams, for its replication (CloudFormation requires it): nothing reads it.
      expect(properties.StreamSpecification).toEqual(multiRegion ? { StreamViewType: 'NEW_AND_OLD_IMAGES' } : undefined);
    });

    it('keys the idempotency table by id (S), with no index (the sweep reads the table: an index would cost each put and delete a write more) and no TTL (a strongly consistent global table has none)', () => {
      const { properties } = tableProperties(idempotencyTable.id);
      expect(properties).toMatchObject({ KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }], BillingMode: 'PAY_PER_REQUEST' });
      expect(properties.AttributeDefinitions).toEqual([{ AttributeName: 'id', AttributeType: 'S' }]);
      expect(properties).not.toHaveProperty('GlobalSecondaryIndexes');
      expect(properties).not.toHaveProperty('TimeToLiveSpecification');
    });

    it.each(Object.values(tableDefinitions).map((table) => table.id))(
      '%s: point-in-time recovery and AWS-managed (KMS) encryption',
      (id) => {
        for (const replica of replicasOf(id)) {
          expect(replica).toMatchObject({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } });
          expect(replica).not.toHaveProperty('SSESpecification');
        }
        expect(tableProperties(id).properties).toMatchObject({ SSESpecification: { SSEEnabled: true, SSEType: 'KMS' } });
      },
    );

    it.each(Object.values(tableDefinitions).map((table) => table.id))(
      `%s: ${isProd ? 'retained except when its create rolls back' : 'destroyed with the stack'}, no deletion protection in its template`,
      (id) => {
        expect(tableProperties(id).deletionPolicy).toBe(isProd ? 'RetainExceptOnCreate' : 'Delete');
        // In the template it would stop a rolled-back create: the stack turns it on last (test/infra/deploy-rules.test.ts).
        expect(tableProperties(id).properties).not.toHaveProperty('DeletionProtectionEnabled');
        for (const replica of replicasOf(id)) expect(replica).not.toHaveProperty('DeletionProtectionEnabled');
      },
    );
  });

  describe('key audit trail', () => {
    const idOf = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as CfnFunction);
    const writer = () => stack.keyAudit.writer;
    const sweep = () => expirySweepOf(synthesized);
    const resource = (logicalId: string) =>
      template.toJSON().Resources[logicalId] as { Properties: Record<string, unknown>; DeletionPolicy?: string };

    it('streams the keys table with the item before and after each write', () => {
      // Another region's stack imports its replica, and reads its stream (test/infra/regions.test.ts).
      if (!stack.isHomeRegion) return expect(resourcesOf(template, 'AWS::DynamoDB::GlobalTable')).toEqual([]);
      const keysTableId = () => idOf(stack.tables.apiKeys);
      expect(resource(keysTableId()).Properties.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
      // The others stream only where they have replicas, for their replication.
      const replicated = isMultiRegion(settings) ? { StreamViewType: 'NEW_AND_OLD_IMAGES' } : undefined;
      for (const other of ['pets', 'idempotency'] as const) {
        expect(resource(idOf(stack.tables[other])).Properties.StreamSpecification).toEqual(replicated);
      }
    });

    it(`writes the trail to /pet-store/key-audit/<keys table>, kept ten years${isProd ? ' and retained with the stack' : ''}`, () => {
      const logGroup = resource(idOf(writer().logGroup));
      expect(logGroup.Properties).toMatchObject({
        LogGroupName: stack.resolve(`/pet-store/key-audit/${stack.tables.apiKeys.tableName}`),
        RetentionInDays: 3653,
      });
      expect(logGroup.DeletionPolicy).toBe(isProd ? 'RetainExceptOnCreate' : 'Delete');
      const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
      expect(outputs[stackOutputs.keyAuditLogGroupName]?.Value).toEqual({ Ref: idOf(writer().logGroup) });
    });

    it("is the key-audit function's own log group, with only the function's lines in it, at a level of its own", () => {
      expect(resource(idOf(writer().function)).Properties).toMatchObject({
        FunctionName: `pet-store-${stage}-keyAudit`,
        LoggingConfig: {
          LogFormat: 'JSON',
          LogGroup: { Ref: idOf(writer().logGroup) },
          SystemLogLevel: 'WARN',
          ApplicationLogLevel: AUDIT_LOG_LEVEL,
        },
        Environment: { Variables: expect.objectContaining({ POWERTOOLS_LOG_LEVEL: AUDIT_LOG_LEVEL }) },
      });
    });

    it('reads the stream from its oldest record, bisecting and retrying a failing batch, then parking it in an encrypted queue', () => {
      const [mapping, ...others] = resourcesOf(template, 'AWS::Lambda::EventSourceMapping');
      expect(others).toEqual([]);
      const queueId = idOf(stack.keyAudit.failedBatches);
      expect(mapping?.properties).toMatchObject({
        EventSourceArn: keysStreamRef(),
        StartingPosition: 'TRIM_HORIZON',
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: 10,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [queueId, 'Arn'] } } },
      });
      // The writer's live alias, by its name (`<function>:live`).
      expect(JSON.stringify(mapping?.properties.FunctionName)).toContain(`{"Ref":"${idOf(writer().alias)}"}`);
      expect(resource(queueId).Properties).toMatchObject({ SqsManagedSseEnabled: true });
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: queueId }],
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        },
      });
    });

    it('alarms when the queue holds a batch, when the writer falls 5 minutes behind the stream, and on either function failing', () => {
      const alarms = resourcesOf(template, 'AWS::CloudWatch::Alarm').map(({ properties }) => properties);
      expect(alarms).toContainEqual(
        expect.objectContaining({
          Namespace: 'AWS/Lambda',
          MetricName: 'IteratorAge',
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: idOf(writer().function) } }],
          Statistic: 'Maximum',
          Period: 300,
          Threshold: 300_000,
          ComparisonOperator: 'GreaterThanThreshold',
        }),
      );
      expect(alarms).toContainEqual(
        expect.objectContaining({
          Namespace: 'AWS/SQS',
          MetricName: 'ApproximateNumberOfMessagesVisible',
          Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [idOf(stack.keyAudit.failedBatches), 'QueueName'] } }],
          Threshold: 1,
        }),
      );
      for (const fn of [writer(), ...(stack.keyAudit.expirySweep ? [sweep()] : [])]) {
        expect(alarms).toContainEqual(
          expect.objectContaining({ MetricName: 'Errors', Dimensions: [{ Name: 'FunctionName', Value: { Ref: idOf(fn.function) } }] }),
        );
      }
    });

    it("lets the writer read the stream, park failures and flush its own stage's authorizer cache, and nothing of any table", () => {
      const statements = policyStatementsOf(template, idOf(writer().function.role as unknown as { node: { defaultChild?: unknown } }));
      const sortActions = (list: Array<Record<string, unknown>>) =>
        list.map((statement) => ({ ...statement, Action: [statement.Action].flat().sort() }));
      expect(sortActions(statements)).toEqual(
        sortActions([
          {
            Effect: 'Allow',
            Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
            Resource: { 'Fn::GetAtt': [idOf(writer().logGroup), 'Arn'] },
          },
          { Effect: 'Allow', Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'], Resource: '*' },
          // FlushStageAuthorizersCache of this stage, once a key change reaches the region's replica.
          {
            Effect: 'Allow',
            Action: 'apigateway:DELETE',
            Resource: {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  ':apigateway:',
                  { Ref: 'AWS::Region' },
                  '::/restapis/',
                  { Ref: idOf(stack.api.api) },
                  `/stages/${STAGE_NAME}/cache/authorizers`,
                ],
              ],
            },
          },
          {
            Effect: 'Allow',
            Action: 'sqs:SendMessage',
            Resource: { 'Fn::GetAtt': [idOf(stack.keyAudit.failedBatches), 'Arn'] },
          },
          { Effect: 'Allow', Action: 'dynamodb:ListStreams', Resource: '*' },
          {
            Effect: 'Allow',
            Action: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
            Resource: keysStreamRef(),
          },
        ]),
      );
      const variables = (resource(idOf(writer().function)).Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables).not.toHaveProperty(apiKeysTable.nameVariable);
      expect(variables).toMatchObject({ [REST_API_ID_VARIABLE]: { Ref: idOf(stack.api.api) }, [API_STAGE_NAME_VARIABLE]: STAGE_NAME });
    });

    /** The ARNs of `path` under API Gateway in the stage's regions, as the template writes them; the stack's own region for a stage in one. */
    const apiKeysArns = (path: string) => {
      const arns = settings.regions
        ? settings.regions.map((region) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:apigateway:${region}::${path}`]] }))
        : [{ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':apigateway:', { Ref: 'AWS::Region' }, `::${path}`]] }];
      return arns.length === 1 ? arns[0] : arns;
    };

    it("runs the expiry sweep every minute, allowed to query the keys table's expiry and release indexes, read and update the keys table, flush its stage's authorizer cache, and list and delete API keys, only", () => {
      // In the home region only: another region's stack has no sweep, and no schedule but its health probe's.
      if (!stack.isHomeRegion) {
        const targets = resourcesOf(template, 'AWS::Events::Rule').map(({ properties }) =>
          (properties.Targets as Array<{ Arn: unknown }>).map((target) => target.Arn),
        );
        return expect(targets).toEqual([[{ Ref: stack.healthProbe && idOf(stack.healthProbe.probe.alias) }]]);
      }
      const sweepId = idOf(sweep().function);
      const restApiId = idOf(stack.api.api);
      template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: 'rate(1 minute)',
        Targets: [Match.objectLike({ Arn: { Ref: idOf(sweep().alias) } })],
      });
      expect(resource(sweepId).Properties).toMatchObject({
        FunctionName: `pet-store-${stage}-keyExpiry`,
        Environment: {
          Variables: {
            [apiKeysTable.nameVariable]: tableNameRef('apiKeys'),
            [REST_API_ID_VARIABLE]: { Ref: restApiId },
            [API_STAGE_NAME_VARIABLE]: STAGE_NAME,
          },
        },
      });
      const statements = policyStatementsOf(template, idOf(sweep().function.role as unknown as { node: { defaultChild?: unknown } }));
      expect(statements.filter((statement) => JSON.stringify(statement.Action).includes('dynamodb:'))).toEqual([
        {
          Effect: 'Allow',
          Action: 'dynamodb:Query',
          Resource: tableArnRef('apiKeys', apiKeysExpiryIndex.indexName),
        },
        {
          Effect: 'Allow',
          Action: 'dynamodb:Query',
          Resource: tableArnRef('apiKeys', apiKeysUsageKeyReleaseIndex.indexName),
        },
        { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: tableArnRef('apiKeys') },
        expect.objectContaining({
          Action: 'dynamodb:UpdateItem',
          Resource: tableArnRef('apiKeys'),
          Condition: expect.anything(),
        }),
      ]);
      // FlushStageAuthorizersCache: DELETE on the v1 stage's cache/authorizers path of this API, nothing wider.
      expect(statements.filter((statement) => JSON.stringify(statement.Action).includes('apigateway:'))).toEqual([
        {
          Effect: 'Allow',
          Action: 'apigateway:DELETE',
          Resource: {
            'Fn::Join': [
              '',
              [
                'arn:',
                { Ref: 'AWS::Partition' },
                ':apigateway:',
                { Ref: 'AWS::Region' },
                '::/restapis/',
                { Ref: restApiId },
                `/stages/${STAGE_NAME}/cache/authorizers`,
              ],
            ],
          },
        },
        // DeleteApiKey of any API key (their ids are made at run time), and GetApiKeys: nothing else on
        // /apikeys, in the stack's region, or in each region of a stage in several (API keys are regional).
        { Effect: 'Allow', Action: 'apigateway:DELETE', Resource: apiKeysArns('/apikeys/*') },
        { Effect: 'Allow', Action: 'apigateway:GET', Resource: apiKeysArns('/apikeys') },
      ]);
      // No other function may flush it but the audit's (above).
      for (const other of [stack.functions.authorizer.function, ...[...stack.functions.operations.values()].map((fn) => fn.function)]) {
        const grants = policyStatementsOf(template, idOf(other.role as unknown as { node: { defaultChild?: unknown } }));
        expect(JSON.stringify(grants)).not.toContain('apigateway:');
      }
    });
  });

  describe('monitoring', () => {
    /** The dashboard's JSON with each CloudFormation reference replaced by its logical id. */
    const dashboardBody = () => {
      const body = resourcesOf(template, 'AWS::CloudWatch::Dashboard')[0]?.properties.DashboardBody as { 'Fn::Join': [string, unknown[]] };
      return body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : JSON.stringify(part).replace(/"/g, ''))).join('');
    };

    it('has a dashboard with requests, errors, latency, functions, the authorizer and DynamoDB', () => {
      template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
      // Its region's own: an account holds a dashboard name once, whatever the region (test/infra/account-wide-names.test.ts).
      template.hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: dashboardNameOf(`pet-store-${stage}`, stack.region) });
      const body = dashboardBody();
      for (const metric of [
        '"Count"',
        '"4XXError"',
        '"5XXError"',
        '"Latency"',
        '"p50"',
        '"p99"',
        '"Errors"',
        '"Throttles"',
        '"Duration"',
        '"ConcurrentExecutions"',
        '"Invocations"',
        'ReadThrottleEvents',
        'WriteThrottleEvents',
        '"ConsumedReadCapacityUnits"',
        '"ConsumedWriteCapacityUnits"',
      ]) {
        expect(body).toContain(metric);
      }
      expect(body).toContain('Authorizer');
      expect(body).toContain(petsStatusIndex.indexName);
      // The functions' EMF metrics, by operation, and errors by code.
      for (const metric of [
        '"PetStore"',
        '"Requests"',
        '"PetsCreated"',
        '"IdempotentReplays"',
        '"operation"',
        '"createPet"',
        'MetricName=\\"Errors\\"',
        'errorCode',
      ]) {
        expect(body).toContain(metric);
      }
    });

    it("alarms on the 5xx rate, p99 latency, each function's errors and DynamoDB throttles, to one SNS topic", () => {
      // Monitoring's own alarms (a gradual release has its own: test/infra/release.test.ts).
      const monitored = new Set(stack.monitoring.alarms.map((alarm) => stack.getLogicalId(alarm.node.defaultChild as CfnFunction)));
      const alarms = resourcesOf(template, 'AWS::CloudWatch::Alarm')
        .filter(({ logicalId }) => monitored.has(logicalId))
        .map(({ properties }) => properties);
      const [topic] = resourcesOf(template, 'AWS::SNS::Topic');
      for (const alarm of alarms) {
        expect(alarm.AlarmActions).toEqual([{ Ref: topic?.logicalId }]);
        expect(alarm.OKActions).toEqual([{ Ref: topic?.logicalId }]);
        expect(alarm.TreatMissingData).toBe('notBreaching');
      }
      // The 5xx rate as metric math, the not-implemented routes' 501s left out (test/infra/release.test.ts has each query).
      expect(alarms).toContainEqual(
        expect.objectContaining({
          Threshold: 0.01,
          Metrics: expect.arrayContaining([expect.objectContaining({ Expression: '(errors - FILL(notImplemented0, 0)) / requests' })]),
        }),
      );
      expect(alarms).toContainEqual(expect.objectContaining({ MetricName: 'Latency', ExtendedStatistic: 'p99', Threshold: 1000 }));
      const functionErrorAlarms = alarms.filter((alarm) => alarm.MetricName === 'Errors' && alarm.Namespace === 'AWS/Lambda');
      // Every function but the authorizer (its failures instead, below), the key audit's writer, and the sweeps where they run.
      expect(functionErrorAlarms).toHaveLength(
        functionNames.length - 1 + 1 + (stack.keyAudit.expirySweep ? 1 : 0) + (stack.idempotencySweep ? 1 : 0),
      );
      const alarmedFunctions = functionErrorAlarms.map((alarm) => JSON.stringify(alarm.Dimensions));
      for (const name of functionNames.filter((name) => name !== 'authorizer')) {
        expect(alarmedFunctions).toContainEqual(expect.stringContaining(logicalIdOf(synthesized, name).function));
      }
      const throttleAlarms = alarms.filter((alarm) => JSON.stringify(alarm.Metrics ?? '').includes('ThrottleEvents'));
      expect(throttleAlarms).toHaveLength(Object.keys(tableDefinitions).length); // one per table
      expect(JSON.stringify(throttleAlarms)).toContain(petsStatusIndex.indexName);
    });

    it(`alarms on the idempotency sweep's errors ${stack.isHomeRegion ? 'in the stack that runs it' : 'nowhere: this region runs no sweep'}`, () => {
      const sweepErrors = resourcesOf(template, 'AWS::CloudWatch::Alarm')
        .map(({ properties }) => properties)
        .filter((alarm) => alarm.MetricName === 'Errors' && JSON.stringify(alarm.AlarmDescription).includes('idempotency sweep'));
      const sweep = stack.idempotencySweep?.sweep.function;
      expect(Boolean(sweep)).toBe(stack.isHomeRegion);
      expect(sweepErrors).toEqual(
        sweep
          ? [
              expect.objectContaining({
                Namespace: 'AWS/Lambda',
                Dimensions: [{ Name: 'FunctionName', Value: { Ref: stack.getLogicalId(sweep.node.defaultChild as CfnFunction) } }],
                Statistic: 'Sum',
                Period: 300,
                Threshold: 1,
                ComparisonOperator: 'GreaterThanOrEqualToThreshold',
              }),
            ]
          : [],
      );
    });

    it(`alarms on the keys table's replication ${stack.isHomeRegion && isMultiRegion(settings) ? 'to each other region of the stage, where DynamoDB publishes it (the home region)' : 'nowhere from this stack'}`, () => {
      const replication = resourcesOf(template, 'AWS::CloudWatch::Alarm')
        .map(({ properties }) => properties)
        .filter((alarm) => alarm.MetricName === 'ReplicationLatency');
      const receivingRegions =
        stack.isHomeRegion && isMultiRegion(settings) ? (settings.regions ?? []).filter((region) => region !== stack.region) : [];
      expect(replication).toHaveLength(receivingRegions.length);
      for (const region of receivingRegions) {
        expect(replication).toContainEqual(
          expect.objectContaining({
            Namespace: 'AWS/DynamoDB',
            Dimensions: expect.arrayContaining([
              { Name: 'TableName', Value: tableNameRef('apiKeys') },
              { Name: 'ReceivingRegion', Value: region },
            ]),
            Statistic: 'Average',
            Period: 300,
            Threshold: KEYS_REPLICATION_LATENCY_THRESHOLD_MS,
            ComparisonOperator: 'GreaterThanThreshold',
            EvaluationPeriods: 1,
          }),
        );
      }
    });

    it("alarms on the authorizer's failures, counted from its log, and not on its Errors, which count every refused key", () => {
      const ids = logicalIdOf(synthesized, 'authorizer');
      const alarms = resourcesOf(template, 'AWS::CloudWatch::Alarm').map(({ properties }) => properties);
      // Monitoring's own (a gradual release has one on the same metric: test/infra/release.test.ts).
      const monitored = new Set(stack.monitoring.alarms.map((alarm) => stack.getLogicalId(alarm.node.defaultChild as CfnFunction)));
      const operational = resourcesOf(template, 'AWS::CloudWatch::Alarm')
        .filter(({ logicalId }) => monitored.has(logicalId))
        .map(({ properties }) => properties);
      expect(JSON.stringify(alarms.filter((alarm) => alarm.MetricName === 'Errors'))).not.toContain(ids.function);
      expect(JSON.stringify(alarms.filter((alarm) => alarm.MetricName === 'Errors'))).not.toContain(ids.alias);

      // The access log's filters are test/infra/console.test.ts's.
      const filters = resourcesOf(template, 'AWS::Logs::MetricFilter')
        .map(({ properties }) => properties)
        .filter((filter) => JSON.stringify(filter.LogGroupName) === JSON.stringify({ Ref: ids.logGroup }));
      expect(filters).toEqual([
        {
          LogGroupName: { Ref: ids.logGroup },
          FilterPattern: '{ $.decision = "fail" }',
          // By the line's service: each stage in the account counts its own failures.
          MetricTransformations: [
            {
              MetricNamespace: 'PetStore',
              MetricName: 'AuthorizerFailures',
              MetricValue: '1',
              Dimensions: [{ Key: 'service', Value: '$.service' }],
            },
          ],
        },
      ]);
      const [topic] = resourcesOf(template, 'AWS::SNS::Topic');
      expect(operational.filter((alarm) => alarm.MetricName === 'AuthorizerFailures')).toEqual([
        expect.objectContaining({
          Namespace: 'PetStore',
          Statistic: 'Sum',
          Period: 300,
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          EvaluationPeriods: 1,
          TreatMissingData: 'notBreaching',
          AlarmActions: [{ Ref: topic?.logicalId }],
          AlarmDescription: expect.stringContaining('ServerErrorRate'),
          Dimensions: [{ Name: 'service', Value: `pet-store-${stage}` }],
        }),
      ]);
      // The service the authorizer's lines carry, which the filter counts them under.
      const authorizer = template.toJSON().Resources[ids.function] as {
        Properties: { Environment: { Variables: Record<string, unknown> } };
      };
      expect(authorizer.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME).toBe(`pet-store-${stage}`);
    });

    it("graphs the stage's own service only: its EMF metrics, errors by code and the authorizer's failures", () => {
      const service = `pet-store-${stage}`;
      const widgets = (JSON.parse(dashboardBody()) as { widgets: Array<{ properties: { metrics?: unknown[][] } }> }).widgets;
      const metrics = widgets.flatMap(({ properties }) => properties.metrics ?? []);
      // Each metric of the namespace, by name, with its dimensions (CloudWatch's [namespace, name, key, value, …, options] form).
      const own = metrics
        // The access log's metrics are by API, not service: test/infra/console.test.ts.
        .filter(([namespace, name]) => namespace === 'PetStore' && !Object.values<unknown>(THROTTLING_METRICS).includes(name))
        .map(([, name, ...rest]) => {
          const pairs = rest.filter((part) => typeof part === 'string');
          return { name, dimensions: Object.fromEntries(pairs.flatMap((part, i) => (i % 2 === 0 ? [[part, pairs[i + 1]]] : []))) };
        });
      // Requests by operation, one per operation with a function; what createPet did; the authorizer's failures.
      expect(own.filter(({ name }) => name === 'Requests').map(({ dimensions }) => dimensions.operation)).toEqual([...handledOperationIds]);
      // The API keys held, where the expiry sweep counts them (the home region's stack): by Region in a stage in several.
      const usageKeys = !stack.keyAudit.expirySweep ? [] : (settings.regions ?? [undefined]).map((region) => ['UsageKeys', region]);
      expect(
        own
          .filter(({ name }) => name !== 'Requests')
          .map(({ name, dimensions }) => [name, dimensions.operation ?? dimensions[USAGE_KEYS_REGION_DIMENSION]])
          .sort(),
      ).toEqual([['AuthorizerFailures', undefined], ['IdempotentReplays', 'createPet'], ['PetsCreated', 'createPet'], ...usageKeys].sort());
      for (const { name, dimensions } of own) expect(dimensions.service, String(name)).toBe(service);
      // The errors by code: a SEARCH of this service's only.
      const searches = metrics
        .map(([first]) => (first as { expression?: string } | undefined)?.expression ?? '')
        .filter((expression) => expression.startsWith('SEARCH('));
      expect(searches).toEqual([`SEARCH('{PetStore,service,operation,errorCode} MetricName="Errors" service="${service}"', 'Sum', 300)`]);
    });

    it('graphs the API keys the account holds against its quota, and alarms at 80% of it', () => {
      const alarms = resourcesOf(template, 'AWS::CloudWatch::Alarm').filter(({ logicalId }) =>
        logicalId.startsWith('MonitoringUsageKeysNearLimit'),
      );
      // Only the stack that counts them (its stage's home region's) has them: the sweep publishes
      // UsageKeys in its own region, so another region's graph and alarm would never see a value.
      if (!stack.keyAudit.expirySweep) {
        expect(dashboardBody()).not.toContain('"UsageKeys"');
        return expect(alarms).toEqual([]);
      }
      expect(dashboardBody()).toContain('"PetStore","UsageKeys"');
      expect(alarms).toHaveLength(1);
      const threshold = { Threshold: 8000, ComparisonOperator: 'GreaterThanOrEqualToThreshold' };
      const service = { Name: 'service', Value: `pet-store-${stage}` };
      if (!settings.regions) {
        template.hasResourceProperties('AWS::CloudWatch::Alarm', {
          MetricName: 'UsageKeys',
          Namespace: 'PetStore',
          Dimensions: [service],
          Statistic: 'Maximum',
          Period: 3600,
          ...threshold,
        });
        return;
      }
      // A stage in several regions: the fullest region's count, each region's its own UsageKeys by Region.
      const { Metrics: metrics, ...properties } = alarms[0]?.properties as { Metrics: Array<Record<string, unknown>> };
      expect(properties).toMatchObject(threshold);
      const inputs = metrics.filter(({ MetricStat }) => MetricStat !== undefined);
      expect(metrics.filter(({ Expression }) => Expression !== undefined)).toEqual([
        expect.objectContaining({ Expression: `MAX([${inputs.map(({ Id }) => String(Id)).join(', ')}])` }),
      ]);
      expect(inputs.map(({ MetricStat }) => MetricStat)).toEqual(
        settings.regions.map((region) => ({
          Metric: {
            MetricName: 'UsageKeys',
            Namespace: 'PetStore',
            Dimensions: expect.arrayContaining([service, { Name: USAGE_KEYS_REGION_DIMENSION, Value: region }]) as unknown,
          },
          Stat: 'Maximum',
          Period: 3600,
        })),
      );
    });

    it("shows the authorizer's failures on the dashboard, and its errors as including refusals", () => {
      const body = dashboardBody();
      expect(body).toContain('"PetStore","AuthorizerFailures"');
      expect(body).toContain('"label":"errors (refusals included)"');
      expect(body).toContain('"label":"authorizer (refusals included)"');
    });

    it('has no e-mail subscription unless the stage names an address', () => {
      template.resourceCountIs('AWS::SNS::Subscription', 0);
      template.hasResourceProperties('AWS::SNS::TopicPolicy', {
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        },
      });
    });
  });
});

describe('stage differences', () => {
  it('prod keeps logs for a year, staging for a month; prod throttles higher and caches keys for 5 minutes', () => {
    expect(stages.prod.settings).toMatchObject({ logRetention: RetentionDays.ONE_YEAR, authorizerCacheTtlSeconds: 300 });
    expect(stages.staging.settings).toMatchObject({ logRetention: RetentionDays.ONE_MONTH, authorizerCacheTtlSeconds: 60 });
    expect(stages.prod.settings.throttle.rateLimit).toBeGreaterThan(stages.staging.settings.throttle.rateLimit);
  });

  it("tells the functions granted the pets table the stage's status index shards, and no other function", () => {
    for (const [stage, synthesized] of Object.entries(stages)) {
      for (const name of functionNames) {
        const variables = (
          synthesized.template.toJSON().Resources[logicalIdOf(synthesized, name).function].Properties.Environment as {
            Variables: Record<string, unknown>;
          }
        ).Variables;
        const granted = tableAccess[name].some(({ table }) => table === 'pets');
        expect(variables[STATUS_SHARDS_VARIABLE], `${stage} ${name}`).toBe(
          granted ? String(synthesized.settings.statusIndexShards) : undefined,
        );
      }
    }
    expect(tableAccess.listPets.map(({ table }) => table)).toContain('pets');
  });

  it("runs each stage's functions, the key audit's and the hook's included, under its own service, so that their metrics never mix", () => {
    // But CDK's provider of AwsCustomResources (a replica's stream read, in a stage's other regions), which runs none of our code.
    const cdkProvider = `AWS${AwsCustomResource.PROVIDER_FUNCTION_UUID.replace(/-/g, '')}`;
    const servicesOf = ({ template }: SynthesizedStage) =>
      resourcesOf(template, 'AWS::Lambda::Function')
        .filter(({ logicalId }) => !logicalId.startsWith(cdkProvider))
        .map(({ properties }) => (properties.Environment as { Variables: Record<string, unknown> }).Variables.POWERTOOLS_SERVICE_NAME);
    // The API's four, the key audit's two and, on a gradual release, the pre-traffic hook.
    for (const [stage, synthesized] of Object.entries(stages)) {
      const services = servicesOf(synthesized);
      expect(services.length, stage).toBeGreaterThanOrEqual(functionNames.length + 2);
      expect(new Set(services), stage).toEqual(new Set([`pet-store-${stage}`]));
    }
    expect(servicesOf(stages.staging)).not.toContain('pet-store-prod');
  });
});

describe('optional stage settings', () => {
  const origins = ['https://app.example.com', 'https://admin.example.com'];
  const loaded = synthStage('staging', {
    corsAllowedOrigins: origins,
    alarmEmail: 'ops@example.com',
    customDomain: { domainName: 'pets.example.com', certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' },
    webAclArn: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/shared/abc',
  });
  const { template, stack } = loaded;

  it('answers CORS preflights without a key, for the allowed origins only', () => {
    const options = methodsOf(template).filter(({ method }) => method === 'OPTIONS');
    // Every resource of the route table, and each resource above one.
    const resources = routes.flatMap(({ path }) => path.split('/').map((_, depth, parts) => parts.slice(0, depth + 1).join('/')));
    expect(options.map(({ path }) => path).sort()).toEqual([...new Set(resources)].sort());
    for (const { properties } of options) {
      // No authorizer and no API key: a browser sends neither on a preflight.
      expect(properties).toMatchObject({ AuthorizationType: 'NONE', ApiKeyRequired: false });
      expect(properties).not.toHaveProperty('AuthorizerId');
      const integration = JSON.stringify(properties.Integration);
      for (const origin of origins) expect(integration).toContain(origin);
      const [response] = (properties.Integration as { IntegrationResponses: Array<{ StatusCode: string; ResponseParameters: object }> })
        .IntegrationResponses;
      expect(response?.StatusCode).toBe('204');
      expect(response?.ResponseParameters).toMatchObject({
        'method.response.header.Access-Control-Allow-Headers': "'Authorization,Content-Type,Idempotency-Key'",
        'method.response.header.Access-Control-Allow-Methods': `'${CORS_ALLOWED_METHODS.join(',')}'`,
        'method.response.header.Access-Control-Max-Age': "'600'",
        'method.response.header.Access-Control-Expose-Headers': expect.stringMatching(/Link.*Location.*Retry-After.*X-Request-Id/),
      });
    }
  });

  it('converts each preflight mock to text both ways, as every media type is binary', () => {
    const options = methodsOf(template).filter(({ method }) => method === 'OPTIONS');
    for (const { properties } of options) {
      const integration = properties.Integration as {
        Type: string;
        ContentHandling?: string;
        IntegrationResponses: Array<{ ContentHandling?: string }>;
      };
      expect(integration.Type).toBe('MOCK');
      expect(integration.ContentHandling).toBe('CONVERT_TO_TEXT');
      expect(integration.IntegrationResponses.map(({ ContentHandling }) => ContentHandling)).toEqual(['CONVERT_TO_TEXT']);
    }
  });

  it('tells the functions the allowed origins, and lets browsers read the gateway errors', () => {
    for (const name of functionNames.slice(0, 3)) {
      const resource = template.toJSON().Resources[logicalIdOf(loaded, name).function];
      expect(resource.Properties.Environment.Variables.CORS_ALLOWED_ORIGINS).toBe(origins.join(','));
    }
    for (const { properties } of resourcesOf(template, 'AWS::ApiGateway::GatewayResponse')) {
      expect(properties.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Access-Control-Allow-Origin': 'method.request.header.Origin',
        'gatewayresponse.header.Access-Control-Expose-Headers': expect.stringContaining('Retry-After'),
        'gatewayresponse.header.Vary': "'Origin'",
      });
    }
  });

  it('answers the 501 of GET /store/orders with the CORS headers of every other answer, for the listed origins only', () => {
    const method = methodsOf(template).find(({ path, method: verb }) => path === notImplemented.path && verb === notImplemented.method);
    const integration = method?.properties.Integration as {
      IntegrationResponses: Array<{ ResponseTemplates: Record<string, string>; ResponseParameters: Record<string, string> }>;
    };
    const [response] = integration.IntegrationResponses;
    expect(response?.ResponseParameters).toMatchObject({
      'method.response.header.Access-Control-Expose-Headers': expect.stringMatching(/Link.*Location.*Retry-After.*X-Request-Id/),
      'method.response.header.Vary': "'Origin'",
    });
    const body = response?.ResponseTemplates['application/json'] ?? '';
    expect(body).toContain('#if($origin == "https://app.example.com" || $origin == "https://admin.example.com")');
    expect(body).toContain('#set($context.responseOverride.header.Access-Control-Allow-Origin = $origin)');
    const declared = (method?.properties.MethodResponses as Array<{ ResponseParameters: Record<string, boolean> }>)[0]?.ResponseParameters;
    expect(declared).toMatchObject({
      'method.response.header.Access-Control-Allow-Origin': true,
      'method.response.header.Access-Control-Expose-Headers': true,
      'method.response.header.Vary': true,
    });
  });

  it('with one origin, the gateway errors name that origin rather than echo the request', () => {
    const single = synthStage('staging', { corsAllowedOrigins: ['https://app.example.com'] });
    for (const { properties } of resourcesOf(single.template, 'AWS::ApiGateway::GatewayResponse')) {
      expect(properties.ResponseParameters).toMatchObject({
        'gatewayresponse.header.Access-Control-Allow-Origin': "'https://app.example.com'",
      });
    }
  });

  it('e-mails alarms to the stage address', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
  });

  it('serves the API on the custom domain at base path v1, TLS 1.2, and outputs that URL', () => {
    template.hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: 'pets.example.com',
      RegionalCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc',
      SecurityPolicy: 'TLS_1_2',
      EndpointConfiguration: { Types: ['REGIONAL'] },
    });
    template.hasResourceProperties('AWS::ApiGateway::BasePathMapping', { BasePath: 'v1', Stage: Match.anyValue() });
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(outputs[stackOutputs.apiUrl]?.Value).toBe('https://pets.example.com/v1');
    expect(outputs.CustomDomainTarget).toBeDefined();
    expect(stack.api.url).toBe('https://pets.example.com/v1');
  });

  it("with a custom domain, turns the execute-api URL off, so the domain's TLS policy cannot be bypassed", () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { DisableExecuteApiEndpoint: true });
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(JSON.stringify(outputs)).not.toContain('execute-api');
    // Without one, the execute-api URL is the API's address.
    stages.staging.template.hasResourceProperties('AWS::ApiGateway::RestApi', { DisableExecuteApiEndpoint: Match.absent() });
  });

  it('puts the stage behind the given WAF web ACL', () => {
    template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/shared/abc',
    });
  });
});

describe('table grants', () => {
  /** The statements grantTableAccess adds to a function's role. */
  const statementsFor = (grants: readonly TableAccess[]) => {
    const added: unknown[] = [];
    const fn = { function: { addToRolePolicy: (statement: PolicyStatement) => added.push(statement.toStatementJson()) } };
    grantTableAccess(fn as unknown as ApiFunction, grants, { pets: { tableArn: 'arn:pets' } as ITableV2 });
    return added;
  };

  it("conditions ReturnValues on the grant's own list, and leaves a grant without one unconditioned", () => {
    expect(statementsFor([{ table: 'pets', actions: ['dynamodb:UpdateItem'], returnValues: ['ALL_OLD'] }])).toEqual([
      {
        Effect: 'Allow',
        Action: 'dynamodb:UpdateItem',
        Resource: 'arn:pets',
        Condition: { StringEqualsIfExists: { 'dynamodb:ReturnValues': ['ALL_OLD'] } },
      },
    ]);
    expect(statementsFor([{ table: 'pets', actions: ['dynamodb:PutItem'] }])).toEqual([
      { Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: 'arn:pets' },
    ]);
  });

  it("takes each operation's grants from its route", () => {
    for (const route of routes) {
      if ('handler' in route) expect(tableAccess[route.operationId], route.operationId).toEqual(route.tableAccess);
    }
  });
});
