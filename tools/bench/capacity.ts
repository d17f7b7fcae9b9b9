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

/** UpdateItem calls on one table: how many were sent, and how many wrote, per item (its `hashKey` attribute). */
export const countUpdates = (client: DynamoDBDocumentClient, tableName: string, hashKey: string) => {
  const counter = { sent: 0, writesByKey: new Map<string, number>() };
  client.middlewareStack.add(
    (next, { commandName }) =>
      async (args) => {
        const input = args.input as { TableName?: string; Key?: Record<string, unknown> };
        if (!/^Update(Item)?Command$/.test(String(commandName)) || input.TableName !== tableName) return next(args);
        counter.sent += 1;
        // Raw ({ S: … }) or document form, whichever this step sees.
        const value = input.Key?.[hashKey];
        const key = typeof value === 'string' ? value : String((value as { S?: string } | undefined)?.S);
        const result = await next(args); // a write its condition refused throws, and is not counted
        counter.writesByKey.set(key, (counter.writesByKey.get(key) ?? 0) + 1);
        return result;
      },
    { step: 'initialize', name: 'countUpdates' },
  );
  return counter;
};
