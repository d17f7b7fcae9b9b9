/**
 * A CloudFormation custom resource that turns on one replica's DynamoDB deletion protection
 * (infra/constructs/table-protection.ts puts one per table and region, last in the stack). Its
 * properties name the table and the replica's region; one function serves every table and region.
 *
 * - Create: waits until the table, its replicas and its indexes are settled (none CREATING, UPDATING
 *   or DELETING: DynamoDB refuses UpdateTable on a busy table with ResourceInUseException, which
 *   the SDK does not retry), reads whether the protection is already on, and if not turns it on.
 *   The physical resource id records which (shared/table-protection.ts).
 * - Update: the same, under the same id.
 * - Delete (sent only by the rollback of the create that made the resource): turns the protection
 *   off only if this resource turned it on, so that the rollback can delete the tables it made;
 *   a table protected before (by hand, or by an earlier deploy) stays protected. It always answers
 *   SUCCESS: a rollback must not stop on it.
 *
 * A busy table, ResourceInUseException, LimitExceededException and AccessDeniedException (the
 * role's policy can take a while to reach DynamoDB just after it is made) are retried with backoff
 * for up to PROTECTION_BUDGET_SECONDS; then the request fails with one clear reason, well within the
 * function's timeout, so CloudFormation always gets an answer.
 */
import { DescribeTableCommand, DynamoDBClient, UpdateTableCommand, type TableDescription } from '@aws-sdk/client-dynamodb';
import type { CloudFormationCustomResourceEvent, CloudFormationCustomResourceResponse } from 'aws-lambda';
import { setTimeout as sleep } from 'node:timers/promises';
import { putResponse } from '../shared/custom-resource-response';
import { logger, safeErrorFields } from '../shared/logger';
import {
  originOf,
  PROTECTION_BUDGET_SECONDS,
  protectionResourceId,
  TABLE_NAME_PROPERTY,
  TABLE_REGION_PROPERTY,
  type ProtectionOrigin,
} from '../shared/table-protection';

export interface TableProtectionDependencies {
  /** The DynamoDB client of a region. @default one SDK client per region */
  readonly clientFor?: (region: string) => DynamoDBClient;
  /** Waits this long. @default a timer */
  readonly wait?: (milliseconds: number) => Promise<void>;
  /** The time now, in milliseconds. @default Date.now */
  readonly now?: () => number;
  /** Sends the response to CloudFormation. @default an HTTPS PUT of the body to the presigned URL */
  readonly respond?: (url: string, body: string) => Promise<void>;
}

/** The errors that pass with time: a busy table, a control-plane limit, a role not yet effective. */
const RETRIED_ERRORS = new Set(['ResourceInUseException', 'LimitExceededException', 'AccessDeniedException']);
/** The statuses of a table, replica or index that DynamoDB is still changing. */
const CHANGING = new Set(['CREATING', 'UPDATING', 'DELETING']);
const FIRST_RETRY_MS = 2_000;
const LONGEST_RETRY_MS = 30_000;

/** What of the table is still changing; none when UpdateTable can be sent. */
const changingParts = (table: TableDescription | undefined): string[] => [
  ...(CHANGING.has(table?.TableStatus ?? '') ? [`table ${table?.TableStatus}`] : []),
  ...(table?.Replicas ?? []).flatMap(({ RegionName, ReplicaStatus }) =>
    CHANGING.has(ReplicaStatus ?? '') ? [`replica in ${RegionName} ${ReplicaStatus}`] : [],
  ),
  ...(table?.GlobalSecondaryIndexes ?? []).flatMap(({ IndexName, IndexStatus }) =>
    CHANGING.has(IndexStatus ?? '') ? [`index ${IndexName} ${IndexStatus}`] : [],
  ),
];

const errorName = (error: unknown): string => (error instanceof Error ? error.name : typeof error);

const defaultClients = new Map<string, DynamoDBClient>();
const defaultClientFor = (region: string): DynamoDBClient => {
  let client = defaultClients.get(region);
  if (!client) {
    client = new DynamoDBClient({ region });
    defaultClients.set(region, client);
  }
  return client;
};

export const createHandler = ({
  clientFor = defaultClientFor,
  wait = (milliseconds) => sleep(milliseconds).then(() => undefined),
  now = Date.now,
  respond = putResponse,
}: TableProtectionDependencies = {}) => {
  /**
   * Sets the replica's protection to `enabled`, once the table is settled, retrying what passes with
   * time until the budget is spent. Answers whether it was already so (then nothing was sent).
   */
  const setProtection = async (client: DynamoDBClient, tableName: string, enabled: boolean): Promise<{ alreadySo: boolean }> => {
    const deadline = now() + PROTECTION_BUDGET_SECONDS * 1000;
    for (let attempt = 0; ; attempt += 1) {
      let waitingFor: string;
      try {
        const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
        const changing = changingParts(Table);
        if (changing.length === 0) {
          if ((Table?.DeletionProtectionEnabled ?? false) === enabled) return { alreadySo: true };
          await client.send(new UpdateTableCommand({ TableName: tableName, DeletionProtectionEnabled: enabled }));
          return { alreadySo: false };
        }
        waitingFor = changing.join(', ');
      } catch (error) {
        if (!RETRIED_ERRORS.has(errorName(error))) throw error;
        waitingFor = errorName(error);
      }
      const delay = Math.min(FIRST_RETRY_MS * 2 ** attempt, LONGEST_RETRY_MS);
      if (now() + delay > deadline)
        throw new Error(`Gave up after ${PROTECTION_BUDGET_SECONDS} s of retries, still waiting for: ${waitingFor}`);
      logger.info('table protection: waiting to retry', { waitingFor, attempt, delayMs: delay });
      await wait(delay);
    }
  };

  return async (event: CloudFormationCustomResourceEvent): Promise<void> => {
    const tableName = String(event.ResourceProperties[TABLE_NAME_PROPERTY] ?? '');
    const region = String(event.ResourceProperties[TABLE_REGION_PROPERTY] ?? '');
    // A create that fails turned nothing on (UpdateTable is its last call): its rollback's Delete leaves the table as it is.
    let physicalResourceId =
      event.RequestType === 'Create' ? protectionResourceId(tableName, region, 'not turned on') : event.PhysicalResourceId;
    let status: 'SUCCESS' | 'FAILED' = 'SUCCESS';
    let reason: string;
    try {
      if (tableName === '' || region === '') throw new Error(`${TABLE_NAME_PROPERTY} and ${TABLE_REGION_PROPERTY} are required`);
      const client = clientFor(region);
      if (event.RequestType === 'Delete') {
        const origin = originOf(event.PhysicalResourceId);
        if (origin === 'turned on') {
          await setProtection(client, tableName, false);
          reason = 'Turned the protection off: this resource had turned it on';
        } else {
          reason = 'Left the protection as it is: this resource did not turn it on';
        }
      } else {
        const { alreadySo } = await setProtection(client, tableName, true);
        if (event.RequestType === 'Create') {
          const origin: ProtectionOrigin = alreadySo ? 'on before' : 'turned on';
          physicalResourceId = protectionResourceId(tableName, region, origin);
        }
        reason = alreadySo ? 'The protection was already on' : 'Turned the protection on';
      }
    } catch (error) {
      // Without the table's name: CloudFormation's events name the resource.
      reason = safeErrorFields(error).errorMessage.split(tableName).join('<table>');
      // A rollback must not stop on a Delete: a protection left on is the operator's to turn off.
      status = event.RequestType === 'Delete' ? 'SUCCESS' : 'FAILED';
    }
    const response: CloudFormationCustomResourceResponse = {
      Status: status,
      Reason: reason,
      PhysicalResourceId: physicalResourceId,
      StackId: event.StackId,
      RequestId: event.RequestId,
      LogicalResourceId: event.LogicalResourceId,
    };
    logger.info('table protection: answered', {
      requestType: event.RequestType,
      logicalResourceId: event.LogicalResourceId,
      region,
      status,
      origin: originOf(physicalResourceId),
      reason,
    });
    try {
      await respond(event.ResponseURL, JSON.stringify(response));
    } catch (error) {
      // Thrown again: Lambda retries the event, and CloudFormation waits for an answer until then.
      logger.error('table protection: could not answer CloudFormation', safeErrorFields(error));
      throw error;
    }
  };
};

export const handler = createHandler();
