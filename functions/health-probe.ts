/**
 * The region's health probe, run each minute by a schedule in every region of a stage in several:
 * the health route's database check (shared/database-health.ts), read afresh, published as the
 * metric `DatabaseReadable` (1 or 0). An alarm on it is what Route 53's health check of the region
 * follows (infra/constructs/health-probe.ts), so no public request can fail the check. A probe that
 * does not run publishes nothing, which the alarm counts as failing.
 */
import middy from '@middy/core';
import type { ScheduledEvent } from 'aws-lambda';
import { databaseHealth, type DatabaseHealth } from '../shared/database-health';
import { logger, safeErrorFields } from '../shared/logger';
import { publishLevel } from '../shared/metrics';

export interface HealthProbeDependencies {
  /** What is read; by default the environment's tables, every run (nothing reused). */
  readonly health?: DatabaseHealth;
}

export interface HealthProbeResult {
  readonly readable: boolean;
}

/** Whether every table answered; a failure is logged by its error's name and words, never a table's name. */
const probe = async (health: DatabaseHealth): Promise<boolean> => {
  try {
    await health.check();
    return true;
  } catch (error) {
    logger.error('health probe: the region cannot read its tables', safeErrorFields(error));
    return false;
  }
};

export const createHandler = ({ health = databaseHealth() }: HealthProbeDependencies = {}) =>
  middy<ScheduledEvent | Record<string, never>, HealthProbeResult>().handler(async () => {
    const readable = await probe(health);
    // The run succeeds either way: the metric is the answer, and a retried run would only repeat it.
    publishLevel('DatabaseReadable', readable ? 1 : 0);
    return { readable };
  });

export const handler = createHandler();
