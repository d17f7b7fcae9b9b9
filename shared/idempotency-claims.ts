/**
 * Claims: which pet id a keyed create chose, kept in the idempotency table. A create whose pet
 * was stored but whose answer was lost fails, so Powertools forgets its in-progress record; the
 * client's retry then finds the claim, writes to the same id with the same write id, and the
 * pets repository recognises its own earlier write instead of storing a second pet.
 */
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { callDatabase } from './dynamodb';
import type { WriteIdentity } from './pets-repository';

export interface IdClaimsOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** How long a claim holds: as long as the idempotency record it backs. */
  readonly ttlSeconds: number;
}

const isConditionFailure = (error: unknown): error is Error & { Item?: Record<string, { N?: string }> } =>
  error instanceof Error && error.name === 'ConditionalCheckFailedException';

/** The write identity of the create with this write id: one pet id, whichever attempt asks. */
export const idClaims =
  ({ client, tableName, ttlSeconds }: IdClaimsOptions) =>
  (writeId: string): WriteIdentity => ({
    writeId,
    claimId: async (candidate, replacing) => {
      const now = Math.floor(Date.now() / 1000);
      try {
        await callDatabase(() =>
          client.send(
            new PutCommand({
              TableName: tableName,
              Item: { id: `pet-claim#${writeId}`, petId: candidate, expiration: now + ttlSeconds },
              // A first claim, or one past its expiry (TTL deletes lazily); or moving off a taken id.
              ...(replacing === undefined
                ? { ConditionExpression: 'attribute_not_exists(id) OR expiration < :now', ExpressionAttributeValues: { ':now': now } }
                : { ConditionExpression: 'petId = :taken', ExpressionAttributeValues: { ':taken': replacing } }),
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            }),
          ),
        );
        return candidate;
      } catch (error) {
        const claimed = isConditionFailure(error) ? error.Item?.petId?.N : undefined;
        if (claimed !== undefined) return Number(claimed);
        throw error;
      }
    },
  });
