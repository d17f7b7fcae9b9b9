/** POST /pets: validates a NewPet, stores it under a fresh id, and answers 201 with its Location. */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { httpApi } from '../shared/http/http-api';
import { publicUrl } from '../shared/http/request';
import { json } from '../shared/http/response';
import { NewPet } from '../shared/models';
import { petsRepository, type PetsRepository } from '../shared/pets-repository';
import { parseInput } from '../shared/validation';

export interface CreatePetDependencies {
  readonly pets?: PetsRepository;
}

export const createHandler = ({ pets = petsRepository() }: CreatePetDependencies = {}) =>
  middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpApi({ operationId: 'createPet' }))
    .handler(async (event) => {
      // jsonBody has replaced the raw string with the parsed JSON value.
      const newPet = parseInput(NewPet, event.body as unknown, 'body');

      const pet = await pets.create(newPet);

      return json(201, pet, { Location: publicUrl(event, `/pets/${pet.id}`) });
    });

export const handler = createHandler();
