/** A DynamoDB client on the run's DynamoDB Local that notes every command it sends, for tests. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../shared/dynamodb';

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
}

/** Words of an expression that name no attribute. */
const EXPRESSION_WORDS = new Set(
  ['SET', 'REMOVE', 'ADD', 'DELETE', 'AND', 'OR', 'NOT', 'BETWEEN', 'IN'].concat([
    'attribute_exists',
    'attribute_not_exists',
    'attribute_type',
    'begins_with',
    'contains',
    'size',
    'if_not_exists',
    'list_append',
  ]),
);

interface UpdateInput {
  readonly Key?: Record<string, unknown>;
  readonly UpdateExpression?: string;
  readonly ConditionExpression?: string;
  readonly ExpressionAttributeNames?: Record<string, string>;
  readonly ReturnValues?: string;
}

/** The top-level attributes an update names, sorted. */
const attributesOf = ({ Key = {}, UpdateExpression = '', ConditionExpression = '', ExpressionAttributeNames = {} }: UpdateInput) => {
  const names = `${UpdateExpression} ${ConditionExpression}`
    .replace(/:[A-Za-z0-9_]+/g, ' ')
    .replace(/#[A-Za-z0-9_]+/g, (placeholder) => ExpressionAttributeNames[placeholder] ?? placeholder)
    .match(/[A-Za-z_][A-Za-z0-9_]*/g);
  return [...new Set([...Object.keys(Key), ...(names ?? []).filter((word) => !EXPRESSION_WORDS.has(word))])].sort();
};

/** The action IAM checks for each kind of item in a transaction (there is no TransactWriteItems action). */
const TRANSACTION_ACTIONS = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' } as const;

type TransactItem = Partial<Record<keyof typeof TRANSACTION_ACTIONS, { TableName: string }>>;

export const recordingClient = (endpoint: string) => {
  const client: DynamoDBDocumentClient = createDocumentClient({ endpoint });
  const sent: SentCommand[] = [];
  client.middlewareStack.add(
    (next, { commandName }) =>
      async (args) => {
        const input = args.input as { TableName: string; IndexName?: string; Limit?: number; TransactItems?: TransactItem[] };
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
          ...(command === 'UpdateItem'
            ? { attributes: attributesOf(input as UpdateInput), returnValues: (input as UpdateInput).ReturnValues ?? 'NONE' }
            : {}),
        });
        return next(args);
      },
    { step: 'initialize', name: 'recordCommands' },
  );
  return { client, sent };
};
