/**
 * How the operator tools (npm start, npm run keys, npm run load) fail: one line on stderr that
 * says what is wrong, never a stack trace, never a key (tools/key-mask.ts); exit status 2 for bad
 * usage, 1 for anything else. And how they write their output: a reader that closes it early is
 * told apart, never a crash.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { maskKeys } from './key-mask';

/** The command line or the settings are wrong: the operator can fix it by reading --help. */
export class UsageError extends Error {}

type ArgsError = Error & { readonly code?: string };

/** Node's parseArgs error as one line naming the option, and where to look. */
const describeArgsError = (error: ArgsError, help: string): string => {
  const option = /'(-[^' ]*)/.exec(error.message)?.[1];
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option '${option}': see ${help}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (error.message.includes('argument missing')) return `option '${option}' needs a value: see ${help}`;
      // A value that starts with '-' reads as another option unless it is attached with '='.
      if (error.message.includes('ambiguous'))
        return `option '${option}' needs a value; one starting with '-' is written ${option}=-…: see ${help}`;
      return `option '${option}' takes no value: see ${help}`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      // The argument itself is not repeated: it may be a key pasted in the wrong place.
      return `this command takes only options, no other arguments: see ${help}`;
    default:
      return `${error.message}: see ${help}`;
  }
};

/** parseArgs, whose errors become a UsageError of one line. `help` is the command that shows the usage. */
export const parseCommandLine = <T extends ParseArgsConfig>(config: T, help: string): ReturnType<typeof parseArgs<T>> => {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new UsageError(describeArgsError(error as ArgsError, help));
  }
};

/**
 * Writes the failure as one line, prefixed by the tool's name, through the key mask, and returns the
 * exit status. The line goes to standard error unless `printError` takes it.
 */
export const reportFailure = (tool: string, error: unknown, printError: (line: string) => void = (line) => console.error(line)): number => {
  const message = error instanceof Error ? error.message : String(error);
  printError(maskKeys(`${tool}: ${message.trim().replace(/\s*\n\s*/g, ' | ')}`));
  return error instanceof UsageError ? 2 : 1;
};

/** `error` with its message through the key mask: a tool's errors may quote what it was given or sent. */
export const maskedError = (error: unknown, secrets: readonly string[]): Error => {
  if (!(error instanceof Error)) return new Error(maskKeys(String(error), secrets));
  error.message = maskKeys(error.message, secrets);
  return error;
};

/** Standard output could not take what a tool wrote: its reader closed it (EPIPE), or it was closed already. */
export class OutputClosed extends Error {
  constructor(readonly code: string) {
    super(`standard output closed (${code})`);
  }
}

let stdoutGuarded = false;

/**
 * Writes `text` to standard output; resolves once it is written, rejects with OutputClosed when it
 * cannot be. A closed output is an answer to the write, never an uncaught 'error' event (a stack
 * trace): whoever writes decides what it means.
 */
export const writeOutput = (text: string): Promise<void> => {
  if (!stdoutGuarded) {
    process.stdout.on('error', () => undefined);
    stdoutGuarded = true;
  }
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => {
      if (error) reject(new OutputClosed((error as Error & { code?: string }).code ?? error.message));
      else resolve();
    });
  });
};
