/**
 * The saved Logs Insights queries of a stage, as data: what each answers, which log groups it
 * reads, and its text. The stack saves each as `pet-store-<stage>/<name>`
 * (infra/constructs/saved-queries.ts), so they share one folder in the console; docs/operations.md
 * lists them (generated); the tests check every field a query reads against real log lines.
 */
import type { QueryStringProps } from 'aws-cdk-lib/aws-logs';
import { ACCESS_LOG_FIELDS } from '../shared/access-log';
import { gatewayResponses, type GatewayResponseType } from '../shared/gateway-responses';
import { AUDIT_MESSAGE } from '../shared/key-audit';

/** The log groups a query can read: the stage's access log, and the functions' groups by what they are. */
export type QueriedLogGroup = 'access' | 'operations' | 'authorizer' | 'audit';

export interface SavedQuery {
  /** Its name in the stage's folder: `pet-store-<stage>/<name>`. */
  readonly name: string;
  /** What it answers, for the operator choosing one. */
  readonly answers: string;
  readonly logGroups: readonly QueriedLogGroup[];
  readonly query: QueryStringProps;
}

/** A query's name in the console: `<folder>/<name>`; the console groups the queries of a folder. */
export const savedQueryName = (folder: string, query: Pick<SavedQuery, 'name'>): string => `${folder}/${query.name}`;

/** What the one-request query looks for until the operator puts the `x-amzn-RequestId` in its place. */
export const REQUEST_ID_PLACEHOLDER = 'REQUEST_ID';

/** API Gateway's refusals of a key over its plan or the stage's rate (429 `too_many_requests`) or quota (429 `quota_exceeded`). */
export const tooManyRequestsTypes = (code: 'too_many_requests' | 'quota_exceeded'): GatewayResponseType[] =>
  (Object.keys(gatewayResponses) as GatewayResponseType[]).filter((type) => gatewayResponses[type].code === code);

const quotedList = (values: readonly string[]) => `[${values.map((value) => JSON.stringify(value)).join(', ')}]`;

/** A field of the access log, by its name there: a renamed field fails to compile here. */
const access = (field: keyof typeof ACCESS_LOG_FIELDS) => field;

export const savedQueries: readonly SavedQuery[] = [
  {
    name: 'one-request',
    answers: `every line of one request, by the \`x-amzn-RequestId\` its client got (edit the query: the id in place of \`${REQUEST_ID_PLACEHOLDER}\`)`,
    logGroups: ['access', 'operations'],
    query: {
      fields: [
        '@timestamp',
        '@log',
        access('status'),
        access('gatewayResponse'),
        'operation',
        'errorCode',
        access('keyId'),
        access('plan'),
      ],
      filterStatements: [`${access('requestId')} = "${REQUEST_ID_PLACEHOLDER}"`],
      sort: '@timestamp asc',
    },
  },
  {
    name: 'errors-by-code',
    answers: "the functions' error answers, counted by operation and error code",
    logGroups: ['operations'],
    query: {
      filterStatements: ['ispresent(errorCode)'],
      statsStatements: ['count(*) as errors by operation, errorCode'],
      sort: 'errors desc',
    },
  },
  {
    name: 'too-many-requests-by-key',
    answers: "429s (`too_many_requests`, `quota_exceeded`) by key id and plan: who is at their plan's limit",
    logGroups: ['access'],
    query: {
      filterStatements: [
        `${access('gatewayResponse')} in ${quotedList([...tooManyRequestsTypes('too_many_requests'), ...tooManyRequestsTypes('quota_exceeded')])}`,
      ],
      statsStatements: [`count(*) as refused by ${access('keyId')}, ${access('plan')}, ${access('gatewayResponse')}`],
      sort: 'refused desc',
    },
  },
  {
    name: 'slowest-requests',
    answers: 'the 50 slowest requests a function answered, with their operation, status and key id',
    logGroups: ['operations'],
    query: {
      fields: ['@timestamp', 'requestId', 'operation', 'status', 'latencyMs', 'coldStart', 'keyId'],
      filterStatements: ['ispresent(latencyMs)'],
      sort: 'latencyMs desc',
      limit: 50,
    },
  },
  {
    // The operations' functions write no REPORT line (a cost per request): their access lines say
    // the same, and each log stream is one execution environment, so one cold start.
    name: 'cold-starts-by-operation',
    answers: 'requests, execution environments started (cold starts) and p99 latency, by operation',
    logGroups: ['operations'],
    query: {
      filterStatements: ['ispresent(latencyMs)'],
      statsStatements: ['count(*) as requests, count_distinct(@logStream) as coldStarts, pct(latencyMs, 99) as latencyP99Ms by operation'],
      sort: 'coldStarts desc',
    },
  },
  {
    name: 'authorizer-refusals-by-reason',
    answers: 'keys the authorizer refused, by reason (`unknown`, `revoked`, `expired`, `no-plan`, …)',
    logGroups: ['authorizer'],
    query: {
      filterStatements: [`decision = "refuse"`],
      statsStatements: ['count(*) as refusals by reason'],
      sort: 'refusals desc',
    },
  },
  {
    name: 'key-changes',
    answers: 'the audit trail: every key change, newest first',
    logGroups: ['audit'],
    query: {
      fields: ['at', 'keyId', 'name', 'action', '`by`'],
      filterStatements: [`message = "${AUDIT_MESSAGE}"`],
      sort: '@timestamp desc',
    },
  },
];
