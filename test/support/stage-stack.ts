/**
 * A stage's stack as CloudFormation's DescribeStacks answers for it (the key tool reads its
 * outputs): its keys and last-use tables, and whatever other outputs a test gives it.
 */
import type { DescribeStacksCommandOutput } from '@aws-sdk/client-cloudformation';
import { stackName, stackOutputs } from '../../shared/stack';
import type { TableNames } from '../../shared/tables';

type OutputName = keyof typeof stackOutputs;

export const describedStage = (
  tables: Pick<TableNames, 'apiKeys' | 'apiKeyLastUse'>,
  outputs: Partial<Record<OutputName, string>> = {},
  stage = 'staging',
): Pick<DescribeStacksCommandOutput, 'Stacks'> => ({
  Stacks: [
    {
      StackName: stackName(stage),
      CreationTime: new Date(),
      StackStatus: 'UPDATE_COMPLETE',
      Outputs: Object.entries({ apiKeysTableName: tables.apiKeys, apiKeyLastUseTableName: tables.apiKeyLastUse, ...outputs }).map(
        ([name, value]) => ({ OutputKey: stackOutputs[name as OutputName], OutputValue: value }),
      ),
    },
  ],
});
