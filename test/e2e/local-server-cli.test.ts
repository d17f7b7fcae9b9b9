/**
 * `npm start` as a user runs it: it starts DynamoDB Local itself, prints a key and a curl line
 * that work, keeps data with --persist, refuses bad settings clearly, and leaves nothing running
 * after Ctrl-C.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PetStore } from '../../client/src/index';
import { generateApiKey } from '../../shared/api-keys';
import { freePort, isListening } from '../../tools/dynamodb-local';
import { apiKeysRepository } from '../../shared/api-keys-repository';
import { expectOneLineFailure, npmRun, runCommand } from '../support/command';
import { CHANGE_HOLDS_WITHIN_MS } from '../support/local-api';
import { startFaultProxy } from '../support/fault-proxy';
import { createTestTables } from '../support/tables';
import packageJson from '../../package.json';
import { localUsageKey } from '../../tools/local-server/usage-plans';
import { DEFAULT_PLAN, plans } from '../../shared/plans';
import { DYNAMODB_TIMEOUT_VARIABLE, MAX_DYNAMODB_TIMEOUT_MS } from '../../shared/config';
import { runKeysCommand } from '../../tools/keys/cli';
import { ALL_SCOPES_FIELD, literally } from '../support/vocabulary';

/** Who this file's changes to keys are made by. */
const ACTOR = 'local:test';

interface Started {
  readonly child: ChildProcess;
  readonly output: () => string;
  readonly exit: Promise<number | null>;
}

const children: ChildProcess[] = [];
const groupAlive = (pid: number) => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};
afterAll(() => {
  for (const child of children) if (child.pid && groupAlive(child.pid)) process.kill(-child.pid, 'SIGKILL');
});

/** The ids of the Java processes running DynamoDB Local's jar on this port (read from /proc, as `ps` does). */
const javaListeningOn = (port: number): number[] =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const words = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        const [command = ''] = words;
        const runsTheJar = /(^|\/)java$/.test(command) && words.some((word) => word.endsWith('DynamoDBLocal.jar'));
        return runsTheJar && words[words.indexOf('-port') + 1] === String(port);
      } catch {
        return false; // ended meanwhile
      }
    })
    .map(Number);

/** The parent of a process (the fourth field of /proc/PID/stat, after the command in parentheses). */
const parentOf = (pid: number): number => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);

/** The most resident memory the process has had so far (VmHWM in /proc), in bytes. */
const peakMemoryBytes = (pid: number): number => {
  const kilobytes = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kilobytes === undefined) throw new Error(`no VmHWM for process ${pid}`);
  return Number(kilobytes) * 1024;
};

/** Runs a command in its own process group, as a terminal runs a foreground job. */
const run = (command: string, args: string[], env: Record<string, string>): Started => {
  const { POWERTOOLS_LOG_LEVEL: _, ...inherited } = process.env;
  const child = spawn(command, args, { env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exit };
};

/** The start script without npm: `node <flags> tools/local-server/main.ts`. */
const [, ...startNodeArgs] = (packageJson.scripts.start as string).split(' ');

/**
 * `npm start` run to its end, without npm's own start: for the settings it refuses before serving.
 * One refusal goes through npm itself, for the script's wiring.
 */
const startRefusing = (env: Record<string, string>) => runCommand(process.execPath, startNodeArgs, env);

const npmStart = (env: Record<string, string>, args: string[] = []): Started =>
  run('npm', ['start', '--silent', ...(args.length ? ['--', ...args] : [])], env);

const waitFor = async (started: Started, text: string, timeoutMs = 120_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!started.output().includes(text)) {
    if (Date.now() > deadline || started.child.exitCode !== null) throw new Error(`no "${text}" in:\n${started.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/** The URL and key from the printed curl line, exactly as a user would copy them. */
const curlLine = (output: string) => {
  const match = /curl -i -H "Authorization: Bearer ([^"]+)" (http:\/\/\S+\/v1\/pets)\n/.exec(output);
  if (!match?.[1] || !match[2]) throw new Error(`no curl line in:\n${output}`);
  return { key: match[1], url: match[2] };
};

/** The client library on the API of a banner's curl line (its URL is that of /v1/pets). */
const petStoreAt = (petsUrl: string, key: string) => new PetStore({ baseUrl: petsUrl.replace(/\/pets$/, ''), apiKey: key });

/** The keys command from the banner's `Keys:` line. */
const keysLine = (output: string) => {
  const command = /^Keys: +(.+?) {3}\(/m.exec(output)?.[1];
  if (!command) throw new Error(`no Keys line in:\n${output}`);
  return command;
};

/** The key id the banner printed beside the key. */
const keyIdLine = (output: string) => {
  const keyId = /^API key: .*\(id ([0-9a-f]{12});/m.exec(output)?.[1];
  if (!keyId) throw new Error(`no key id in:\n${output}`);
  return keyId;
};

/** What `npm run keys -- audit <id>` prints on its standard output, run in this process (nothing when it fails). */
const auditLinesOf = async (id: string, env: Record<string, string>): Promise<string> => {
  const lines: string[] = [];
  return runKeysCommand(['audit', id], { env, print: (line) => lines.push(line) }).then(
    () => lines.join('\n'),
    () => '',
  );
};

/** Runs a printed `VAR=value … npm run keys -- …` line as a shell would (the values hold no spaces). */
const runKeysLine = (line: string) => {
  const words = line.split(' ');
  const assignments = words.filter((word, index) => index < words.indexOf('npm') && word.includes('='));
  const env = Object.fromEntries(assignments.map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]));
  const [, run, script, ...args] = words.slice(assignments.length);
  return runCommand('npm', [run ?? '', '--silent', script ?? '', ...args], env);
};

/**
 * Ctrl-C: the terminal sends SIGINT to the whole foreground process group. Resolves with whether
 * every process of the group (npm, the server, DynamoDB Local's Java) has ended within 15 s.
 */
const stop = async (started: Started): Promise<boolean> => {
  const pid = started.child.pid;
  if (pid === undefined) return false;
  process.kill(-pid, 'SIGINT');
  return groupEnds(pid);
};

/** Whether every process of the group has ended within 15 s. */
const groupEnds = async (pid: number): Promise<boolean> => {
  const deadline = Date.now() + 15_000;
  while (groupAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return !groupAlive(pid);
};

describe('npm start', { timeout: 180_000 }, () => {
  it('serves the API on DynamoDB Local, prints a working curl line, and stops everything on Ctrl-C', async () => {
    const dynamoPort = await freePort();
    const started = npmStart({ PORT: '0', DYNAMODB_LOCAL_PORT: String(dynamoPort) });
    await waitFor(started, 'Press Ctrl-C to stop.');
    expect(started.output()).toContain('in memory');
    expect(started.output()).not.toContain('NodeVersionSupportWarning');
    const { key, url } = curlLine(started.output());
    expect(key).toMatch(/^petstore_[A-Za-z0-9_-]{43}$/);
    // DynamoDB Local listens on every interface: the banner must not suggest loopback only.
    expect(started.output()).toContain(`on port ${dynamoPort} of every network interface:\n               reachable from the network`);
    expect(started.output()).not.toContain(`127.0.0.1:${dynamoPort}`);

    const petStore = petStoreAt(url, key);
    const created = await petStore.pets.create({ name: 'Rex', categoryId: 1 });
    expect((await petStore.pets.list()).pets).toEqual([created]);
    expect(await isListening(dynamoPort)).toBe(true);

    // The banner's keys command, pasted as printed, reaches this DynamoDB Local.
    const keysCommand = keysLine(started.output());
    expect(keysCommand).toBe(`DYNAMODB_LOCAL_PORT=${dynamoPort} npm run keys -- list`);
    const keysListed = await runKeysLine(keysCommand);
    expect(keysListed.status).toBe(0);
    expect(keysListed.stdout).toMatch(
      // id, name, scopes, created, expires (none), last used (the curl above, perhaps), state, plan
      new RegExp(`^${keyIdLine(started.output())}\\tlocal\\t${literally(ALL_SCOPES_FIELD)}\\t\\S+\\t-\\t\\S+\\tactive\\tdefault$`, 'm'),
    );

    // The banner names the key's plan and its limits, the deployed ones, and how to get more: its command works as printed.
    const { rateLimit, burstLimit, quota } = plans.default ?? { rateLimit: 0, burstLimit: 0 };
    expect(started.output()).toContain(
      `Plan:          default: ${rateLimit} requests a second, bursts of ${burstLimit}, ` +
        `${quota?.limit.toLocaleString('en-US')} a ${quota?.period.toLowerCase()}, as deployed (shared/plans.ts)\n` +
        `               past them the API answers 429; more: DYNAMODB_LOCAL_PORT=${dynamoPort} npm run keys -- set-plan ${keyIdLine(started.output())} partner\n`,
    );
    const moved = await runKeysLine(/more: (.+)$/m.exec(started.output())?.[1] ?? '');
    expect(moved.status).toBe(0);
    expect((await runKeysLine(keysCommand)).stdout).toMatch(new RegExp(`^${keyIdLine(started.output())}\\t.*\\tactive\\tpartner$`, 'm'));

    expect(await stop(started)).toBe(true);
    expect(await isListening(dynamoPort)).toBe(false);
    expect(await isListening(Number(new URL(url).port))).toBe(false);
  });

  it('stops DynamoDB Local itself when only it is told to stop (SIGTERM to the server alone)', async () => {
    const dynamoPort = await freePort();
    // The start script without npm: `node <flags> tools/local-server/main.ts`.
    const [, ...nodeArgs] = (packageJson.scripts.start as string).split(' ');
    const started = run(process.execPath, nodeArgs, {
      PORT: '0',
      DYNAMODB_LOCAL_PORT: String(dynamoPort),
    });
    await waitFor(started, 'Press Ctrl-C to stop.');
    expect(await isListening(dynamoPort)).toBe(true);
    started.child.kill('SIGTERM');
    expect(await started.exit).toBe(0);
    expect(groupAlive(started.child.pid ?? 0)).toBe(false);
    expect(await isListening(dynamoPort)).toBe(false);
  });

  it('takes DynamoDB Local down with the server when the server is killed outright (SIGKILL: no handler runs)', async () => {
    const [, ...nodeArgs] = (packageJson.scripts.start as string).split(' ');
    const started = run(process.execPath, nodeArgs, { PORT: '0', DYNAMODB_LOCAL_PORT: '0' });
    await waitFor(started, 'Press Ctrl-C to stop.');
    const dynamoPort = Number(/DynamoDB Local \(in memory\) on port (\d+) /.exec(started.output())?.[1]);
    expect(await isListening(dynamoPort)).toBe(true);
    expect(javaListeningOn(dynamoPort)).toHaveLength(1);

    started.child.kill('SIGKILL');
    expect(await started.exit).toBeNull();

    // Nothing of this run is left: no Java process, and so no open port with the keys table on it.
    const deadline = Date.now() + 20_000;
    // A process that is exiting has left its command line before its sockets: wait for both.
    while ((javaListeningOn(dynamoPort).length > 0 || (await isListening(dynamoPort))) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(javaListeningOn(dynamoPort)).toEqual([]);
    expect(await isListening(dynamoPort)).toBe(false);
  });

  it('says in one line that DynamoDB Local died, and exits non-zero, rather than answer 503 for ever', async () => {
    const [, ...nodeArgs] = (packageJson.scripts.start as string).split(' ');
    const started = run(process.execPath, nodeArgs, { PORT: '0', DYNAMODB_LOCAL_PORT: '0' });
    let stderr = '';
    started.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor(started, 'Press Ctrl-C to stop.');
    const dynamoPort = Number(/DynamoDB Local \(in memory\) on port (\d+) /.exec(started.output())?.[1]);
    const { url } = curlLine(started.output());
    // The Java this server started, and no other: its parent is the watchdog, whose parent is the server.
    const [java, ...others] = javaListeningOn(dynamoPort);
    expect(others).toEqual([]);
    expect(parentOf(parentOf(java ?? 0))).toBe(started.child.pid);

    const killedAt = Date.now();
    process.kill(java ?? 0, 'SIGKILL');
    const code = await Promise.race([started.exit, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 15_000))]);
    expect(code).toBe(1);
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    // One plain line, once: what stopped, what follows, what to do; no stack trace.
    const said = stderr.split('\n').filter((line) => line.includes('DynamoDB Local'));
    expect(said).toEqual([
      'npm start: DynamoDB Local stopped (exit code 1); the API cannot answer without it, so it stops too (its in-memory data is gone): start again.',
    ]);
    expect(stderr).not.toMatch(/^\s+at /m);
    expect(await groupEnds(started.child.pid ?? 0)).toBe(true);
    expect(await isListening(Number(new URL(url).port))).toBe(false);
  });

  it('keeps its memory under forty keyless 10 MB POSTs at once: bodies are never read before the key is checked', async () => {
    const suffix = Date.now().toString(36);
    const [, ...nodeArgs] = (packageJson.scripts.start as string).split(' ');
    const started = run(process.execPath, nodeArgs, {
      DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
      PETS_TABLE_NAME: `flood-pets-${suffix}`,
      API_KEYS_TABLE_NAME: `flood-keys-${suffix}`,
      IDEMPOTENCY_TABLE_NAME: `flood-idempotency-${suffix}`,
      PORT: '0',
    });
    await waitFor(started, 'Press Ctrl-C to stop.');
    const { key, url } = curlLine(started.output());
    // Warm: every module loaded and the key's answer cached, as a server that has been serving.
    for (let index = 0; index < 5; index += 1) await (await fetch(url, { headers: { Authorization: `Bearer ${key}` } })).arrayBuffer();
    const peakBefore = peakMemoryBytes(started.child.pid ?? 0);

    const body = Buffer.alloc(10 * 1024 * 1024, 0x20);
    const { port, hostname } = new URL(url);
    const statuses = await Promise.all(
      Array.from(
        { length: 40 },
        () =>
          new Promise<string>((resolve) => {
            const socket = connect(Number(port), hostname);
            const done = (outcome: string) => (clearTimeout(timer), socket.destroy(), resolve(outcome));
            const timer = setTimeout(() => done('no answer'), 60_000);
            socket.write(`POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
            socket.write(body, () => undefined);
            socket.once('data', (chunk: Buffer) => done(chunk.toString('latin1').slice(0, 12)));
            socket.once('error', () => done('reset'));
            socket.once('close', () => done('closed'));
          }),
      ),
    );

    expect(statuses.filter((status) => status === 'HTTP/1.1 401')).not.toHaveLength(0);
    const grown = peakMemoryBytes(started.child.pid ?? 0) - peakBefore;
    // 400 MB of bodies were sent; held, they would add as much. Unread, next to nothing is added.
    expect(grown).toBeLessThan(100 * 1024 * 1024);
    expect(await stop(started)).toBe(true);
  });

  it('stops everything when npm alone is told to stop (SIGTERM to npm, as a supervisor sends)', async () => {
    const dynamoPort = await freePort();
    const started = npmStart({ PORT: '0', DYNAMODB_LOCAL_PORT: String(dynamoPort) });
    await waitFor(started, 'Press Ctrl-C to stop.');
    started.child.kill('SIGTERM');
    expect(await groupEnds(started.child.pid ?? 0)).toBe(true);
    expect(await isListening(dynamoPort)).toBe(false);
  });

  it('registers API_KEY, keeps data between runs with --persist, and keeps one local key working', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'pet-store-persist-'));
    try {
      const key = generateApiKey();
      const env = { PORT: '0', DYNAMODB_LOCAL_PORT: '0', API_KEY: key };
      const first = npmStart(env, ['--persist', folder]);
      await waitFor(first, 'Press Ctrl-C to stop.');
      expect(first.output()).toContain(`data in ${folder}`);
      const { url } = curlLine(first.output());
      expect(curlLine(first.output()).key).toBe(key);
      expect(await petStoreAt(url, key).pets.create({ name: 'Kept', categoryId: 2 })).toMatchObject({ name: 'Kept' });
      expect(await stop(first)).toBe(true);

      const second = npmStart(env, ['--persist', folder]);
      await waitFor(second, 'Press Ctrl-C to stop.');
      const again = curlLine(second.output());
      const listed = await petStoreAt(again.url, key).pets.list();
      expect(listed.pets.map((pet) => pet.name)).toEqual(['Kept']);
      // The same API_KEY is the same key, reused: nothing replaced.
      expect(keyIdLine(second.output())).toBe(keyIdLine(first.output()));
      expect(second.output()).not.toContain('replaces the local key');
      expect(await stop(second)).toBe(true);

      // A start with a new key revokes the one before: one local key works, not one per start.
      const third = npmStart({ PORT: '0', DYNAMODB_LOCAL_PORT: '0' }, ['--persist', folder]);
      await waitFor(third, 'Press Ctrl-C to stop.');
      const newest = curlLine(third.output());
      expect(newest.key).not.toBe(key);
      expect((await fetch(newest.url, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(401);
      expect((await fetch(newest.url, { headers: { Authorization: `Bearer ${newest.key}` } })).status).toBe(200);
      expect(third.output()).toContain(`replaces the local key ${keyIdLine(first.output())} of an earlier start, now revoked`);
      const keysListed = await runKeysLine(keysLine(third.output()));
      expect(
        keysListed.stdout
          .split('\n')
          .filter((line) => new RegExp(`\\tlocal\\t${literally(ALL_SCOPES_FIELD)}\\t\\S+\\t-\\t\\S+\\tactive\\tdefault$`).test(line)),
      ).toEqual([expect.stringMatching(new RegExp(`^${keyIdLine(third.output())}\t`))]);
      expect(await stop(third)).toBe(true);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 300_000);

  it('uses DYNAMODB_ENDPOINT instead of starting DynamoDB Local; npm run keys creates and revokes keys there, a revoke holding at once', async () => {
    const suffix = Date.now().toString(36);
    const env = {
      DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
      PETS_TABLE_NAME: `cli-pets-${suffix}`,
      API_KEYS_TABLE_NAME: `cli-keys-${suffix}`,
    };
    // The authorizer cache on, at its default TTL (300 s).
    const started = npmStart({ ...env, PORT: '0' });
    await waitFor(started, 'Press Ctrl-C to stop.');
    expect(started.output()).not.toContain('Starting DynamoDB Local');
    const { key, url } = curlLine(started.output());
    expect((await fetch(url, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);

    const create = run('npm', ['run', 'keys', '--silent', '--', 'create', '--name', 'partner'], env);
    expect(await create.exit).toBe(0);
    const [, keyId, newKey] =
      new RegExp(`Created key ([0-9a-f]{12}) \\(partner, scopes ${literally(ALL_SCOPES_FIELD)}\\)[^\\n]*\\n(petstore_\\S+)`).exec(
        create.output(),
      ) ?? [];
    expect((await fetch(url, { headers: { Authorization: `Bearer ${newKey}` } })).status).toBe(200);

    const list = run('npm', ['run', 'keys', '--silent', '--', 'list'], env);
    expect(await list.exit).toBe(0);
    // id, name, scopes, created, expires (none), last used (by then, perhaps), state, plan
    expect(list.output()).toMatch(
      new RegExp(`${keyId}\\tpartner\\t${literally(ALL_SCOPES_FIELD)}\\t\\S+\\t-\\t\\S+\\tactive\\t${DEFAULT_PLAN}`),
    );
    expect(list.output()).not.toContain(newKey);

    const revoke = run('npm', ['run', 'keys', '--silent', '--', 'revoke', keyId ?? ''], env);
    expect(await revoke.exit).toBe(0);
    expect(revoke.output()).toContain(
      `Revoked key ${keyId}. Callers using it are refused.\n` +
        'The change takes effect within seconds: the local server drops the cached answers of a key whose item changes.\n',
    );
    await expect
      .poll(async () => (await fetch(url, { headers: { Authorization: `Bearer ${newKey}` } })).status, {
        timeout: CHANGE_HOLDS_WITHIN_MS,
        interval: 50,
      })
      .toBe(401);
    expect((await fetch(url, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(200);
    expect(await stop(started)).toBe(true);
  });

  it("refuses to start, in one line (exit status 1), when the keys table's stream cannot be read", async () => {
    const proxy = await startFaultProxy(inject('dynamodbEndpoint'));
    try {
      // A DynamoDB that serves tables but not their streams.
      proxy.inject({ operation: 'DescribeStream', fault: 'refuse', errorType: 'UnknownOperationException' });
      const suffix = Date.now().toString(36);
      const result = await runCommand('npm', ['start', '--silent'], {
        PORT: '0',
        DYNAMODB_ENDPOINT: proxy.endpoint,
        PETS_TABLE_NAME: `unread-pets-${suffix}`,
        API_KEYS_TABLE_NAME: `unread-keys-${suffix}`,
      });
      expect(expectOneLineFailure(result, { status: 1 })).toBe(
        "npm start: the audit trail of key changes cannot read the keys table's stream (UnknownOperationException), " +
          'so key changes would go unrecorded: DYNAMODB_ENDPOINT must be a DynamoDB that serves the streams of its tables, ' +
          'such as DynamoDB Local.',
      );
      expect(result.stdout).not.toContain('Press Ctrl-C to stop.');
      expect(result.stdout + result.stderr).not.toContain(`unread-keys-${suffix}`);
    } finally {
      await proxy.close();
    }
  });

  it('says once that the audit trail stopped and once that it recovered; meanwhile npm run keys -- audit says so', async () => {
    const proxy = await startFaultProxy(inject('dynamodbEndpoint'));
    try {
      const suffix = Date.now().toString(36);
      const env = {
        DYNAMODB_ENDPOINT: proxy.endpoint,
        PETS_TABLE_NAME: `stall-pets-${suffix}`,
        API_KEYS_TABLE_NAME: `stall-keys-${suffix}`,
      };
      const started = npmStart({ ...env, PORT: '0' });
      await waitFor(started, 'Press Ctrl-C to stop.');
      const auditLines = () => started.output().match(/"message":"local key audit[^"]*"/g) ?? [];

      // The stream goes away under the running server (as when its DynamoDB is replaced).
      proxy.inject({ operation: 'DescribeStream', fault: 'refuse' });
      const refusedBefore = proxy.calls({ operation: 'DescribeStream' });
      await expect
        .poll(() => proxy.calls({ operation: 'DescribeStream' }) - refusedBefore, { timeout: 30_000, interval: 200 })
        .toBeGreaterThanOrEqual(4);
      // The authorizer cache's own reader of the stream counts among those calls too: wait for the trail's line.
      await expect.poll(auditLines, { timeout: 30_000, interval: 200 }).toEqual(['"message":"local key audit failing"']);

      const created = await npmRun('keys', ['create', '--name', 'made-meanwhile', '--json'], env);
      expect(created.status).toBe(0);
      const { id } = JSON.parse(created.stdout) as { id: string };
      const stalled = await npmRun('keys', ['audit'], env);
      expect(expectOneLineFailure(stalled, { status: 1 })).toMatch(
        /^npm run keys: The local audit trail is not being recorded: npm start has not read the keys table's stream since \S+ \(ResourceNotFoundException\); the changes made since are missing here until it does\.$/,
      );

      // Back: the changes made meanwhile are recorded, and the audit answers as before.
      proxy.recover();
      // Polled in this process (the key tool's own code), rather than by a Node started each time.
      await expect
        .poll(() => auditLinesOf(id, env), { timeout: 30_000, interval: 500 })
        .toMatch(new RegExp(`\\t${id}\\tmade-meanwhile\\tcreated\\t`));
      expect((await npmRun('keys', ['audit'], env)).status).toBe(0);
      expect(auditLines()).toEqual(['"message":"local key audit failing"', '"message":"local key audit recovered"']);
      expect(await stop(started)).toBe(true);
    } finally {
      await proxy.close();
    }
  });

  it('meters keys with the plans of PLANS_FILE: the local key, on the default plan, is refused past its burst', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'plans-'));
    try {
      const plansFile = join(folder, 'plans.json');
      writeFileSync(plansFile, JSON.stringify({ plans: { default: { rateLimit: 0.001, burstLimit: 2 } } }));
      const suffix = Date.now().toString(36);
      const started = npmStart({
        PLANS_FILE: plansFile,
        DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
        PETS_TABLE_NAME: `plans-pets-${suffix}`,
        API_KEYS_TABLE_NAME: `plans-keys-${suffix}`,
        IDEMPOTENCY_TABLE_NAME: `plans-idempotency-${suffix}`,
        PORT: '0',
      });
      await waitFor(started, 'Press Ctrl-C to stop.');
      const { key, url } = curlLine(started.output());
      expect(started.output()).toContain(
        `Plan:          default: 0.001 requests a second, bursts of 2, no quota, from PLANS_FILE ${plansFile}\n` +
          '               past them the API answers 429; more: PLANS_FILE (see "Settings" in README.md)\n',
      );
      const answers = [];
      for (let index = 0; index < 3; index += 1) answers.push(await fetch(url, { headers: { Authorization: `Bearer ${key}` } }));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 429]);
      expect(answers[0]?.headers.get('ratelimit-policy')).toBe('"default";q=1;w=1000');
      expect(await answers[2]?.json()).toMatchObject({ code: 'too_many_requests', status: 429 });
      expect(await stop(started)).toBe(true);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  // The refusals from here on start no server and share nothing: they run side by side. Each
  // setting's refusal is tried in process (test/unit/local-server/settings.test.ts); these try the
  // command's own exit, one for each way a setting is read.
  it.concurrent('refuses a PLANS_FILE that is not JSON in one line naming it, exit status 2', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'plans-'));
    try {
      const plansFile = join(folder, 'plans.json');
      writeFileSync(plansFile, '{"plans": ');
      const line = expectOneLineFailure(await startRefusing({ PLANS_FILE: plansFile }), { status: 2 });
      expect(line).toBe(`npm start: PLANS_FILE: ${plansFile} is not JSON: see npm start -- --help`);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it.concurrent('refuses an API_KEY that was revoked in the database it is pointed at', async () => {
    const tables = await createTestTables();
    const key = generateApiKey();
    const keys = apiKeysRepository({ client: tables.client, tables });
    const record = await keys.register(key, 'old', { usage: localUsageKey(), changedBy: ACTOR });
    await keys.revoke(record.keyId, ACTOR);
    const started = npmStart({
      PORT: '0',
      API_KEY: key,
      DYNAMODB_ENDPOINT: tables.endpoint,
      PETS_TABLE_NAME: tables.pets,
      API_KEYS_TABLE_NAME: tables.apiKeys,
      API_KEY_LAST_USE_TABLE_NAME: tables.apiKeyLastUse,
    });
    expect(await started.exit).toBe(1);
    expect(started.output()).toContain('API_KEY names a key that has been revoked');
  });

  it.concurrent.each([
    // Read with the other settings, before anything starts: a secret, never echoed.
    [{ API_KEY: 'too-short' }, 'API_KEY must be a URL-safe string'],
    // Read as the functions' modules load, before the other settings.
    [
      { [DYNAMODB_TIMEOUT_VARIABLE]: '5s' },
      `${DYNAMODB_TIMEOUT_VARIABLE} must be a whole number of milliseconds from 1 to ${MAX_DYNAMODB_TIMEOUT_MS}`,
    ],
  ])('refuses %j in one line saying "%s", without echoing the value, exit status 2', async (env, message) => {
    const result = await startRefusing(env);
    const line = expectOneLineFailure(result, { status: 2, secret: Object.values(env)[0] });
    expect(line.startsWith(`npm start: ${message}`), line).toBe(true);
    expect(line).toMatch(/: see npm start -- --help$/);
  });

  it.concurrent('names an unknown option in one line, points at --help, exit status 2', async () => {
    const result = await runCommand('npm', ['start', '--silent', '--', '--persits', 'data']);
    expect(expectOneLineFailure(result, { status: 2 })).toBe("npm start: unknown option '--persits': see npm start -- --help");
  });
});
