/**
 * What API Gateway answers on its own (no route, no key, throttled, body too large, authorizer
 * failure, …), mapped onto the error catalogue. The CDK stack renders its gateway responses from
 * this table, and the local server answers the same situations from it, so both send the same
 * bodies.
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { ErrorCode } from './errors';
import { errorResponse } from './http/response';

export const gatewayResponses = {
  UNAUTHORIZED: { code: 'unauthorized' },
  // The authorizer never denies (it refuses with 401), but a Deny would still be an auth failure.
  ACCESS_DENIED: { code: 'unauthorized' },
  // API Gateway's answer for a path or method it does not have.
  MISSING_AUTHENTICATION_TOKEN: { code: 'not_found', message: 'No such route: check the method and the path.' },
  THROTTLED: { code: 'too_many_requests' },
  QUOTA_EXCEEDED: { code: 'too_many_requests' },
  REQUEST_TOO_LARGE: { code: 'payload_too_large' },
  BAD_REQUEST_BODY: { code: 'validation_failed' },
  BAD_REQUEST_PARAMETERS: { code: 'validation_failed' },
  // The authorizer could not answer (its database is down): the client should retry.
  AUTHORIZER_FAILURE: { code: 'service_unavailable' },
  AUTHORIZER_CONFIGURATION_ERROR: { code: 'internal_error' },
  INTEGRATION_FAILURE: { code: 'service_unavailable' },
  INTEGRATION_TIMEOUT: { code: 'service_unavailable' },
  DEFAULT_4XX: { code: 'validation_failed' },
  DEFAULT_5XX: { code: 'internal_error' },
} as const satisfies Record<string, { code: ErrorCode; message?: string }>;

export type GatewayResponseType = keyof typeof gatewayResponses;

/** The request id header API Gateway adds to every answer, its own and the functions'. */
export const GATEWAY_REQUEST_ID_HEADER = 'x-amzn-RequestId';

/**
 * What the gateway answers for a response type: status, headers and body, all static. API
 * Gateway adds its own `x-amzn-RequestId`; a gateway response cannot carry the functions'
 * `X-Request-Id`, because its headers cannot read the request's context.
 */
export const gatewayAnswer = (type: GatewayResponseType): APIGatewayProxyResult => {
  const entry: { code: ErrorCode; message?: string } = gatewayResponses[type];
  return errorResponse(entry.code, entry.message);
};
