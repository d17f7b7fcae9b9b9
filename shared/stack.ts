/** How a deployed stage is found: its stack name and the outputs operators and tools read. */
import { PROJECT_NAME_PASCAL } from './project';

export const stackName = (stage: string): string => `${PROJECT_NAME_PASCAL}-${stage}`;

export const stackOutputs = {
  apiUrl: 'ApiUrl',
  petsTableName: 'PetsTableName',
  apiKeysTableName: 'ApiKeysTableName',
  dashboardUrl: 'DashboardUrl',
  usagePlanIds: 'UsagePlanIds',
  keyAuditLogGroupName: 'KeyAuditLogGroupName',
} as const;

/**
 * How long a function may run. A DynamoDB outage answers 503 within about 3 s (bounded retries
 * and timeouts), well inside this; the local server gives handlers the same budget.
 */
export const FUNCTION_TIMEOUT_SECONDS = 10;
