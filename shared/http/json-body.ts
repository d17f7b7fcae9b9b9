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
 * Prepares what middy's parser reads: media types are case-insensitive (RFC 9110), its check is
 * not; and API Gateway sends an empty body as null, which JSON.parse would accept as a value.
 */
const parserInput = (): Middleware => ({
  before: async ({ event }) => {
    const contentType = event.headers?.['content-type'];
    if (contentType) event.headers['content-type'] = contentType.toLowerCase();
    if (event.body === null || event.body === '') (event as { body?: string | null }).body = undefined;
  },
});

export const jsonBody = (): Middleware[] => [
  bodyLimit(),
  parserInput(),
  httpJsonBodyParser() as Middleware,
];
