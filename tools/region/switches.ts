/**
 * The regional switches as `npm run region` reads and writes them (shared/region-switch.ts): a
 * drain puts a region's item, once (a second drain keeps the first one's who and when); a restore
 * deletes it; a status reads it, strongly consistent. Each write goes through callReplicated: on
 * the strongly consistent global table two regions writing one switch at once meet a replicated
 * write conflict, retried a few times.
 */
import { DeleteCommand, GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { callDatabase, callReplicated, isConditionFailure } from '../../shared/dynamodb';
import { regionSwitchKey, type RegionDrain } from '../../shared/region-switch';
import { idempotencyTable } from '../../shared/tables';

export interface RegionSwitches {
  /** Drains `region`: the drain that stands now, and whether this call wrote it (false: it was drained already). */
  drain(region: string, drainedBy: string, at: Date): Promise<{ readonly drain: RegionDrain; readonly written: boolean }>;
  /** Restores `region`: the drain it ended, or none when the region was not drained. */
  restore(region: string): Promise<RegionDrain | undefined>;
  /** The drain that stands for `region`, or none. */
  status(region: string): Promise<RegionDrain | undefined>;
}

const KEY = idempotencyTable.partitionKey.name;

/** A switch item as a drain; none when there is no item. */
const drainOf = (region: string, item: Record<string, unknown> | undefined): RegionDrain | undefined =>
  item === undefined ? undefined : { region, drainedAt: String(item.drainedAt ?? ''), drainedBy: String(item.drainedBy ?? '') };

export const regionSwitches = (client: DynamoDBDocumentClient, tableName: string): RegionSwitches => {
  const status = async (region: string): Promise<RegionDrain | undefined> => {
    const { Item } = await callDatabase(() =>
      client.send(new GetCommand({ TableName: tableName, Key: regionSwitchKey(region), ConsistentRead: true })),
    );
    return drainOf(region, Item);
  };

  const drain: RegionSwitches['drain'] = async (region, drainedBy, at) => {
    const drain: RegionDrain = { region, drainedAt: at.toISOString(), drainedBy };
    try {
      await callReplicated(() =>
        client.send(
          new PutCommand({
            TableName: tableName,
            Item: { ...regionSwitchKey(region), drainedAt: drain.drainedAt, drainedBy },
            // Drained already: the first drain's who and when stay, for status.
            ConditionExpression: 'attribute_not_exists(#key)',
            ExpressionAttributeNames: { '#key': KEY },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        ),
      );
      return { drain, written: true };
    } catch (error) {
      if (!isConditionFailure<Record<string, AttributeValue>>(error)) throw error;
      // The item that stood in the way comes in DynamoDB's attribute-value form.
      const standing = drainOf(region, error.Item && unmarshall(error.Item));
      return { drain: standing ?? (await status(region)) ?? drain, written: false };
    }
  };

  const restore = async (region: string): Promise<RegionDrain | undefined> => {
    const { Attributes } = await callReplicated(() =>
      client.send(new DeleteCommand({ TableName: tableName, Key: regionSwitchKey(region), ReturnValues: 'ALL_OLD' })),
    );
    return drainOf(region, Attributes);
  };

  return { drain, restore, status };
};
