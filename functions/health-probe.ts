/**
 * The region's health probe, run each minute by a schedule in every region of a stage in several:
 * the health route's check (shared/database-health.ts), read afresh, published as the metric
 * `DatabaseReadable`: 1, or 0 when a table cannot be read or operators drained the region
 * (`npm run region`). An alarm on it is what Route 53's health check of the region follows
 * (infra/constructs/health-probe.ts), so no public request can fail the check, and a drain takes
 * the region out of DNS as a fault does. A probe that does not run publishes nothing, which the
 * alarm counts as failing.
 */
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import { databaseHealth, RegionDrained, type DatabaseHealth } from '../shared/database-health';
import { logger, safeErrorFields } from '../shared/logger';
import { publishLevel } from '../shared/metrics';

export interface HealthProbeDependencies {
  /** What is read; by default the environment's tables, every run (nothing reused). */
  readonly health?: DatabaseHealth;
}

export interface HealthProbeResult {
  /** What was published: whether the region passed its check. */
  readonly readable: boolean;
  /** Whether it failed because operators drained the region, not because a table could not be read. */
  readonly drained: boolean;
}

/**
 * Whether every table answered and the region is not drained. A drain is a warning (operators
 * asked for it); a table that cannot be read is an error, logged by its error's name and words,
 * never a table's name.
 */
const probe = async (health: DatabaseHealth): Promise<HealthProbeResult> => {
  try {
    await health.check();
    return { readable: true, drained: false };
  } catch (error) {
    if (error instanceof RegionDrained) {
      logger.warn('health probe: the region is drained: it reports 0 until restored (npm run region -- restore)');
      return { readable: false, drained: true };
    }
    logger.error('health probe: the region cannot read its tables', safeErrorFields(error));
    return { readable: false, drained: false };
  }
};

export const createHandler = ({ health = databaseHealth() }: HealthProbeDependencies = {}) =>
  middy<ScheduledEvent | Record<string, never>, HealthProbeResult>().handler(async () => {
    const result = await probe(health);
    // The run succeeds either way: the metric is the answer, and a retried run would only repeat it.
    publishLevel('DatabaseReadable', result.readable ? 1 : 0);
    return result;
  });

export const handler = createHandler();
