/** How a deployed stage is found: its stack name and the outputs operators and tools read. */
import { PROJECT_NAME, PROJECT_NAME_PASCAL } from './project';
import type { TableDefinition } from './tables';

/** A stage's stack: the same name in each of its regions (stack names are per region). */
export const stackName = (stage: string): string => `${PROJECT_NAME_PASCAL}-${stage}`;

/** What every name of a stage's own resources starts with, `<project>-<stage>`: its functions', alarms', tables'. */
export const stageResourcePrefix = (stage: string): string => `${PROJECT_NAME}-${stage}`;

/**
 * A table's deployed name: fixed, and the same in every region of the stage, so that each region's
 * stack finds its replica of the home region's global table by name.
 */
export const deployedTableName = (stage: string, table: Pick<TableDefinition, 'defaultName'>): string =>
  `${stageResourcePrefix(stage)}-${table.defaultName}`;

export const stackOutputs = {
  apiUrl: 'ApiUrl',
  /** A stage in several regions: this region's own base URL, `https://<region>.<domainName>/v1`. */
  regionalApiUrl: 'RegionalApiUrl',
  restApiId: 'RestApiId',
  petsTableName: 'PetsTableName',
  apiKeysTableName: 'ApiKeysTableName',
  apiKeyLastUseTableName: 'ApiKeyLastUseTableName',
  dashboardUrl: 'DashboardUrl',
  usagePlanIds: 'UsagePlanIds',
  keyAuditLogGroupName: 'KeyAuditLogGroupName',
} as const;

/**
 * The alias every caller of a function invokes (infra/constructs/api-function.ts), and the one a
 * release moves: the pre-traffic hook checks deployments of this alias only.
 */
export const LIVE_ALIAS = 'live';

/**
 * How long a function may run. A DynamoDB outage answers 503 within about 3 s (bounded retries
 * and timeouts), well inside this; the local server gives handlers the same budget.
 */
export const FUNCTION_TIMEOUT_SECONDS = 10;
/** How long API Gateway waits for an integration or an authorizer before it answers 504 itself (REST APIs' default maximum). */
export const API_GATEWAY_INTEGRATION_TIMEOUT_SECONDS = 29;
/**
 * How long the pre-traffic hook may run (functions/pre-traffic-hook.ts): its checks run at once,
 * each given up on after at most 25 s, with time left to report. A hook Lambda ends before it
 * reports leaves CodeDeploy waiting an hour, and the stack update with it.
 */
export const PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS = 60;
