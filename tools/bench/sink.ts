/**
 * The logs as deployed (Powertools at INFO, one JSON line per request) but written to a sink:
 * a terminal or a pipe would time the console, not the code.
 */
export const withStdoutSink = async <T>(work: () => Promise<T>): Promise<{ result: T; lines: number }> => {
  const original = process.stdout.write.bind(process.stdout);
  let lines = 0;
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    lines += String(chunk).split('\n').length - 1;
    const callback = rest.find((argument) => typeof argument === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as typeof process.stdout.write;
  try {
    return { result: await work(), lines };
  } finally {
    process.stdout.write = original;
  }
};
