/** The project's commands run as an operator runs them: a child process in the project folder. */
import { execFile, spawn } from 'node:child_process';
import { expect } from 'vitest';
import { projectRoot } from '../../shared/project-root';
import { reportFailure } from '../../tools/cli';

/** How long a command may run before it is killed: long enough for a busy machine's Node and npm to start. */
const COMMAND_TIMEOUT_MS = 180_000;

export interface CommandResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `command args…` with the environment's variables plus `env`, `input` on its standard input,
 * and waits for its end. A command that cannot be started at all rejects.
 */
export const runCommand = (
  command: string,
  args: readonly string[],
  env: Record<string, string> = {},
  { timeout = COMMAND_TIMEOUT_MS, input }: { timeout?: number; input?: string } = {},
): Promise<CommandResult> =>
  new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      { cwd: projectRoot, env: { ...process.env, ...env }, timeout, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = (error as { code?: unknown } | null)?.code;
        if (typeof code === 'string') return reject(error ?? new Error(`${command}: ${code}`)); // e.g. ENOENT
        resolve({ status: error ? ((code as number | undefined) ?? null) : 0, stdout, stderr });
      },
    );
    child.stdin?.end(input);
  });

/**
 * Runs `command args…` as runCommand does, its standard output a pipe whose reader closes it at
 * once, as `command | (exec 0<&-)` does: whatever the command writes there meets EPIPE. Its stdout
 * is the empty string.
 */
export const runCommandClosingOutput = (
  command: string,
  args: readonly string[],
  env: Record<string, string> = {},
  { timeout = COMMAND_TIMEOUT_MS }: { timeout?: number } = {},
): Promise<CommandResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout: '', stderr }));
  });

/** `npm run <script> -- args…`, quiet as to npm's own lines, as a user's terminal shows the tool's. */
export const npmRun = (script: string, args: readonly string[], env: Record<string, string> = {}) =>
  runCommand('npm', ['run', '--silent', script, '--', ...args], env);

/** Where a tool run in this process writes its lines. */
export interface ToolOutput {
  readonly print: (line: string) => void;
  readonly printError: (line: string) => void;
}

/**
 * A tool's command run in this process rather than in a Node of its own (whose start costs a second
 * or two of CPU): what it printed, and its exit status; a failure it throws is reported as its entry
 * point reports it (tools/cli.ts reportFailure, under the tool's name). Each command keeps at least
 * one test through `npm run`, for the wiring of its script and entry point.
 */
export const runInProcess = async (tool: string, command: (output: ToolOutput) => Promise<number>): Promise<CommandResult> => {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const output = { print: (line: string) => stdout.push(`${line}\n`), printError: (line: string) => stderr.push(`${line}\n`) };
  const status = await command(output).catch((error: unknown) => reportFailure(tool, error, output.printError));
  return { status, stdout: stdout.join(''), stderr: stderr.join('') };
};

/** What the command wrote on stderr, line by line, without npm's warnings about this machine's npm configuration. */
const stderrLines = (result: CommandResult): string[] =>
  result.stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm warn'));

/** An operator error: one line on stderr, no stack frame, nothing secret, and the exit status. */
export const expectOneLineFailure = (result: CommandResult, { status, secret }: { status: number; secret?: string }): string => {
  const lines = stderrLines(result);
  expect(lines, result.stderr).toHaveLength(1);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  if (secret !== undefined) expect(result.stdout + result.stderr).not.toContain(secret);
  expect(result.status).toBe(status);
  return lines[0] ?? '';
};
