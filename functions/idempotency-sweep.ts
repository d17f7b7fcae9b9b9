/**
 * The idempotency sweep, run on a schedule in the stage's home region only: deletes the expired
 * idempotency records, which DynamoDB's TTL would delete on a table that has it (a strongly
 * consistent global table has none). An expired record counts as none whether or not this has run
 * (shared/pets-repository.ts), so a late or failed run costs storage, never a wrong answer. Its
 * work per run is bounded; it logs and publishes counts only, never a record's key.
 */
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import { idempotencyRecords, type IdempotencyRecords, type SweepResult } from '../shared/idempotency-records';
import { logger, safeErrorFields } from '../shared/logger';
import { publishLevel } from '../shared/metrics';

/** The most records one run deletes: at 25 at a time, well inside the function's timeout. */
export const MAX_DELETES_PER_RUN = 10_000;

export interface IdempotencySweepDependencies {
  readonly records?: IdempotencyRecords;
  readonly now?: () => Date;
  readonly maxDeletes?: number;
}

/**
 * What the sweep throws when it fails, in place of the error itself: the Lambda runtime logs a
 * thrown error's message and stack, and an SDK message may quote the table. Thrown still, so the
 * invocation fails (and EventBridge retries it).
 */
export class IdempotencySweepFailed extends Error {
  constructor() {
    super('the idempotency sweep failed: the line before says why');
    this.name = 'IdempotencySweepFailed';
    this.stack = `${this.name}: ${this.message}`;
  }
}

const sweepFailureLog = (): middy.MiddlewareObj<ScheduledEvent | Record<string, never>, SweepResult> => ({
  onError: async (request) => {
    logger.error('idempotency sweep failed', safeErrorFields(request.error));
    request.error = new IdempotencySweepFailed();
  },
});

export const createHandler = ({
  records = idempotencyRecords(),
  now = () => new Date(),
  maxDeletes = MAX_DELETES_PER_RUN,
}: IdempotencySweepDependencies = {}) =>
  middy<ScheduledEvent | Record<string, never>, SweepResult>()
    .use(sweepFailureLog())
    .handler(async () => {
      const result = await records.deleteExpired({
        now: Math.floor(now().getTime() / 1000),
        maxDeletes,
      });
      logger.info('expired idempotency records swept', { ...result });
      // Only what happened: a metric published costs by the hour, and no datapoint reads as none.
      if (result.deleted > 0) publishLevel('IdempotencyRecordsDeleted', result.deleted);
      // A run that stopped at its bound: records expire faster than the schedule deletes them.
      if (result.cutShort) publishLevel('IdempotencySweepCutShort', 1);
      return result;
    });

export const handler = createHandler();
