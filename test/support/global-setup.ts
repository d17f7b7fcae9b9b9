/**
 * Starts one DynamoDB Local (the real database, in memory) for the whole test run, and empties
 * the record of the functions' AWS calls that the IAM check reads after the run.
 */
import type { TestProject } from 'vitest/node';
import { startDynamoDBLocal } from '../../tools/dynamodb-local';
import { startRecordingRun } from './aws-calls';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
  }
}

export default async function setup(project: TestProject) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  // A run narrowed to some files or test names records only their calls.
  const { filenamePattern = [] } = project.vitest as { filenamePattern?: readonly string[] };
  startRecordingRun(filenamePattern.length === 0 && project.vitest.config.testNamePattern === undefined);
  const database = await startDynamoDBLocal({ port: 0 });
  project.provide('dynamodbEndpoint', database.endpoint);
  return () => database.stop();
}
