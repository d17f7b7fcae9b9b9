/**
 * Every repository the operations' handlers use, built in one place from a client and the tables'
 * names: the local server, the tests and the warm benchmark all take them from here, so a new
 * repository is added once, here, and reaches them all. A deployed function builds only the part
 * its operation uses, from its environment (shared/pet-reads.ts `petReads`, shared/pets-repository.ts
 * `petWrites`), not this: a reading operation's bundle then holds no write (infra/bundle-budgets.ts).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { IdGenerator } from './ids';
import { petsRepository, type PetsRepository, type PetsRepositoryOptions } from './pets-repository';
import type { TableNames } from './tables';

/** The handlers' repositories, by what they hold. */
export interface Repositories {
  readonly pets: PetsRepository;
}

/** Settings a test or tool may change; the environment's otherwise. */
export interface RepositoriesOptions {
  /** Mints pet ids. @default the region's, from the environment */
  readonly newPetId?: IdGenerator;
  /** The pets repository's other settings (its id attempts, status shards…), for tests. */
  readonly pets?: Omit<PetsRepositoryOptions, 'client' | 'tableName' | 'idempotencyTableName' | 'newId'>;
}

/** The repositories over `tables`, through `client`. */
export const repositoriesFor = (
  client: DynamoDBDocumentClient,
  tables: TableNames,
  { newPetId, pets = {} }: RepositoriesOptions = {},
): Repositories => ({
  pets: petsRepository({
    client,
    tableName: tables.pets,
    idempotencyTableName: tables.idempotency,
    ...pets,
    ...(newPetId ? { newId: newPetId } : {}),
  }),
});
