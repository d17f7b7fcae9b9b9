/** Building API Gateway proxy results: JSON bodies, the common headers, error answers. */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { errorBody, errorHeaders, type ErrorCode } from '../errors';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** The type of every answer with a body. */
export const JSON_CONTENT_TYPE: Readonly<Record<string, string>> = { 'Content-Type': 'application/json' };

/** Headers on every answer, success or error, whoever sends it. */
export const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

export const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult => ({
  statusCode,
  headers: { ...JSON_CONTENT_TYPE, ...COMMON_HEADERS, ...headers },
  body: JSON.stringify(body),
});

/** A success with no content (RFC 9110 204): no body, so no Content-Type either. */
export const noContent = (headers: Record<string, string> = {}): APIGatewayProxyResult => ({
  statusCode: 204,
  headers: { ...COMMON_HEADERS, ...headers },
  body: '',
});

/** An answer in the Error shape, with the catalogue's headers for that code. */
export const errorResponse = (code: ErrorCode, message?: string): APIGatewayProxyResult => {
  const body = errorBody(code, message);
  return json(body.status, body, errorHeaders(code));
};

/** Adds the common headers and the request id, keeping any header the answer already has; a Content-Type only to a body. */
export const withCommonHeaders = (response: APIGatewayProxyResult, requestId: string): APIGatewayProxyResult => ({
  ...response,
  headers: { ...(response.body === '' ? {} : JSON_CONTENT_TYPE), ...COMMON_HEADERS, [REQUEST_ID_HEADER]: requestId, ...response.headers },
});

/** An RFC 8288 `Link` header value. */
export const link = (url: string, rel: string): string => `<${url}>; rel="${rel}"`;
