/** Client middlewares that watch what the real repository code sends. */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Asks for `ReturnConsumedCapacity: 'TOTAL'` on every call and adds up the capacity units. */
export const meterCapacity = (client: DynamoDBDocumentClient) => {
  const meter = { units: 0, calls: 0 };
  client.middlewareStack.add(
    (next) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity;
      meter.units += consumed?.CapacityUnits ?? 0;
      meter.calls += 1;
      return result;
    },
    { step: 'initialize', name: 'meterCapacity' },
  );
  return meter;
};

/** Counts GetItem calls on one table. */
export const countGets = (client: DynamoDBDocumentClient, tableName: string) => {
  const counter = { gets: 0 };
  client.middlewareStack.add(
    (next, { commandName }) =>
      async (args) => {
        if (/^Get(Item)?Command$/.test(String(commandName)) && (args.input as { TableName?: string }).TableName === tableName)
          counter.gets += 1;
        return next(args);
      },
    { step: 'initialize', name: 'countGets' },
  );
  return counter;
};
