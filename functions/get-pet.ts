/** GET /pets/{petId} (deprecated): one pet by id. Deprecation headers and the 410 come from httpApi. */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '../shared/errors';
import { httpApi, type Clock } from '../shared/http/http-api';
import { parseRequest } from '../shared/http/request';
import { json } from '../shared/http/response';
import { petReads, type PetReads } from '../shared/pet-reads';
import { routeOf } from '../shared/routes';

export interface GetPetDependencies {
  readonly pets?: PetReads;
  readonly now?: Clock;
}

const route = routeOf('getPet');

export const createHandler = ({ pets = petReads(), now }: GetPetDependencies = {}) =>
  middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpApi({ operationId: route.operationId, now }))
    .handler(async (event) => {
      // The query is parsed too: getPet takes no parameters, so any one is refused.
      const { petId } = parseRequest(route, event).path;

      const pet = await pets.get(petId);

      if (!pet) throw new ApiError('not_found', `No pet has the id ${petId}.`);
      return json(200, pet);
    });

export const handler = createHandler();
