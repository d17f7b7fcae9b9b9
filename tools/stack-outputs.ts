/**
 * A deployed stage's stack outputs, read from CloudFormation: how the operator tools find a
 * stage's tables, plans and address from `--stage`. AWS errors are named, never quoted: their
 * text may hold an ARN, an account or an access key id.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { stackName } from '../shared/stack';
import { UsageError } from './cli';

export type CloudFormationLookup = Pick<CloudFormationClient, 'send'>;

/** An AWS error's name, never its message: that may quote an ARN, an account or an access key id. */
export const awsErrorName = (error: unknown): string | undefined =>
  error instanceof Error && '$metadata' in error ? error.name : undefined;

export const ACCESS_DENIED =
  /^(AccessDenied|UnrecognizedClient|InvalidClientTokenId|ExpiredToken|InvalidSignature|MissingAuthenticationToken)/;

/** The outputs of a deployed stage's stack, by name (those with a value). */
export const stageOutputs = async (stage: string, cloudFormation: CloudFormationLookup): Promise<Record<string, string>> => {
  const name = stackName(stage);
  const { Stacks } = await cloudFormation.send(new DescribeStacksCommand({ StackName: name })).catch((error: unknown) => {
    const kind = awsErrorName(error);
    // CloudFormation answers a stack it does not have with a ValidationError.
    if (kind === 'ValidationError') {
      throw new UsageError(
        `No stack ${name} for --stage ${stage} in this region: is the stage deployed, and is --region (or AWS_REGION) its region?`,
      );
    }
    if (kind !== undefined && ACCESS_DENIED.test(kind)) {
      throw new Error(`AWS refused to describe stack ${name} (${kind}): check your AWS credentials, and that they may read the stack.`);
    }
    if (kind !== undefined) {
      // A network failure is an AWS error too, once the SDK's retries have marked it: its code says the most.
      const code = (error as { code?: unknown }).code;
      throw new Error(`CloudFormation could not describe stack ${name} (${typeof code === 'string' ? code : kind}).`);
    }
    throw error;
  });
  const outputs: Record<string, string> = {};
  for (const { OutputKey, OutputValue } of Stacks?.[0]?.Outputs ?? []) if (OutputKey && OutputValue) outputs[OutputKey] = OutputValue;
  return outputs;
};
