/**
 * Refuses, in one line, a DYNAMODB_TIMEOUT_MS the functions would refuse: their modules make their
 * DynamoDB clients as they load, reading it then, so npm start imports this module before them.
 */
import { dynamoDBTimeouts } from '../../shared/config';
import { reportFailure, UsageError } from '../cli';

try {
  dynamoDBTimeouts();
} catch (error) {
  const refusal = error instanceof Error ? error.message.replace(/\.$/, '') : String(error);
  process.exit(reportFailure('npm start', new UsageError(`${refusal}: see npm start -- --help`)));
}
