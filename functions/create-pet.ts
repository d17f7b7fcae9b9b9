/**
 * POST /pets: validates a NewPet, stores it under a fresh id, and answers 201 with its Location.
 * With an Idempotency-Key, a retry of the same create answers the same pet and stores nothing.
 */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { dynamoDBOptions, idempotencyTableName } from '../shared/config';
import { createDocumentClient } from '../shared/dynamodb';
import { httpApi } from '../shared/http/http-api';
import { callerOf, idempotencyKeyOf, IDEMPOTENT_REPLAYED_HEADER } from '../shared/http/idempotency-key';
import { publicUrl } from '../shared/http/request';
import { json } from '../shared/http/response';
import { idempotentCreates, type IdempotentCreates } from '../shared/idempotency';
import { NewPet } from '../shared/models';
import { petsRepository, type PetsRepository } from '../shared/pets-repository';
import { parseInput } from '../shared/validation';

export interface CreatePetDependencies {
  readonly pets?: PetsRepository;
  readonly idempotency?: IdempotentCreates;
}

/** The deployed wiring: one DynamoDB client (bounded retries and timeouts) for both tables. */
const withDefaults = ({ pets, idempotency }: CreatePetDependencies): Required<CreatePetDependencies> => {
  if (pets && idempotency) return { pets, idempotency };
  const client = createDocumentClient(dynamoDBOptions());
  const store = pets ?? petsRepository({ client });
  return { pets: store, idempotency: idempotency ?? idempotentCreates({ pets: store, client, tableName: idempotencyTableName() }) };
};

export const createHandler = (dependencies: CreatePetDependencies = {}) => {
  const { pets, idempotency } = withDefaults(dependencies);
  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpApi({ operationId: 'createPet' }))
    .handler(async (event, context) => {
      // jsonBody has replaced the raw string with the parsed JSON value.
      const newPet = parseInput(NewPet, event.body as unknown, 'body');
      const key = idempotencyKeyOf(event);

      const { pet, replayed } = key
        ? await idempotency.create({ caller: callerOf(event), key, newPet }, context)
        : { pet: await pets.create(newPet), replayed: false };

      const location = { Location: publicUrl(event, `/pets/${pet.id}`) };
      return json(201, pet, replayed ? { ...location, [IDEMPOTENT_REPLAYED_HEADER]: 'true' } : location);
    });
};

export const handler = createHandler();
