/**
 * The table protection's contract (functions/table-protection.ts, infra/constructs/table-protection.ts):
 * the custom resource's type, the properties that name its table and region, and the physical
 * resource ids that record, for the rollback's Delete, whether the resource turned the protection on.
 */

/** The custom resources' type: what the deploy rules and the IAM simulation find them by. */
export const TABLE_PROTECTION_RESOURCE_TYPE = 'Custom::TableDeletionProtection';
/** The property naming the table (its fixed name). */
export const TABLE_NAME_PROPERTY = 'TableName';
/** The property naming the region of the replica it protects. */
export const TABLE_REGION_PROPERTY = 'Region';
/** The property carrying the fingerprint of the protected table's template (ignored by the function). */
export const TABLE_TEMPLATE_PROPERTY = 'TableTemplate';
/** The longest a request may take in the function, its waits and retries included; its timeout is set above it. */
export const PROTECTION_BUDGET_SECONDS = 12 * 60;

/**
 * Whether the replica's protection was on before the resource's create, this resource turned it on,
 * or its create failed before turning it on.
 */
export type ProtectionOrigin = 'on before' | 'turned on' | 'not turned on';

/**
 * The physical resource id a create answers with, kept for the resource's life: a Delete (sent only
 * by the rollback of that create) turns the protection off only when the id says this resource turned it on.
 */
export const protectionResourceId = (tableName: string, region: string, origin: ProtectionOrigin): string =>
  `${tableName} in ${region}: ${origin}`;

/** What an id says; `undefined` for one this function did not make (then the protection is left as it is). */
export const originOf = (physicalResourceId: string | undefined): ProtectionOrigin | undefined => {
  if (physicalResourceId?.endsWith(': turned on')) return 'turned on';
  if (physicalResourceId?.endsWith(': on before')) return 'on before';
  if (physicalResourceId?.endsWith(': not turned on')) return 'not turned on';
  return undefined;
};
