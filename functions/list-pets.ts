/** GET /pets: one page of pets, optionally of one status, with a `Link rel="next"` while more remain. */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { decodeCursor, encodeCursor } from '../shared/cursor';
import { httpApi } from '../shared/http/http-api';
import { parseRequest, publicUrl } from '../shared/http/request';
import { json, link } from '../shared/http/response';
import { petReads, type PetReads } from '../shared/pet-reads';
import { routeOf } from '../shared/routes';

export interface ListPetsDependencies {
  readonly pets?: PetReads;
}

const route = routeOf('listPets');

export const createHandler = ({ pets = petReads() }: ListPetsDependencies = {}) =>
  middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpApi({ operationId: route.operationId }))
    .handler(async (event) => {
      const { limit, status, cursor } = parseRequest(route, event).query;
      const afterId = cursor === undefined ? undefined : decodeCursor(cursor, status);

      const page = await pets.list({ limit, status, afterId });

      if (page.lastId === undefined) return json(200, page.pets);
      const next = new URLSearchParams({ limit: String(limit), ...(status ? { status } : {}) });
      next.set('cursor', encodeCursor(status, page.lastId));
      return json(200, page.pets, { Link: link(publicUrl(event, `/pets?${next}`), 'next') });
    });

export const handler = createHandler();
