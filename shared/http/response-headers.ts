/** responseHeaders: the common headers and the request id, on every answer, errors included. */
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { withCommonHeaders } from './response';

export const responseHeaders = (): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => {
  const addHeaders: middy.MiddlewareFn<APIGatewayProxyEvent, APIGatewayProxyResult> = async (request) => {
    if (request.response) {
      request.response = withCommonHeaders(request.response, request.event.requestContext.requestId);
    }
  };
  return { after: addHeaders, onError: addHeaders };
};
