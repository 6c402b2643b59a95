// CSV answers for the reporting routes (usage, statements): RFC 4180 quoting, CRLF line ends,
// `text/csv; charset=utf-8` as an attachment, and the one rule for when a caller gets CSV
// instead of JSON (`?format=csv`, or an Accept header asking for text/csv).
import type { Context } from 'hono';
import { ApiError } from '../errors/api-error.js';

/** A CSV cell: empty for null/undefined, numbers and booleans as JS prints them. */
export type CsvValue = string | number | boolean | null | undefined;

/** Quotes a cell when it holds a comma, a quote, or a line break (quotes doubled). */
export function csvCell(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A whole CSV document: the header row, then one row per item, CRLF after every row. */
export function toCsv(header: readonly string[], rows: readonly (readonly CsvValue[])[]): string {
  return [header, ...rows].map((row) => `${row.map(csvCell).join(',')}\r\n`).join('');
}

/**
 * True when the caller asked for CSV: `?format=csv`, or (without `format`) an Accept header
 * listing text/csv. `format` other than json/csv is INVALID_REQUEST.
 */
export function wantsCsv(c: Context): boolean {
  const format = c.req.query('format');
  if (format !== undefined) {
    if (format === 'csv') return true;
    if (format === 'json') return false;
    throw new ApiError('INVALID_REQUEST', 'format must be "json" or "csv".');
  }
  const accept = c.req.header('accept') ?? '';
  return accept.split(',').some((part) => {
    const [type, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    // `text/csv;q=0` means "anything but CSV".
    return type === 'text/csv' && !params.some((p) => /^q=0(\.0*)?$/.test(p));
  });
}

/** A CSV attachment named `filename`. */
export function csvResponse(c: Context, filename: string, body: string): Response {
  return c.body(body, 200, {
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': `attachment; filename=${filename}`,
  });
}
