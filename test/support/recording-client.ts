/** A DynamoDB client on the run's DynamoDB Local that notes every command it sends, for tests. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../shared/dynamodb';

export interface SentCommand {
  /** The command's name without `Command`: `Query`, `PutItem`, … */
  readonly command: string;
  readonly tableName: string;
  readonly indexName?: string;
  readonly limit?: number;
}

export const recordingClient = (endpoint: string) => {
  const client: DynamoDBDocumentClient = createDocumentClient({ endpoint });
  const sent: SentCommand[] = [];
  client.middlewareStack.add(
    (next, { commandName }) =>
      async (args) => {
        const input = args.input as { TableName: string; IndexName?: string; Limit?: number };
        sent.push({
          command: String(commandName).replace(/Command$/, ''),
          tableName: input.TableName,
          indexName: input.IndexName,
          limit: input.Limit,
        });
        return next(args);
      },
    { step: 'initialize', name: 'recordCommands' },
  );
  return { client, sent };
};
