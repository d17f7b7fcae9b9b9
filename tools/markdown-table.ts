/**
 * A Markdown table as every generated file writes it (the documents' tables, generated/costs.md,
 * BENCHMARKS.md): a header row, its delimiter row, then a row a line; each cell on one line, its `|`
 * escaped so that it cannot end the cell early.
 */
export type MarkdownCell = string | number;

const cell = (value: MarkdownCell) => String(value).replaceAll('\n', ' ').replaceAll('|', '\\|');

/** One row of a table. */
export const markdownRow = (cells: readonly MarkdownCell[]): string => `| ${cells.map(cell).join(' | ')} |`;

/** The whole table, its lines joined by newlines (no newline after the last). */
export const markdownTable = (header: readonly string[], rows: ReadonlyArray<readonly MarkdownCell[]>): string =>
  [markdownRow(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(markdownRow)].join('\n');
