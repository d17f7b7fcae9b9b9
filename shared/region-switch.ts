/**
 * The regional switch that takes one region of a stage in several out of its domain, and puts it
 * back (`npm run region`, tools/region/): one item per region in the idempotency table, keyed
 * `region#<region>`, that stands while the region is drained. Each region's health check reads its
 * own region's switch as its read of that table (shared/database-health.ts) and fails while the
 * item stands, so the region's probe publishes 0, its alarm fires, and Route 53's health check and
 * DNS follow: data planes only, no call to Route 53's control plane (docs).
 *
 * In a stage in several regions the idempotency table is strongly consistent (MRSC): a write needs
 * a quorum of its region set, so any region that has one takes it (us-east-1 down or not), and
 * every region reads it at once. No request path writes such a key: a record's key is a SHA-256
 * hash in hexadecimal and a reservation's `pet#<id>` (shared/idempotency.ts); the sweep's index
 * holds only items with an expiry bucket, which a switch has not.
 */
import { idempotencyTable } from './tables';

/** What every switch's key starts with: no idempotency record's or reservation's key does. */
export const REGION_SWITCH_PREFIX = 'region#';

/** The key of a region's switch in the idempotency table. */
export const regionSwitchKey = (region: string): Record<string, string> => ({
  [idempotencyTable.partitionKey.name]: `${REGION_SWITCH_PREFIX}${region}`,
});

/** Who drained a region and when: the switch item's attributes besides its key, for `status`. */
export interface RegionDrain {
  readonly region: string;
  /** ISO 8601 UTC. */
  readonly drainedAt: string;
  /** The AWS identity's ARN that wrote it, or `local:<user>` on DynamoDB Local. */
  readonly drainedBy: string;
}

/** An AWS region's name as AWS writes it: `us-east-2`, `eu-west-1`, `us-gov-west-1`. */
export const REGION_NAME_PATTERN = /^[a-z]{2}(-[a-z]+)+-\d{1,2}$/;
