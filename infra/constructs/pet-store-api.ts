/**
 * PetStoreApi: the REST API. Its stage is named `v1`, so the URL ends in the interface's base
 * path. Every method of the shared route table is built here, behind the bearer-key authorizer;
 * the gateway's own refusals answer in the Error shape, from the shared error catalogue.
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  ApiKeySourceType,
  AccessLogFormat,
  AuthorizationType,
  ContentHandling,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  MockIntegration,
  PassthroughBehavior,
  ResourceBase,
  ResponseType,
  RestApi,
  SecurityPolicy,
  TokenAuthorizer,
  type IResource,
  type MethodDeploymentOptions,
  type MethodOptions,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { accessLogFormat } from '../../shared/access-log';
import { BEARER_PATTERN } from '../../shared/api-keys';
import { CORS_ALLOWED_HEADERS, CORS_ALLOWED_METHODS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS } from '../../shared/http/cors';
import { errorResponse, REQUEST_ID_HEADER } from '../../shared/http/response';
import { gatewayResponses, type GatewayResponseType } from '../../shared/gateway-responses';
import { isKeyed, routes, STAGE_NAME, type Route } from '../../shared/routes';
import { gatewayResponseTemplate, quoted } from '../gateway-response-templates';
import { UsagePlans } from './usage-plans';
import type { CustomDomain, StageSettings, TracingSample } from '../stages';
import { CfnSamplingRule } from 'aws-cdk-lib/aws-xray';

/** Above X-Ray's default rule (10000): the stage's own sampling applies to its requests. */
const SAMPLING_RULE_PRIORITY = 1000;
/** X-Ray's rule names are at most 32 characters, unique in the account's region: the API's name, cut there. */
export const samplingRuleName = (apiName: string): string => apiName.slice(0, 32);

/** Every media type, as CloudFormation's BinaryMediaTypes spells it: each '/' written '~1' (a JSON Pointer escape). */
const ALL_MEDIA_TYPES = '*~1*';

export interface PetStoreApiProps {
  /** Name shown in the API Gateway console. */
  readonly apiName: string;
  /** The function for each operation of the route table that has a handler. */
  readonly operations: ReadonlyMap<string, IFunction>;
  readonly authorizer: IFunction;
  /** The stage's settings (infra/stages.ts) say what each of these is. */
  readonly throttle: StageSettings['throttle'];
  readonly plans: StageSettings['plans'];
  readonly authorizerCacheTtlSeconds: number;
  /** None: no CORS headers, no preflight. */
  readonly corsAllowedOrigins: readonly string[];
  readonly customDomain?: CustomDomain;
  /** A regional WAFv2 web ACL to associate with the stage; none by default. */
  readonly webAclArn?: string;
  /** How many of its requests X-Ray traces. */
  readonly tracing: TracingSample;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

export class PetStoreApi extends Construct {
  readonly api: RestApi;
  readonly usagePlans: UsagePlans;
  readonly accessLogs: LogGroup;
  /** The base URL clients use, ending in `/v1`: the custom domain's when there is one. */
  readonly url: string;

  constructor(scope: Construct, id: string, props: PetStoreApiProps) {
    super(scope, id);
    const origins = props.corsAllowedOrigins;
    const { throttle } = props;

    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      logGroupName: `/aws/apigateway/${props.apiName}/access`,
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });

    // The stage's own sampling for X-Ray, ahead of the account's default rule: API Gateway decides for
    // each request, and the functions it calls follow that decision (their tracing is active).
    new CfnSamplingRule(this, 'TracingSample', {
      samplingRule: {
        ruleName: samplingRuleName(props.apiName),
        priority: SAMPLING_RULE_PRIORITY,
        // API Gateway names a stage's traces `<API name>/<stage>`.
        serviceName: `${props.apiName}/${STAGE_NAME}`,
        serviceType: '*',
        host: '*',
        httpMethod: '*',
        urlPath: '*',
        resourceArn: '*',
        reservoirSize: props.tracing.reservoirPerSecond,
        fixedRate: props.tracing.fixedRate,
        version: 1,
      },
    });

    const authorizer = new TokenAuthorizer(this, 'BearerKeyAuthorizer', {
      handler: props.authorizer,
      identitySource: IdentitySource.header('Authorization'),
      // Anything but "Bearer <token>" gets 401 without running the authorizer.
      validationRegex: BEARER_PATTERN,
      resultsCacheTtl: Duration.seconds(props.authorizerCacheTtlSeconds),
    });

    this.api = new RestApi(this, 'Api', {
      restApiName: props.apiName,
      description: 'Pet store: list, add and get animals, with bearer API keys.',
      endpointTypes: [EndpointType.REGIONAL],
      // Every body is binary to the gateway, so it reaches a function base64-encoded with its bytes
      // as sent; as text, bytes that are not UTF-8 would arrive replaced and be stored.
      binaryMediaTypes: [ALL_MEDIA_TYPES],
      // Execution logs (errors only) need API Gateway's account-wide CloudWatch role. It is kept
      // when a stack is deleted, because other stages in the account rely on the same setting.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: STAGE_NAME,
        tracingEnabled: true,
        metricsEnabled: true,
        loggingLevel: MethodLoggingLevel.ERROR,
        // Data traces would log request bodies and the Authorization header.
        dataTraceEnabled: false,
        throttlingRateLimit: throttle.rateLimit,
        throttlingBurstLimit: throttle.burstLimit,
        methodOptions: keylessMethodOptions(),
        accessLogDestination: new LogGroupLogDestination(this.accessLogs),
        accessLogFormat: AccessLogFormat.custom(accessLogFormat()),
      },
      // Usage plans meter the API key the authorizer names (usageIdentifierKey): no client sends one.
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
      // Every method requires the API key the authorizer names, so that each key's plan meters it.
      defaultMethodOptions: { authorizationType: AuthorizationType.CUSTOM, authorizer, apiKeyRequired: true },
      ...(props.customDomain
        ? {
            // Only through the domain, so its TLS policy cannot be bypassed on the execute-api URL.
            disableExecuteApiEndpoint: true,
            domainName: {
              domainName: props.customDomain.domainName,
              certificate: Certificate.fromCertificateArn(this, 'Certificate', props.customDomain.certificateArn),
              basePath: STAGE_NAME,
              endpointType: EndpointType.REGIONAL,
              securityPolicy: SecurityPolicy.TLS_1_2,
            },
          }
        : {}),
    });
    // CDK adds an "Endpoint" output with a trailing slash; the stack outputs ApiUrl instead.
    this.api.node.tryRemoveChild('Endpoint');

    for (const route of routes) this.addRoute(route, props.operations, origins);
    if (origins.length > 0) {
      // Every resource, as a browser may preflight any path; the root included, as CDK's own preflight did.
      const resources = this.api.root.node.findAll().filter((construct): construct is ResourceBase => construct instanceof ResourceBase);
      for (const resource of resources) preflight(resource, origins);
    }
    this.usagePlans = new UsagePlans(this, 'UsagePlans', { api: this.api, namePrefix: props.apiName, plans: props.plans });
    for (const type of Object.keys(gatewayResponses) as GatewayResponseType[]) {
      const template = gatewayResponseTemplate(type, origins);
      this.api.addGatewayResponse(type, {
        type: ResponseType.of(type),
        statusCode: template.statusCode,
        responseHeaders: template.responseHeaders,
        templates: template.templates,
      });
    }

    if (props.webAclArn) {
      new CfnWebACLAssociation(this, 'WebAcl', { resourceArn: this.api.deploymentStage.stageArn, webAclArn: props.webAclArn });
    } else {
      Validations.of(this.api).acknowledge({
        id: 'AwsSolutions-APIG3',
        reason:
          'No web ACL configured for this stage (StageSettings.webAclArn): every method needs a bearer key checked by the authorizer ' +
          'before any function runs, and the stage is throttled.',
      });
    }
    this.acknowledgeDesignChoices();

    this.url = props.customDomain
      ? `https://${props.customDomain.domainName}/${STAGE_NAME}`
      : `https://${this.api.restApiId}.execute-api.${Stack.of(this).region}.${Stack.of(this).urlSuffix}/${STAGE_NAME}`;
  }

  /** cdk-nag findings that are deliberate choices of this design, each with its reason. */
  private acknowledgeDesignChoices(): void {
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'The functions validate every parameter and body with the shared zod models and name the offending field, ' +
        'as the API decisions require; a gateway validator would answer first with a generic message.',
    });
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-COG4',
      reason: 'The interface specifies bearer API keys, not Cognito users: a Lambda TOKEN authorizer checks them on every method.',
    });
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason:
        "API Gateway's account-wide CloudWatch role, which execution logging requires; " +
        'this AWS managed policy is the one AWS documents for it and grants only CloudWatch Logs writes.',
    });
  }

  private addRoute(route: Route, operations: ReadonlyMap<string, IFunction>, origins: readonly string[]): void {
    const resource = this.api.root.resourceForPath(route.path);
    if (route.notImplemented) {
      notImplemented(resource, route, origins);
      return;
    }
    const handler = operations.get(route.operationId);
    if (!handler) throw new Error(`No function for operation ${route.operationId}`);
    const method = resource.addMethod(route.method, new LambdaIntegration(handler, { proxy: true, allowTestInvoke: false }), {
      operationName: route.operationId,
      ...(isKeyed(route) ? {} : KEYLESS),
    });
    if (!isKeyed(route)) {
      const reason =
        `${route.method} ${route.path} is keyless by design: clients' and monitors' health checks send no Authorization header. ` +
        'It reads no item and answers only {"status":"ok"} or a 503, under its own method throttle.';
      Validations.of(method).acknowledge({ id: 'AwsSolutions-APIG4', reason });
      Validations.of(method).acknowledge({ id: 'AwsSolutions-COG4', reason });
    }
  }
}

/** A keyless method's options: no authorizer (the API's default one removed) and no API key, so no usage plan meters it. */
const KEYLESS: MethodOptions = {
  authorizer: { authorizerId: '', authorizationType: AuthorizationType.NONE },
  authorizationType: AuthorizationType.NONE,
  apiKeyRequired: false,
};

/**
 * Each keyless route's own method throttle, which stands in for the stage's on that method (a
 * method's settings override the stage's, field by field: the stage's logging and metrics repeated).
 */
const keylessMethodOptions = (): Record<string, MethodDeploymentOptions> =>
  Object.fromEntries(
    routes.flatMap((route: Route) =>
      route.keyless
        ? [
            [
              `${route.path}/${route.method}`,
              {
                throttlingRateLimit: route.keyless.throttle.rateLimit,
                throttlingBurstLimit: route.keyless.throttle.burstLimit,
                metricsEnabled: true,
                loggingLevel: MethodLoggingLevel.ERROR,
                dataTraceEnabled: false,
              },
            ],
          ]
        : [],
    ),
  );

/**
 * A mock integration, when every media type is binary, converts to text both ways: its request
 * template cannot read a binary request (API Gateway answers 500), and a text answer would be
 * base64-decoded into garbage.
 */
const MOCK_CONTENT_HANDLING = ContentHandling.CONVERT_TO_TEXT;

/**
 * CORS on a mock integration's answer, as the functions' middleware does it: the exposed headers
 * (and `Vary: Origin` when there are several origins) as static headers, and
 * `Access-Control-Allow-Origin` only for a listed origin, set by the mapping template (the one
 * place an integration response can read the request's headers).
 */
const mockCors = (origins: readonly string[]) => {
  if (origins.length === 0) return { headers: {}, template: '' };
  const headers: Record<string, string> = { 'Access-Control-Expose-Headers': quoted(CORS_EXPOSED_HEADERS.join(', ')) };
  if (origins.length > 1) headers.Vary = "'Origin'";
  const listed = origins.map((origin) => `$origin == ${JSON.stringify(origin)}`).join(' || ');
  const template = [
    // Velocity leaves a variable as it was when #set is given null: start from "" so that the
    // lower-case lookup runs when the first finds nothing.
    '#set($origin = "")',
    '#set($origin = $input.params().header.get("Origin"))',
    '#if($origin == "")#set($origin = $input.params().header.get("origin"))#end',
    `#if(${listed})#set($context.responseOverride.header.Access-Control-Allow-Origin = $origin)#end`,
    '',
  ].join('\n');
  return { headers, template };
};

/**
 * A resource's CORS preflight, answered by API Gateway itself: 204 with the shared CORS lists, no
 * authorizer and no key (a browser sends neither on a preflight), and `Access-Control-Allow-Origin`
 * chosen by the same template as the 501's. Not CDK's preflight: its template never empties
 * `$origin` first, so under Velocity 1.7 a lower-case `origin` (HTTP/2) got the first origin back.
 */
const preflight = (resource: IResource, origins: readonly string[]): void => {
  const cors = mockCors(origins);
  const headers: Record<string, string> = {
    'Access-Control-Allow-Headers': quoted(CORS_ALLOWED_HEADERS.join(',')),
    'Access-Control-Allow-Methods': quoted(CORS_ALLOWED_METHODS.join(',')),
    'Access-Control-Max-Age': quoted(String(CORS_MAX_AGE_SECONDS)),
    ...cors.headers,
    // The answer depends on the Origin even with one allowed origin: it is named only to itself.
    Vary: "'Origin'",
  };
  const status = 204;
  resource.addMethod(
    'OPTIONS',
    new MockIntegration({
      passthroughBehavior: PassthroughBehavior.WHEN_NO_MATCH,
      contentHandling: MOCK_CONTENT_HANDLING,
      requestTemplates: { 'application/json': JSON.stringify({ statusCode: status }) },
      integrationResponses: [
        {
          statusCode: String(status),
          contentHandling: MOCK_CONTENT_HANDLING,
          responseParameters: Object.fromEntries(Object.entries(headers).map(([name, value]) => [`method.response.header.${name}`, value])),
          // Sets only Access-Control-Allow-Origin: a 204 has no body.
          responseTemplates: { 'application/json': cors.template },
        },
      ],
    }),
    {
      // The default options name the bearer-key authorizer; a preflight must not need one.
      authorizer: { authorizerId: '', authorizationType: AuthorizationType.NONE },
      authorizationType: AuthorizationType.NONE,
      apiKeyRequired: false,
      methodResponses: [
        {
          statusCode: String(status),
          responseParameters: Object.fromEntries(
            [...Object.keys(headers), 'Access-Control-Allow-Origin'].map((name) => [`method.response.header.${name}`, true]),
          ),
        },
      ],
    },
  );
};

/**
 * A listed but unspecified operation: API Gateway itself answers 501 in the Error shape (after
 * the authorizer, like every method), with no function behind it.
 */
const notImplemented = (resource: IResource, route: Route, origins: readonly string[]): void => {
  const answer = errorResponse('not_implemented');
  const cors = mockCors(origins);
  const headers = [
    ...Object.entries(answer.headers ?? {})
      .filter(([name]) => name !== 'Content-Type')
      .map(([name, value]) => [name, quoted(String(value))] as const),
    ...Object.entries(cors.headers),
  ];
  const overridden = [REQUEST_ID_HEADER, ...(origins.length > 0 ? ['Access-Control-Allow-Origin'] : [])];
  const options: MethodOptions = {
    operationName: route.operationId,
    methodResponses: [
      {
        statusCode: String(answer.statusCode),
        responseParameters: Object.fromEntries(
          [...headers.map(([name]) => name), ...overridden].map((name) => [`method.response.header.${name}`, true]),
        ),
      },
    ],
  };
  resource.addMethod(
    route.method,
    new MockIntegration({
      // Whatever the request carries, the one integration response (the default) answers.
      passthroughBehavior: PassthroughBehavior.WHEN_NO_MATCH,
      contentHandling: MOCK_CONTENT_HANDLING,
      requestTemplates: { 'application/json': JSON.stringify({ statusCode: answer.statusCode }) },
      integrationResponses: [
        {
          statusCode: String(answer.statusCode),
          contentHandling: MOCK_CONTENT_HANDLING,
          responseParameters: Object.fromEntries(headers.map(([name, value]) => [`method.response.header.${name}`, value])),
          responseTemplates: {
            // A mapping template can set a header from the request context; parameters cannot.
            'application/json':
              `${cors.template}#set($context.responseOverride.header.${REQUEST_ID_HEADER} = $context.requestId)\n` + `${answer.body}`,
          },
        },
      ],
    }),
    options,
  );
};
