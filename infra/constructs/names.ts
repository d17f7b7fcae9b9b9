/**
 * How the stack names a function and the alarms about it, defined once: the constructs name them
 * with these, and the documents' tables (tools/openapi/docs-tables.ts) are generated with them.
 * Imports nothing of the CDK, so that the generator need not load it.
 */

/** `listPets` → `ListPets`, for construct ids. */
export const pascalCase = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/** A function's name: `<namePrefix>-<name>`, the name an operationId, `authorizer`, `keyAudit`… */
export const functionNameOf = (namePrefix: string, name: string) => `${namePrefix}-${name}`;

/** The operational alarm (Monitoring) on a function's errors. */
export const functionErrorsAlarmId = (name: string) => `${pascalCase(name)}Errors`;

/** The release alarm on the errors of a function's new version. */
export const newVersionErrorsAlarmId = (name: string) => `${pascalCase(name)}NewVersionErrors`;

/** The release alarm on the 5xx rate of the position-th method an operation serves (from 0). */
export const methodServerErrorRateAlarmId = (operationId: string, position: number) =>
  `${pascalCase(operationId)}ServerErrorRate${position === 0 ? '' : position + 1}`;

/** The release alarm on the authorizer's failures, which its deployment group watches. */
export const AUTHORIZER_FAILURES_ALARM_ID = 'AuthorizerFailures';

/** The construct id of the stack's Release: the release alarms' ids start with it in the console. */
export const RELEASE_ID = 'Release';

/** The alarm (Monitoring, home region) on the keys table's replication to another region of the stage: `us-east-2` → `KeysReplicationLatencyUsEast2`. */
export const keysReplicationAlarmId = (region: string) =>
  `KeysReplicationLatency${region
    .split('-')
    .map((part) => pascalCase(part))
    .join('')}`;

/**
 * The stage's dashboard in one region: `<namePrefix>-<region>`, e.g. `pet-store-global-us-east-2`.
 * CloudWatch holds a dashboard name once per account, not per region ("All dashboards in your
 * account are global, not region-specific": AWS::CloudWatch::Dashboard), so each region's stack
 * of a stage, and a stage deployed to two regions of one account, needs a name of its own.
 */
export const dashboardNameOf = (namePrefix: string, region: string) => `${namePrefix}-${region}`;
