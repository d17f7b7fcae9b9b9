/** A DynamoDB client on the run's DynamoDB Local that notes every command it sends, for tests. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { functionsClient } from './database';
import { attributesOf, TRANSACTION_ITEM_ACTIONS } from './aws-calls';

export interface SentCommand {
  /** The command's name without `Command`: `Query`, `PutItem`, … */
  readonly command: string;
  readonly tableName: string;
  readonly indexName?: string;
  readonly limit?: number;
  /** An update's top-level attributes, as IAM's `dynamodb:Attributes` names them: its key's, and those its expressions name. */
  readonly attributes?: readonly string[];
  /** An update's ReturnValues, NONE when it sets none. */
  readonly returnValues?: string;
  /** A read's ConsistentRead: true for a strongly consistent one. */
  readonly consistentRead?: boolean;
}

interface UpdateInput {
  readonly ReturnValues?: string;
}

/** The action IAM checks for each kind of item in a transaction (there is no TransactWriteItems action). */
const TRANSACTION_ACTIONS = TRANSACTION_ITEM_ACTIONS;

type TransactItem = Partial<Record<keyof typeof TRANSACTION_ACTIONS, { TableName: string }>>;

export const recordingClient = (endpoint: string) => {
  const client: DynamoDBDocumentClient = functionsClient(endpoint);
  const sent: SentCommand[] = [];
  client.middlewareStack.add(
    (next, { commandName }) =>
      async (args) => {
        const input = args.input as {
          TableName: string;
          IndexName?: string;
          Limit?: number;
          ConsistentRead?: boolean;
          TransactItems?: TransactItem[];
        };
        if (input.TransactItems) {
          for (const item of input.TransactItems) {
            for (const [kind, action] of Object.entries(TRANSACTION_ACTIONS)) {
              const target = item[kind as keyof TransactItem];
              if (target) sent.push({ command: action, tableName: target.TableName });
            }
          }
          return next(args);
        }
        const command = String(commandName).replace(/Command$/, '');
        sent.push({
          command,
          tableName: input.TableName,
          indexName: input.IndexName,
          limit: input.Limit,
          ...(input.ConsistentRead === undefined ? {} : { consistentRead: input.ConsistentRead }),
          ...(command === 'UpdateItem'
            ? {
                attributes: attributesOf(input),
                returnValues: (input as UpdateInput).ReturnValues ?? 'NONE',
              }
            : {}),
        });
        return next(args);
      },
    { step: 'initialize', name: 'recordCommands' },
  );
  return { client, sent };
};
