/**
 * `npm run keys -- audit` on AWS: the stage's audit log group read with CloudWatch Logs
 * FilterLogEvents, here answered by aws-sdk-client-mock (no account needed).
 */
import {
  CloudWatchLogsClient,
  FilterLogEventsCommand,
  ResourceNotFoundException,
  type FilterLogEventsCommandInput,
} from '@aws-sdk/client-cloudwatch-logs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KeyAuditEntry } from '../../shared/key-audit';
import { runKeysCommand, stageKeysTable } from '../../tools/keys/cli';
import { fixtureScope } from '../support/fixture-names';
import { READ_PETS } from '../support/vocabulary';

const logs = mockClient(CloudWatchLogsClient);
beforeEach(() => logs.reset());
afterEach(() => logs.reset());

let events = 0;
const entry = (keyId: string, action: KeyAuditEntry['action'], at: string, changes: KeyAuditEntry['changes'] = {}): KeyAuditEntry => {
  events += 1;
  return {
    at,
    keyId,
    name: 'ci',
    action,
    by: 'arn:aws:sts::123456789012:assumed-role/admin/alice',
    changes,
    streamAt: at,
    eventId: `event-${events}`,
    sequenceNumber: String(100 + events),
  };
};

/** The line the key-audit function logs for an entry (Powertools' fields, then the entry's). */
const loggedLine = (audit: KeyAuditEntry) =>
  JSON.stringify({ level: 'INFO', message: 'key change', timestamp: audit.at, service: 'pet-store', ...audit });

const created = entry('aaaaaaaaaaaa', 'created', '2030-01-01T00:00:00.000Z', { scopes: { from: null, to: ['pets:read'] } });
const narrowed = { ...entry('aaaaaaaaaaaa', 'scopes_changed', '2030-01-02T00:00:00.000Z'), by: 'unknown' };
const revoked = entry('bbbbbbbbbbbb', 'revoked', '2030-01-03T00:00:00.000Z', {
  revokedAt: { from: null, to: '2030-01-03T00:00:00.000Z' },
});

const run = async (...argv: string[]) => {
  const lines: string[] = [];
  const status = await runKeysCommand(['audit', ...argv], { env: {}, print: (line) => lines.push(line) });
  return { status, lines };
};

describe('keys audit on AWS (CloudWatch Logs mocked with aws-sdk-client-mock)', () => {
  it("reads every page of the keys table's audit log group, skips its other lines, and prints the entries in the order written", async () => {
    const pages = {
      first: {
        events: [
          { timestamp: 3, message: loggedLine(revoked) },
          { timestamp: 1, message: loggedLine(created) },
        ],
        nextToken: 'page-2',
      },
      'page-2': {
        events: [
          { timestamp: 2, message: loggedLine(narrowed) },
          { timestamp: 4, message: 'not json' },
        ],
      },
    };
    // Each request as sent (the paginator reuses its input object from page to page).
    const requests: Array<Record<string, unknown>> = [];
    logs.on(FilterLogEventsCommand).callsFake((input: FilterLogEventsCommandInput) => {
      requests.push({ logGroupName: input.logGroupName, filterPattern: input.filterPattern, nextToken: input.nextToken });
      return input.nextToken === 'page-2' ? pages['page-2'] : pages.first;
    });

    const { status, lines } = await run('--table', 'PetStore-prod-ApiKeysTable-1A2B', '--region', 'eu-west-1', '--json');

    expect(status).toBe(0);
    expect(lines.map((line) => JSON.parse(line) as KeyAuditEntry)).toEqual([created, narrowed, revoked]);
    const logGroupName = '/pet-store/key-audit/PetStore-prod-ApiKeysTable-1A2B';
    const filterPattern = '{ $.message = "key change" }';
    expect(requests).toEqual([
      { logGroupName, filterPattern, nextToken: undefined },
      { logGroupName, filterPattern, nextToken: 'page-2' },
    ]);
  });

  it("filters on the key's id when given one, and prints one line per entry", async () => {
    logs.on(FilterLogEventsCommand).resolves({ events: [{ timestamp: 1, message: loggedLine(created) }] });

    const { status, lines } = await run('aaaaaaaaaaaa', '--table', 'T', '--region', 'eu-west-1');

    expect(status).toBe(0);
    expect(logs.commandCalls(FilterLogEventsCommand)[0]?.args[0].input.filterPattern).toBe(
      '{ $.message = "key change" && $.keyId = "aaaaaaaaaaaa" }',
    );
    expect(lines).toEqual([
      'at\tid\tname\taction\tby\tchanges',
      '2030-01-01T00:00:00.000Z\taaaaaaaaaaaa\tci\tcreated\tarn:aws:sts::123456789012:assumed-role/admin/alice\tscopes pets:read',
    ]);
  });

  it("finds a stage's log group from its keys table, named by the stack's outputs", async () => {
    logs.on(FilterLogEventsCommand).resolves({ events: [] });
    const cloudFormation = {
      send: async () => ({
        Stacks: [
          {
            Outputs: [
              { OutputKey: 'ApiKeysTableName', OutputValue: 'PetStore-staging-Keys' },
              { OutputKey: 'ApiKeyLastUseTableName', OutputValue: 'PetStore-staging-LastUse' },
            ],
          },
        ],
      }),
    } as unknown as Parameters<typeof stageKeysTable>[1];

    const lines: string[] = [];
    expect(await runKeysCommand(['audit', '--stage', 'staging'], { env: {}, print: (line) => lines.push(line), cloudFormation })).toBe(0);

    expect(logs.commandCalls(FilterLogEventsCommand)[0]?.args[0].input.logGroupName).toBe('/pet-store/key-audit/PetStore-staging-Keys');
    expect(lines).toEqual(['at\tid\tname\taction\tby\tchanges']);
  });

  it('names the log group in one line when it does not exist', async () => {
    logs
      .on(FilterLogEventsCommand)
      .rejects(new ResourceNotFoundException({ message: 'The specified log group does not exist.', $metadata: {} }));

    await expect(run('--table', 'T', '--region', 'eu-west-1')).rejects.toThrow(
      'No audit log group /pet-store/key-audit/T: is the stage deployed with the audit trail, and is this its keys table?',
    );
  });

  it('prints a stream record logged twice (Lambda handed it again) once, by its eventId', async () => {
    logs.on(FilterLogEventsCommand).resolves({
      events: [
        { timestamp: 1, message: loggedLine(created) },
        { timestamp: 2, message: loggedLine(narrowed) },
        { timestamp: 3, message: loggedLine(created) },
        { timestamp: 4, message: loggedLine(narrowed) },
        { timestamp: 5, message: loggedLine(revoked) },
      ],
    });

    const { lines } = await run('--table', 'T', '--region', 'eu-west-1', '--json');

    expect(lines.map((line) => (JSON.parse(line) as KeyAuditEntry).eventId)).toEqual([created.eventId, narrowed.eventId, revoked.eventId]);
  });

  it('prints a scopes attribute removed as none, and what odd values grant', async () => {
    const removed = entry('aaaaaaaaaaaa', 'scopes_changed', '2030-01-04T00:00:00.000Z', {
      scopes: { from: ['pets:read'], to: null, grants: { from: ['pets:read'], to: [] } },
    });
    const nulled = entry('aaaaaaaaaaaa', 'scopes_changed', '2030-01-05T00:00:00.000Z', {
      scopes: { from: null, to: { NULL: true }, grants: { from: [], to: [] } },
    });
    const odd = entry('aaaaaaaaaaaa', 'scopes_changed', '2030-01-05T12:00:00.000Z', {
      scopes: { from: { NULL: true }, to: [fixtureScope('admin'), READ_PETS], grants: { from: [], to: [READ_PETS] } },
    });
    const bare = entry('cccccccccccc', 'created', '2030-01-06T00:00:00.000Z', {
      scopes: { from: null, to: null, grants: { from: [], to: [] } },
    });
    logs.on(FilterLogEventsCommand).resolves({
      events: [removed, nulled, odd, bare].map((audit, position) => ({ timestamp: position, message: loggedLine(audit) })),
    });

    const { lines } = await run('--table', 'T', '--region', 'eu-west-1');

    expect(lines.slice(1).map((line) => line.split('\t')[5])).toEqual([
      'scopes pets:read -> none (no scopes attribute)',
      'scopes none (no scopes attribute) -> {"NULL":true} (grants none)',
      `scopes {"NULL":true} (grants none) -> ${fixtureScope('admin')},${READ_PETS} (grants ${READ_PETS})`,
      'scopes none (no scopes attribute)',
    ]);
  });
});
