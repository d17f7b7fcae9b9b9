/** Records the AWS calls of the functions this test file runs (test/support/aws-calls.ts). */
import { currentInvocation } from '../../tools/local-server/invocation';
import { installAwsCallRecorder } from './aws-calls';

installAwsCallRecorder(currentInvocation);
