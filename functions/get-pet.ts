/** GET /pets/{petId} (deprecated): one pet by id. Deprecation headers and the 410 come from httpApi. */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '../shared/errors';
import { httpApi, type Clock } from '../shared/http/http-api';
import { queryOf } from '../shared/http/request';
import { json } from '../shared/http/response';
import { GetPetPath, GetPetQuery } from '../shared/models';
import { petsRepository, type PetsRepository } from '../shared/pets-repository';
import { parseInput } from '../shared/validation';

export interface GetPetDependencies {
  readonly pets?: PetsRepository;
  readonly now?: Clock;
}

export const createHandler = ({ pets = petsRepository(), now }: GetPetDependencies = {}) =>
  middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpApi({ operationId: 'getPet', now }))
    .handler(async (event) => {
      const { petId } = parseInput(GetPetPath, event.pathParameters ?? {}, 'path');
      parseInput(GetPetQuery, queryOf(event), 'query');

      const pet = await pets.get(petId);

      if (!pet) throw new ApiError('not_found', `No pet has the id ${petId}.`);
      return json(200, pet);
    });

export const handler = createHandler();
