/**
 * GET /health (keyless): 200 `{"status":"ok"}` when this region can read its pets, keys and
 * idempotency tables and is not drained, else 503 with Retry-After (the error formatter's answer
 * to DatabaseUnavailable, which a drained region's RegionDrained is). It says nothing else: no
 * region, table, version or reason; its log line tells a drained region from an unreadable table.
 * For clients and monitors; Route 53 follows the region's health probe instead, which runs the
 * same check (functions/health-probe.ts).
 */
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { databaseHealth, HEALTH_REUSE_SECONDS, reusedFor, type DatabaseHealth } from '../shared/database-health';
import { httpApi } from '../shared/http/http-api';
import { json } from '../shared/http/response';
import type { Health } from '../shared/models';
import { routeOf } from '../shared/routes';

export interface HealthDependencies {
  /** What is read; by default the environment's tables, its outcome reused for HEALTH_REUSE_SECONDS. */
  readonly health?: DatabaseHealth;
}

const route = routeOf('getHealth');
const OK: Health = { status: 'ok' };

export const createHandler = ({ health = reusedFor(databaseHealth(), HEALTH_REUSE_SECONDS) }: HealthDependencies = {}) =>
  middy<APIGatewayProxyEvent, APIGatewayProxyResult>()
    .use(httpApi({ operationId: route.operationId }))
    .handler(async () => {
      await health.check();
      return json(200, OK);
    });

export const handler = createHandler();
