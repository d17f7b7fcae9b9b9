/** Starts one DynamoDB Local (the real database, in memory) for the whole test run. */
import type { TestProject } from 'vitest/node';
import { startDynamoDBLocal } from '../../tools/dynamodb-local';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

export default async function setup(project: TestProject) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const database = await startDynamoDBLocal({ port: 0 });
  project.provide('dynamodbEndpoint', database.endpoint);
  return () => database.stop();
}
