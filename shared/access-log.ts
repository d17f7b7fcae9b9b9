/**
 * The stage's access log: one JSON line per request, its fields named here once. The stack gives
 * API Gateway the format (each field's `$context` variable); the local gateway writes the same
 * fields from what it knows of each request. The saved queries and the metric filters read them.
 * Never a header, a body or the key: `keyId` is the authorizer's principal, the key's short id.
 */

/**
 * Each field and the `$context` variable API Gateway fills it from. Every value is one API
 * Gateway or the authorizer produces, none a client writes: API Gateway has not always escaped
 * quotes and backslashes in the values it writes into a JSON format (a client's User-Agent broke
 * the JSON of one public API's access log: https://github.com/DataBiosphere/azul/issues/4348), and
 * a line that is not JSON is read by no metric filter and no saved query. So no header (the
 * User-Agent; nor the X-Ray trace id, which API Gateway takes from a client's X-Amzn-Trace-Id)
 * and no path as sent (`resourcePath` is the route's template).
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  // Which API wrote the line: the stages of an account share the PetStore namespace, and the
  // access log's metric filters tell them apart by it.
  apiId: '$context.apiId',
  status: '$context.status',
  gatewayResponse: '$context.error.responseType',
  keyId: '$context.authorizer.principalId',
  // The key's usage plan, from the authorizer's context (shared/auth-policy.ts, AuthorizerContext.plan).
  plan: '$context.authorizer.plan',
  httpMethod: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  requestTime: '$context.requestTimeEpoch',
  // The address of the connection API Gateway accepted, not a header's.
  sourceIp: '$context.identity.sourceIp',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integration.latency',
  integrationStatus: '$context.integration.status',
  authorizerStatus: '$context.authorizer.status',
  authorizerLatency: '$context.authorizer.latency',
} as const;

export type AccessLogField = keyof typeof ACCESS_LOG_FIELDS;
export type AccessLogVariable = (typeof ACCESS_LOG_FIELDS)[AccessLogField];

/** An access line as API Gateway writes it: every value a string (the format quotes each), `-` when it has none. */
export type AccessLogLine = Readonly<Record<AccessLogField, string>>;

/** What API Gateway writes for a variable without a value. */
export const NO_VALUE = '-';

/** The format the stage is given: a JSON object of the fields, each its variable's quoted value. */
export const accessLogFormat = (): string => JSON.stringify(ACCESS_LOG_FIELDS);

/**
 * The line for the variables' values, as API Gateway renders the format: every field, each its
 * variable's value as text, `-` for none. Every variable must be given, `undefined` for none, so
 * that a field added above cannot be left out of the local line.
 */
export const accessLogLine = (values: Readonly<Record<AccessLogVariable, string | number | undefined>>): AccessLogLine =>
  Object.fromEntries(
    Object.entries(ACCESS_LOG_FIELDS).map(([field, variable]) => {
      const value = values[variable];
      return [field, value === undefined || value === '' ? NO_VALUE : String(value)];
    }),
  ) as AccessLogLine;
