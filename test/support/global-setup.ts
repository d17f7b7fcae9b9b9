/** Starts one DynamoDB Local (the real database, in memory) for the whole test run. */
import type { TestProject } from 'vitest/node';
import { startDynamoDBLocal } from '../../tools/dynamodb-local';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

export default async function setup(project: TestProject) {
  const database = await startDynamoDBLocal({ port: 0 });
  project.provide('dynamodbEndpoint', database.endpoint);
  return () => database.stop();
}
