/**
 * The tests' defaults for API Gateway events (shared/gateway-events.ts builds them): a request
 * through the API's own host, as the functions receive it deployed or behind the local gateway.
 */
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent, Context } from 'aws-lambda';
import { lambdaContext, proxyEvent, tokenEvent as gatewayTokenEvent, type ProxyEventInit } from '../../shared/gateway-events';
import { exampleRequest } from '../../shared/request-examples';
import { routeOf, type HttpMethod, type OperationId } from '../../shared/routes';

export const HOST = 'pets.example.test';
export const BASE_URL = `http://${HOST}/v1`;

export interface EventInit extends Pick<ProxyEventInit, 'resource' | 'path' | 'pathParameters' | 'forwardedProto'> {
  readonly method?: HttpMethod;
  readonly headers?: Record<string, string>;
  readonly query?: Record<string, string | string[]>;
  readonly body?: string | null;
  /** The body's bytes instead: sent base64-encoded, as API Gateway does when every media type is binary. */
  readonly bodyBytes?: Uint8Array;
}

/** An API Gateway REST proxy event, as it reaches a handler after the authorizer allowed it. */
export const apiEvent = ({ headers = {}, body = null, bodyBytes, ...init }: EventInit = {}): APIGatewayProxyEvent =>
  proxyEvent({
    ...init,
    headers: { Host: HOST, ...headers },
    body: bodyBytes ?? body,
    domainName: HOST,
    sourceIp: '203.0.113.7',
  });

/**
 * The event of an operation's example request (shared/request-examples.ts): its method, its path
 * with each parameter `pathParameter`, and the route's example body.
 */
export const operationEvent = (operationId: OperationId, pathParameter?: string | number): APIGatewayProxyEvent => {
  const {
    method,
    resource,
    path,
    pathParameters,
    query,
    headers,
    body = null,
  } = exampleRequest(routeOf(operationId), pathParameter === undefined ? {} : { pathParameter });
  return apiEvent({ method, resource, path, pathParameters, query, headers, body });
};

/** One Lambda context for every invocation of a test: it always has the functions' whole timeout left. */
export const context: Context = lambdaContext('pet-store-test', { reused: true });

/** The method a token event asks about: GET /pets on stage v1 of a deployed API. */
export const METHOD_ARN = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/v1/GET/pets';

/** A TOKEN authorizer event for this Authorization header value. */
export const tokenEvent = (authorizationToken: string, methodArn = METHOD_ARN): APIGatewayTokenAuthorizerEvent =>
  gatewayTokenEvent(authorizationToken, methodArn);
