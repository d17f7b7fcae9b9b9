/**
 * What API Gateway answers on its own (no route, no key, throttled, body too large, authorizer
 * failure, …), mapped onto the error catalogue. The CDK stack renders its gateway responses from
 * this table, and the local server answers the same situations from it, so both send the same
 * bodies.
 *
 * Every response type API Gateway documents has its own entry, so its status is the catalogue
 * code's and the body's `status` equals the HTTP status. The two catch-alls only answer a type
 * AWS adds later: they keep that type's own status (no status of theirs), and since a gateway
 * response template is not VTL (variables are substituted, nothing is computed, and no variable
 * holds the status), their body cannot repeat it: it names a code that says it is generic.
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { ErrorCode } from './errors';
import { errorResponse } from './http/response';
import { routes, type Route } from './routes';
import { SCOPES } from './scopes';

/**
 * A gateway response is static, so the 403 cannot name the one scope missing: it names, for
 * every scope, the operations that need it (a route with no operation of the interface by its
 * method and path): "<operation> and <operation> need <scope>, <operation> <scope>, …".
 */
const scopeRequirements = (): string =>
  SCOPES.map((scope) => {
    const names = routes
      .filter((route: Route) => route.scope === scope)
      .map((route) => ('notImplemented' in route ? `${route.method} ${route.path}` : route.operationId));
    return { scope, names };
  })
    .filter(({ names }) => names.length > 0)
    .map(({ scope, names }, index) => `${names.join(' and ')}${index === 0 ? ' need ' : ' '}${scope}`)
    .join(', ');

const INSUFFICIENT_SCOPE_MESSAGE = `This API key's scopes do not allow this operation (${scopeRequirements()}).`;

interface GatewayResponseEntry {
  readonly code: ErrorCode;
  readonly message?: string;
  /** A catch-all: API Gateway keeps the status of the type it stands in for. */
  readonly keepsStatus?: true;
  /**
   * Answered before any throttle counts the request: API Gateway applies a key's usage plan, then
   * the stage's throttle, and the key is the one the authorizer names, so a request without a
   * route, refused or failed by the authorizer, or whose key is on no plan never reaches either.
   */
  readonly beforeThrottles?: true;
}

export const gatewayResponses = {
  UNAUTHORIZED: { code: 'unauthorized', beforeThrottles: true },
  // The authorizer's policy does not cover the method: the key lacks its scope (API Gateway's default is 403, as here).
  ACCESS_DENIED: { code: 'forbidden', message: INSUFFICIENT_SCOPE_MESSAGE, beforeThrottles: true },
  // IAM authorization, which this API does not use; and the web ACL's blocks.
  INVALID_SIGNATURE: { code: 'forbidden', beforeThrottles: true },
  EXPIRED_TOKEN: { code: 'forbidden', beforeThrottles: true },
  // The usage key the authorizer named is on no usage plan of the stage, disabled, or deleted (a revoked key's).
  INVALID_API_KEY: {
    code: 'forbidden',
    message: 'This API key is not on a usage plan of this stage: ask the operators of the API.',
    beforeThrottles: true,
  },
  WAF_FILTERED: { code: 'forbidden', beforeThrottles: true },
  // API Gateway's answer for a path or method it does not have (its default is a 403).
  MISSING_AUTHENTICATION_TOKEN: { code: 'not_found', message: 'No such route: check the method and the path.', beforeThrottles: true },
  RESOURCE_NOT_FOUND: { code: 'not_found' },
  THROTTLED: { code: 'too_many_requests' },
  QUOTA_EXCEEDED: { code: 'quota_exceeded' },
  REQUEST_TOO_LARGE: { code: 'payload_too_large' },
  BAD_REQUEST_BODY: { code: 'validation_failed' },
  BAD_REQUEST_PARAMETERS: { code: 'validation_failed' },
  // The API decided that a body of the wrong type is a 400 (API Gateway's default is 415).
  UNSUPPORTED_MEDIA_TYPE: { code: 'unsupported_media_type' },
  // The authorizer could not answer: anything it throws but "Unauthorized" is a configuration
  // error to API Gateway, and in practice means the keys table cannot be read. The client should
  // retry, so both authorizer types are a 503 rather than API Gateway's 500.
  AUTHORIZER_FAILURE: { code: 'service_unavailable', beforeThrottles: true },
  AUTHORIZER_CONFIGURATION_ERROR: { code: 'service_unavailable', beforeThrottles: true },
  // The function could not be reached or did not answer in time (API Gateway's default is 504).
  INTEGRATION_FAILURE: { code: 'service_unavailable' },
  INTEGRATION_TIMEOUT: { code: 'service_unavailable' },
  API_CONFIGURATION_ERROR: { code: 'internal_error' },
  DEFAULT_4XX: { code: 'request_refused', keepsStatus: true },
  DEFAULT_5XX: { code: 'internal_error', keepsStatus: true },
} as const satisfies Record<string, GatewayResponseEntry>;

export type GatewayResponseType = keyof typeof gatewayResponses;

/** The request id header API Gateway adds to every answer, its own and the functions'. */
export const GATEWAY_REQUEST_ID_HEADER = 'x-amzn-RequestId';

/** Whether API Gateway keeps the status of the type a response stands in for (the catch-alls). */
export const keepsStatus = (type: GatewayResponseType): boolean => (gatewayResponses[type] as GatewayResponseEntry).keepsStatus === true;

/** The refusals API Gateway answers before a key's plan or the stage throttle counts the request. */
export const refusedBeforeThrottles = (): GatewayResponseType[] =>
  (Object.keys(gatewayResponses) as GatewayResponseType[]).filter(
    (type) => (gatewayResponses[type] as GatewayResponseEntry).beforeThrottles === true,
  );

/**
 * What the gateway answers for a response type: status, headers and body, all static. API
 * Gateway adds its own `x-amzn-RequestId`; a gateway response cannot carry the functions'
 * `X-Request-Id`, because its headers cannot read the request's context.
 */
export const gatewayAnswer = (type: GatewayResponseType): APIGatewayProxyResult => {
  const entry: GatewayResponseEntry = gatewayResponses[type];
  return errorResponse(entry.code, entry.message);
};
