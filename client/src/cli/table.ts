// Aligned plain-text tables for a terminal: a header, a rule, one line per row; numbers right
// aligned, long cells cut with an ellipsis, nothing but spaces between columns.

export interface TableColumn {
  readonly header: string;
  /** Right-align (numbers). */
  readonly right?: boolean;
}

/** Widest a cell may be before it is cut. */
const MAX_CELL = 60;

/** How one value shows in a cell: null/undefined empty, objects as JSON, cut past `maxCell`. */
export function cellText(value: unknown, maxCell = MAX_CELL): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  const oneLine = text.replace(/\s*\n\s*/g, ' ');
  return oneLine.length > maxCell ? `${oneLine.slice(0, maxCell - 1)}…` : oneLine;
}

/** The table as lines joined by newlines (ending with one); `maxCell: Infinity` cuts nothing. */
export function formatTable(
  columns: readonly TableColumn[],
  rows: readonly (readonly unknown[])[],
  options: { readonly maxCell?: number } = {},
): string {
  const cells = rows.map((row) => columns.map((_, i) => cellText(row[i], options.maxCell)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i]?.length ?? 0)));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => (columns[i]?.right ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[line(columns.map((c) => c.header)), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n')}\n`;
}

/** Whether a gateway column type holds numbers. */
export function isNumericType(type: string): boolean {
  return /int|num|dec|float|double|real/i.test(type);
}
