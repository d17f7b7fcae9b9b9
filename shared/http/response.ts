/** Building API Gateway proxy results: JSON bodies, the common headers, error answers. */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { errorBody, errorHeaders, type ErrorCode } from '../errors';

export const REQUEST_ID_HEADER = 'X-Request-Id';

/** Headers on every answer, success or error, whoever sends it. */
export const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'application/json',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

export const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult => ({
  statusCode,
  headers: { ...COMMON_HEADERS, ...headers },
  body: JSON.stringify(body),
});

/** An answer in the Error shape, with the catalogue's headers for that code. */
export const errorResponse = (code: ErrorCode, message?: string): APIGatewayProxyResult => {
  const body = errorBody(code, message);
  return json(body.status, body, errorHeaders(code));
};

/** Adds the common headers and the request id, keeping any header the answer already has. */
export const withCommonHeaders = (response: APIGatewayProxyResult, requestId: string): APIGatewayProxyResult => ({
  ...response,
  headers: { ...COMMON_HEADERS, [REQUEST_ID_HEADER]: requestId, ...response.headers },
});

/** An RFC 8288 `Link` header value. */
export const link = (url: string, rel: string): string => `<${url}>; rel="${rel}"`;
