/** The EMF metric lines a test's code writes to stdout, as CloudWatch reads them. */
import { vi } from 'vitest';

interface EmfEntry {
  readonly _aws?: { CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string }> }> };
  readonly [field: string]: unknown;
}

/**
 * Starts capturing stdout (restore it with vi.restoreAllMocks) and returns what the EMF lines
 * written so far count: namespace, dimension names, metric names and values.
 */
export const captureEmf = () => {
  const written: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  });
  return () =>
    written
      .map((line) => JSON.parse(line) as EmfEntry)
      .filter((entry) => entry._aws !== undefined)
      .map(({ _aws, ...values }) => {
        const [directive] = _aws?.CloudWatchMetrics ?? [];
        return {
          namespace: directive?.Namespace,
          dimensions: directive?.Dimensions,
          names: directive?.Metrics.map((metric) => metric.Name),
          values,
        };
      });
};
