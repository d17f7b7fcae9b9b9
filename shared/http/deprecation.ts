/**
 * deprecation: for an operation with a sunset, adds `Deprecation` (RFC 9745), `Sunset`
 * (RFC 8594) and a `successor-version` link to every answer, and answers 410 from the sunset on.
 */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '../errors';
import type { Deprecation } from '../routes';
import { publicUrl } from './request';
import { link } from './response';

export type Clock = () => Date;

/** The `Deprecation` and `Sunset` values: constant for an operation, so built once. */
export const datedHeaders = (deprecation: Deprecation): Record<string, string> => ({
  Deprecation: `@${Math.floor(deprecation.deprecatedAt.getTime() / 1000)}`,
  Sunset: deprecation.sunsetAt.toUTCString(),
});

export const deprecation = (
  info: Deprecation,
  now: Clock = () => new Date(),
): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => {
  const dated = datedHeaders(info);
  const addHeaders: middy.MiddlewareFn<APIGatewayProxyEvent, APIGatewayProxyResult> = async (request) => {
    if (!request.response) return;
    const headers = { ...dated, Link: link(publicUrl(request.event, info.successorPath), 'successor-version') };
    request.response = { ...request.response, headers: { ...request.response.headers, ...headers } };
  };
  return {
    before: async () => {
      if (now() >= info.sunsetAt) {
        throw new ApiError('gone', `This operation was removed on ${info.sunsetAt.toUTCString()}: use GET ${info.successorPath} instead.`);
      }
    },
    after: addHeaders,
    onError: addHeaders,
  };
};
