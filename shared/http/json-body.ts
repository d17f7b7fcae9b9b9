/**
 * jsonBody: for operations with a JSON body. It refuses bodies over the documented size, checks
 * the Content-Type and parses the JSON (middy's parser; errorFormatter maps its 415s to 400s).
 */
import type middy from '@middy/core';
import httpJsonBodyParser from '@middy/http-json-body-parser';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '../errors';

/** Documented maximum size of a request body, in bytes. A pet is far smaller. */
export const MAX_BODY_BYTES = 16 * 1024;

type Middleware = middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult>;

export const bodyLimit = (maxBytes: number = MAX_BODY_BYTES): Middleware => ({
  before: async ({ event }) => {
    const size = event.body ? Buffer.byteLength(event.body, event.isBase64Encoded ? 'base64' : 'utf8') : 0;
    if (size > maxBytes) {
      throw new ApiError('payload_too_large', `The request body is ${size} bytes; the limit is ${maxBytes} bytes.`);
    }
  },
});

/**
 * `Content-Type` as middy's check expects it. RFC 9110 allows media types in any case, and
 * spaces around the `;` before parameters (even an empty parameter list); its check allows neither.
 */
export const normalizeMediaType = (contentType: string): string =>
  contentType
    .toLowerCase()
    .split(';')
    .map((part) => part.trim())
    .filter((part, index) => index === 0 || part !== '')
    .join('; ');

/**
 * Prepares what middy's parser reads: the media type normalised, and no body for an empty one
 * (API Gateway sends an empty body as null, which JSON.parse would accept as a value).
 */
const parserInput = (): Middleware => ({
  before: async ({ event }) => {
    const contentType = event.headers?.['content-type'];
    if (contentType) event.headers['content-type'] = normalizeMediaType(contentType);
    if (event.body === null || event.body === '') (event as { body?: string | null }).body = undefined;
  },
});

export const jsonBody = (): Middleware[] => [
  bodyLimit(),
  parserInput(),
  httpJsonBodyParser() as Middleware,
];
