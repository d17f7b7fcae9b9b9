/**
 * POST /pets: validates a NewPet, stores it under a fresh id, and answers 201 with its Location.
 * With an Idempotency-Key, a retry of the same create answers the same pet and stores nothing.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { ApiError } from '../shared/errors';
import { httpApi } from '../shared/http/http-api';
import { callerOf, idempotencyKeyOf, IDEMPOTENT_REPLAYED_HEADER } from '../shared/http/idempotency-key';
import { jsonBody } from '../shared/http/json-body';
import { parseRequest, publicUrl } from '../shared/http/request';
import { json } from '../shared/http/response';
import { idempotentRequest } from '../shared/idempotency';
import { petWrites, type KeyedCreateOutcome, type PetWrites } from '../shared/pets-repository';
import { routeOf } from '../shared/routes';

export interface CreatePetDependencies {
  readonly pets?: PetWrites;
}

const route = routeOf('createPet');

export const createHandler = ({ pets = petWrites() }: CreatePetDependencies = {}) =>
  middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpApi({ operationId: route.operationId, jsonBody }))
    .handler(async (event) => {
      const newPet = parseRequest(route, event).body;
      const key = idempotencyKeyOf(event);

      const outcome: KeyedCreateOutcome = key
        ? await pets.createOnce(newPet, idempotentRequest(callerOf(event), key, newPet))
        : { kind: 'created', pet: await pets.create(newPet) };

      if (outcome.kind === 'reused') throw new ApiError('idempotency_key_reused');
      // Its access line says it was replayed (IdempotentReplays), as the header does.
      const replayed = outcome.kind === 'replayed';
      const location = { Location: publicUrl(event, `/pets/${outcome.pet.id}`) };
      return json(201, outcome.pet, replayed ? { ...location, [IDEMPOTENT_REPLAYED_HEADER]: 'true' } : location);
    });

export const handler = createHandler();
