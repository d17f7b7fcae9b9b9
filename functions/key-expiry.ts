/**
 * The expiry sweep, run on a schedule: marks each key whose expiry has passed with `expiredAt`,
 * as `system:key-expiry`. A key stops working at its `expiresAt` without this; the mark is a
 * write to the keys table, and so a stream record and a line of the audit trail ("expired"),
 * within one schedule interval of the expiry.
 */
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import { apiKeysRepository, type ApiKeysRepository } from '../shared/api-keys-repository';
import { logger, safeErrorFields } from '../shared/logger';

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

/**
 * What the sweep throws when it fails, in place of the error itself: the Lambda runtime logs a
 * thrown error's message and stack, and an SDK message may quote the table or the role. Thrown
 * still, so the invocation fails and the KeyExpiryErrors alarm fires.
 */
export class ExpirySweepFailed extends Error {
  constructor() {
    super('the expiry sweep failed: the line before says why');
    this.name = 'ExpirySweepFailed';
    this.stack = `${this.name}: ${this.message}`;
  }
}

/** One safe line for a failed sweep (safeErrorFields), then a failure that carries nothing else. */
const sweepFailureLog = (): middy.MiddlewareObj<ScheduledEvent | Record<string, never>, KeyExpiryResult> => ({
  onError: async (request) => {
    logger.error('expiry sweep failed', safeErrorFields(request.error));
    request.error = new ExpirySweepFailed();
  },
});

export const createHandler = ({ keys = apiKeysRepository(), now = () => new Date() }: KeyExpiryDependencies = {}) =>
  middy<ScheduledEvent | Record<string, never>, KeyExpiryResult>()
    .use(sweepFailureLog())
    .handler(async () => {
      const marked = (await keys.markExpired(now(), EXPIRY_SWEEP_ACTOR)).map((record) => record.keyId);
      if (marked.length > 0) logger.info('keys marked expired', { keyIds: marked });
      return { marked };
    });

export const handler = createHandler();
