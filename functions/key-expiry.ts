/**
 * The expiry sweep, run on a schedule: marks each key whose expiry has passed with `expiredAt`,
 * as `system:key-expiry`. A key stops working at its `expiresAt` without this; the mark is a
 * write to the keys table, and so a stream record and a line of the audit trail ("expired"),
 * within one schedule interval of the expiry.
 */
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import { apiKeysRepository, type ApiKeysRepository } from '../shared/api-keys-repository';
import { logger } from '../shared/logger';

/** Who the audit trail names for an expiry reached. */
export const EXPIRY_SWEEP_ACTOR = 'system:key-expiry';

export interface KeyExpiryDependencies {
  readonly keys?: ApiKeysRepository;
  readonly now?: () => Date;
}

export interface KeyExpiryResult {
  /** Ids of the keys marked expired by this run. */
  readonly marked: readonly string[];
}

export const createHandler = ({ keys = apiKeysRepository(), now = () => new Date() }: KeyExpiryDependencies = {}) =>
  middy<ScheduledEvent | Record<string, never>, KeyExpiryResult>().handler(async () => {
    const marked = (await keys.markExpired(now(), EXPIRY_SWEEP_ACTOR)).map((record) => record.keyId);
    if (marked.length > 0) logger.info('keys marked expired', { keyIds: marked });
    return { marked };
  });

export const handler = createHandler();
