/**
 * `npm run keys -- audit [KEY_ID] [--json]`: the audit trail of key changes, in the order they were made. On AWS
 * (--stage, or --table without --endpoint) it reads the keys table's audit log group with
 * CloudWatch Logs; locally, the local server's audit log table next to the keys table.
 */
import { CloudWatchLogsClient, paginateFilterLogEvents } from '@aws-sdk/client-cloudwatch-logs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { callDatabase } from '../../shared/dynamodb';
import {
  AUDIT_ACTIONS,
  AUDIT_MESSAGE,
  AUDIT_STREAM_RETRY_ATTEMPTS,
  auditLogGroupName,
  type AttributeChange,
  type AuditValue,
  type KeyAuditEntry,
} from '../../shared/key-audit';
import { UsageError } from '../cli';
import {
  localAuditLogName,
  readLocalAuditTrail,
  readTrailStall,
  type FailedAuditRecord,
  type TrailStall,
} from '../local-server/key-audit-log';
import { keyIdArgument } from './key-id';
import { printable } from './output';

export const AUDIT_USAGE = `  npm run keys -- audit [KEY_ID] [--json] [TARGET]
                                                the audit trail of key changes, oldest first
                                                (at, id, name, action, by, what changed); of one key with KEY_ID`;

export interface AuditCommandOptions {
  /** The one key whose changes to show; all keys' when absent. */
  readonly keyId?: string;
  readonly json: boolean;
  /** The keys table's name: the audit log is named after it. */
  readonly tableName: string;
  /** A DynamoDB endpoint (the local server's): its local audit log. Undefined: the audit log group on AWS. */
  readonly endpoint: string | undefined;
  readonly region?: string;
  /** A client on that endpoint. */
  readonly client: DynamoDBDocumentClient;
  readonly print: (line: string) => void;
}

/** A CloudWatch Logs filter pattern for the audit lines, of one key when given (its id is hexadecimal: nothing to escape). */
export const auditFilterPattern = (keyId?: string): string =>
  `{ $.message = "${AUDIT_MESSAGE}"${keyId === undefined ? '' : ` && $.keyId = "${keyId}"`} }`;

/** The entry in a logged line, or undefined for any other line of the log group. */
const entryOfLine = (line: string | undefined): KeyAuditEntry | undefined => {
  try {
    const fields = JSON.parse(line ?? '') as Record<string, unknown>;
    if (fields.message !== AUDIT_MESSAGE || !(AUDIT_ACTIONS as readonly unknown[]).includes(fields.action)) return undefined;
    const { at, keyId, name, action, by, changes, streamAt, eventId, sequenceNumber, truncated, omittedChanges } =
      fields as unknown as KeyAuditEntry;
    return {
      at,
      keyId,
      name,
      action,
      by,
      changes,
      streamAt,
      eventId,
      sequenceNumber,
      ...(truncated === true ? { truncated } : {}),
      ...(omittedChanges === undefined ? {} : { omittedChanges }),
    };
  } catch {
    return undefined;
  }
};

const readAuditLogGroup = async (logGroupName: string, keyId: string | undefined, region: string | undefined) => {
  const logs = new CloudWatchLogsClient(region ? { region } : {});
  const lines: Array<{ entry: KeyAuditEntry; timestamp: number }> = [];
  try {
    for await (const page of paginateFilterLogEvents({ client: logs }, { logGroupName, filterPattern: auditFilterPattern(keyId) })) {
      for (const event of page.events ?? []) {
        const entry = entryOfLine(event.message);
        if (entry) lines.push({ entry, timestamp: event.timestamp ?? 0 });
      }
    }
  } catch (error) {
    if (error instanceof Error && error.name === 'ResourceNotFoundException') {
      throw new Error(`No audit log group ${logGroupName}: is the stage deployed with the audit trail, and is this its keys table?`);
    }
    throw error;
  } finally {
    logs.destroy();
  }
  // In the order they were written, which is the stream's: a console edit's `at` is only to the second.
  return withoutRepeats(lines.sort((a, b) => a.timestamp - b.timestamp).map(({ entry }) => entry));
};

/**
 * Each stream record's line once: Lambda may hand a record twice (a batch retried after a crash or
 * a timeout, a mapping replaced), and each time it is logged again under the same eventId.
 */
const withoutRepeats = (entries: readonly KeyAuditEntry[]): KeyAuditEntry[] => {
  const seen = new Set<string>();
  return entries.filter(({ eventId }) => {
    // Lines written before they carried an eventId cannot be told apart: all are kept.
    if (typeof eventId !== 'string') return true;
    if (seen.has(eventId)) return false;
    seen.add(eventId);
    return true;
  });
};

/** The lines of a trail, and what it says it is missing: locally, a stall and the records set aside. */
interface TrailRead {
  readonly entries: KeyAuditEntry[];
  readonly failed: readonly FailedAuditRecord[];
  readonly stall: TrailStall | undefined;
}

const readLocal = async (
  client: DynamoDBDocumentClient,
  tableName: string,
  keyId: string | undefined,
  endpoint: string,
): Promise<TrailRead> => {
  try {
    const { entries, failed } = await callDatabase(() => readLocalAuditTrail(client, tableName, keyId));
    return { entries, failed, stall: await callDatabase(() => readTrailStall(client, tableName)) };
  } catch (error) {
    if (error instanceof Error && error.name === 'ResourceNotFoundException') {
      throw new Error(
        `No audit log at ${endpoint} (table ${localAuditLogName(tableName)}): npm start records key changes there; ` +
          'is this the keys table it uses?',
      );
    }
    throw error;
  }
};

/** A value in a few characters: a list joined by commas, nothing as "none". */
const shortValue = (value: AuditValue | undefined): string => {
  if (value === null || value === undefined) return 'none';
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map(shortValue).join(',');
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
};

/** The phrase for an absent `scopes` attribute: the key has no scope. */
export const NO_SCOPES_PHRASE = 'none (no scopes attribute)';

/**
 * A `scopes` value as what it grants: absent is none; a value whose scopes are not exactly what it
 * grants (another type, a string that is no scope) is followed by what it grants.
 */
const scopesValue = (value: AuditValue | undefined, grants: readonly string[] | undefined): string => {
  if (value === null || value === undefined) return NO_SCOPES_PHRASE;
  const listed = Array.isArray(value) ? [...value].map(String).sort() : undefined;
  if (grants === undefined || JSON.stringify(listed) === JSON.stringify([...grants].sort())) return shortValue(value);
  return `${shortValue(value)} (grants ${grants.length === 0 ? 'none' : grants.join(',')})`;
};

const changePhrase = (name: string, { from, to, grants }: AttributeChange): string =>
  name === 'scopes'
    ? `scopes ${scopesValue(from, grants?.from)} -> ${scopesValue(to, grants?.to)}`
    : `${name} ${shortValue(from)} -> ${shortValue(to)}`;

/** What a truncated entry says it left out. */
const truncationNote = ({ truncated, omittedChanges }: KeyAuditEntry): string[] =>
  truncated ? [`line truncated${omittedChanges ? `, ${omittedChanges} more change(s) left out` : ''}`] : [];

/** What changed, in a short phrase: a new key's scopes and expiry, or each attribute's before and after. */
export const whatChanged = (entry: KeyAuditEntry): string => {
  const { action, changes } = entry;
  if (action === 'deleted') return ['item deleted', ...truncationNote(entry)].join('; ');
  if (action === 'created' || action === 'rolled') {
    const to = (name: string) => changes[name]?.to;
    return [
      `scopes ${scopesValue(to('scopes'), changes.scopes?.grants?.to)}`,
      ...(to('expiresAt') ? [`expires ${shortValue(to('expiresAt'))}`] : []),
      ...(to('replaces') ? [`replaces ${shortValue(to('replaces'))}`] : []),
      ...truncationNote(entry),
    ].join('; ');
  }
  return [...Object.entries(changes).map(([name, change]) => changePhrase(name, change)), ...truncationNote(entry)].join('; ');
};

/** A cell of the table from a field of a logged line, which may hold anything. */
const cellText = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value);

/** An entry's line of the table: each cell printable, whatever the console wrote into a name or a value. */
const describe = (entry: KeyAuditEntry): string =>
  [entry.at, entry.keyId, entry.name, entry.action, entry.by, whatChanged(entry)].map((cell) => printable(cellText(cell))).join('\t');

/** What a local trail the local server has stopped recording says: the lines printed end early. */
const stalledTrail = ({ since, reason }: TrailStall): string =>
  `The local audit trail is not being recorded: npm start has not read the keys table's stream since ${since} (${reason}); ` +
  'the changes made since are missing here until it does.';

/** How many set-aside records the line names; it counts the others. */
const NAMED_FAILED_RECORDS = 5;

/** What a local trail with records set aside says: which changes are missing, never what they were. */
const setAsideRecords = (failed: readonly FailedAuditRecord[]): string => {
  const named = failed
    .slice(0, NAMED_FAILED_RECORDS)
    .map(({ sequenceNumber, keyId, streamAt }) => `stream record ${sequenceNumber} (key ${keyId}, ${streamAt})`);
  const more = failed.length > NAMED_FAILED_RECORDS ? `, and ${failed.length - NAMED_FAILED_RECORDS} more` : '';
  return (
    `${failed.length} change(s) missing from the local audit trail: npm start could not write their lines ` +
    `in ${AUDIT_STREAM_RETRY_ATTEMPTS + 1} attempts and set them aside: ${named.join(', ')}${more}; ` +
    `its log's "audit line not written" lines say why.`
  );
};

/**
 * Runs `audit`; returns the exit status. Refused (thrown) when a key id was given and no line names
 * it, and, after the lines it has, in one line, when the local trail is not being recorded or has
 * records set aside.
 */
export const runAuditCommand = async (argument: string | undefined, options: AuditCommandOptions): Promise<number> => {
  const keyId = keyIdArgument(argument);
  const { tableName, endpoint, print } = options;
  const { entries, failed, stall }: TrailRead =
    endpoint === undefined
      ? { entries: await readAuditLogGroup(auditLogGroupName(tableName), keyId, options.region), failed: [], stall: undefined }
      : await readLocal(options.client, tableName, keyId, endpoint);
  const missing = [...(stall === undefined ? [] : [stalledTrail(stall)]), ...(failed.length === 0 ? [] : [setAsideRecords(failed)])];
  // While lines are missing, a key with none may have changed: what is missing is the news.
  if (missing.length === 0 && keyId !== undefined && entries.length === 0) {
    throw new UsageError(
      `No audit entry names the key ${keyId} (npm run keys -- list shows the ids): ` +
        'the trail starts at the deploy that added it, so a key made before and not changed since has none.',
    );
  }
  if (options.json) {
    for (const entry of entries) print(JSON.stringify(entry));
  } else {
    print(['at', 'id', 'name', 'action', 'by', 'changes'].join('\t'));
    for (const entry of entries) print(describe(entry));
  }
  if (missing.length > 0) throw new Error(missing.join(' '));
  return 0;
};
