/**
 * What every part of the benchmark reports: checks (a figure, its reference from the same run,
 * the ratio, and the budget it is held to) plus free-form detail for the report.
 */
export type PartName = 'cold' | 'warm' | 'reads' | 'load' | 'scaling' | 'client';
export const PART_NAMES: readonly PartName[] = ['cold', 'warm', 'reads', 'load', 'scaling', 'client'];

/** Where a run writes, relative to the project root: the raw figures and the chart are generated files; the report is read at the top. */
export const RESULTS_PATH = 'generated/bench-results.json';
export const CHART_PATH = 'generated/bench-chart.svg';
export const REPORT_PATH = 'BENCHMARKS.md';

export interface Budget {
  /** Budget as the issue states it, e.g. "<= 350 KB" or ">= 0.8x baseline". */
  readonly text: string;
  /** The same budget as a bound on `ratio`, for the chart: the ratio must stay at or below (max) / above (min) it. */
  readonly ratioMax?: number;
  readonly ratioMin?: number;
}

export interface Check {
  readonly id: string;
  readonly label: string;
  readonly value: number;
  readonly unit: string;
  readonly reference?: { readonly label: string; readonly value: number };
  /** value / reference (or value / budget where there is no reference). */
  readonly ratio: number;
  readonly budget?: Budget;
  readonly pass?: boolean;
}

export interface PartResult {
  readonly part: PartName;
  readonly measuredAt: string;
  readonly seconds: number;
  readonly checks: Check[];
  /** Tables for the report: a title, column names, rows. */
  readonly tables: Array<{ readonly title: string; readonly columns: string[]; readonly rows: Array<Array<string | number>> }>;
  readonly notes: string[];
}

export interface Machine {
  readonly date: string;
  readonly nproc: number;
  readonly cpu: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly platform: string;
  readonly loadAverage: number[];
}

export interface Results {
  readonly machine: Machine;
  readonly parts: Partial<Record<PartName, PartResult & { machine?: Machine }>>;
}

/** A check held to `ratio <= max`. */
export const atMost = (check: Omit<Check, 'pass' | 'budget'>, text: string, ratioMax: number): Check => ({
  ...check,
  budget: { text, ratioMax },
  pass: check.ratio <= ratioMax + 1e-9,
});

/** A check held to `ratio >= min`. */
export const atLeast = (check: Omit<Check, 'pass' | 'budget'>, text: string, ratioMin: number): Check => ({
  ...check,
  budget: { text, ratioMin },
  pass: check.ratio >= ratioMin - 1e-9,
});
