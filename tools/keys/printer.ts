/**
 * Where the key tool's lines go. Every line goes through the key mask (tools/key-mask.ts), which
 * holds the key-shaped parts of the command line (a key pasted in the wrong place) and every key
 * the tool made; the one exception is a new key in the lines that show it, once, and those are
 * written before the command goes on, so that it knows whether they were.
 */
import { writeOutput } from '../cli';
import { keysIn, maskKeys } from '../key-mask';

export interface KeysPrinter {
  /** Prints a line through the mask. */
  readonly print: (line: string) => void;
  /**
   * Prints the lines that show the new `key`: the key as it is, the rest through the mask.
   * Resolves once they are written; rejects (OutputClosed, on standard output) when they cannot be.
   */
  readonly showNewKey: (key: string, lines: readonly string[]) => Promise<void>;
  /** Resolves once every line printed is written; rejects with the first failure. */
  readonly flushed: () => Promise<void>;
  /** What the mask holds: the key-shaped parts of the command line, and the keys made since. */
  readonly secrets: readonly string[];
}

/**
 * The printer of a command line `argv`: lines go to `printLine` when given (the tests'), else to
 * standard output, where a reader that closed it early is a failure to report, never a crash.
 */
export const keysPrinter = (argv: readonly string[], printLine?: (line: string) => void): KeysPrinter => {
  const secrets = keysIn(argv);
  const write = async (lines: readonly string[]): Promise<void> => {
    if (printLine === undefined) return writeOutput(lines.map((line) => `${line}\n`).join(''));
    for (const line of lines) printLine(line);
  };
  const pending: Array<Promise<void>> = [];
  let failure: unknown;
  const noted = (written: Promise<void>): Promise<void> =>
    written.catch((error: unknown) => {
      failure ??= error;
      throw error;
    });

  return {
    print: (line) => {
      pending.push(noted(write([maskKeys(line, secrets)])).catch(() => undefined));
    },
    showNewKey: async (key, lines) => {
      const others = [...secrets];
      secrets.push(key);
      if (failure !== undefined) throw failure;
      await noted(
        write(
          lines.map((line) =>
            line
              .split(key)
              .map((part) => maskKeys(part, others))
              .join(key),
          ),
        ),
      );
    },
    flushed: async () => {
      await Promise.all(pending);
      if (failure !== undefined) throw failure;
    },
    secrets,
  };
};
