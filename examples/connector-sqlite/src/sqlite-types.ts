// Logical column types for a dynamically typed engine. SQLite stores each value with its own
// storage class (INTEGER, REAL, TEXT, BLOB, NULL), whatever the column was declared as, so a
// result column's type comes from two sources: the declared type SQLite reports for it (see the
// type probe in sqlite-worker.js), used when every value in the result fits it, and otherwise the
// storage classes of the values themselves.
import type { ColumnInfo, ColumnType } from '@quarry/sdk-connector';
import type { WorkerValue } from './sqlite-protocol.js';

/**
 * Declared type names → logical types, first match wins. `INT` comes first as in SQLite's own
 * affinity rules (`BIGINT`, `TINYINT`, `INTEGER`); the date and time names come before `TEXT` so
 * a `DATETIME` or `DATE` column is not read as plain text.
 */
const DECLARED: readonly (readonly [RegExp, ColumnType])[] = [
  [/INT/, 'integer'],
  [/BOOL/, 'boolean'],
  [/DATETIME|TIMESTAMP/, 'timestamp'],
  [/DATE/, 'date'],
  [/TIME/, 'time'],
  [/JSON/, 'json'],
  [/CHAR|CLOB|TEXT/, 'string'],
  [/BLOB/, 'bytes'],
  [/REAL|FLOA|DOUB/, 'number'],
  [/DEC|NUM/, 'decimal'],
];

/** The logical type a declared type name stands for, or undefined for none or an unknown name. */
export function declaredColumnType(declared: string): ColumnType | undefined {
  const name = declared.toUpperCase();
  for (const [pattern, type] of DECLARED) if (pattern.test(name)) return type;
  return undefined;
}

const DATE_TEXT = /^\d{4}-\d{2}-\d{2}$/;
// What the SDK reads as a timestamp: date, `T` or space, time, optional fraction and zone.
const TIMESTAMP_TEXT =
  /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const TIME_TEXT = /^\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/;

/** Whether a non-null value can be reported as `type` without the SDK's conversion changing it. */
function fits(type: ColumnType, value: WorkerValue): boolean {
  switch (type) {
    case 'integer':
      return typeof value === 'bigint';
    case 'number':
    case 'decimal':
      return typeof value === 'bigint' || typeof value === 'number';
    case 'boolean':
      return value === 0n || value === 1n;
    case 'date':
      return typeof value === 'string' && DATE_TEXT.test(value);
    case 'timestamp':
      return typeof value === 'string' && TIMESTAMP_TEXT.test(value);
    case 'time':
      return typeof value === 'string' && TIME_TEXT.test(value);
    case 'string':
    case 'json':
      return typeof value === 'string';
    case 'bytes':
      return value instanceof Uint8Array;
    default:
      return false;
  }
}

function fitsOrNull(type: ColumnType, value: WorkerValue | undefined): boolean {
  return value === null || value === undefined || fits(type, value);
}

// Storage classes seen in a column, as bits.
const INTEGER = 1;
const REAL = 2;
const TEXT = 4;
const BLOB = 8;

/** The type the storage classes of a column's values show, or undefined when all are NULL. */
function storedType(rows: readonly (readonly WorkerValue[])[], column: number): ColumnType | undefined {
  let seen = 0;
  for (const row of rows) {
    const value = row[column];
    if (typeof value === 'bigint') seen |= INTEGER;
    else if (typeof value === 'number') seen |= REAL;
    else if (typeof value === 'string') seen |= TEXT;
    else if (value instanceof Uint8Array) seen |= BLOB;
  }
  switch (seen) {
    case 0:
      return undefined;
    case INTEGER:
      return 'integer';
    case REAL:
    case INTEGER | REAL:
      return 'number';
    case TEXT:
      return 'string';
    case BLOB:
      return 'bytes';
    default:
      return 'unknown';
  }
}

/**
 * The columns of a result: a column whose declared type maps to a logical type keeps it when
 * every value fits (a `BOOLEAN` column of 0/1, a `DATE` column of `YYYY-MM-DD` text); otherwise
 * its values decide (INTEGER → integer, REAL or mixed numbers → number, TEXT → string, BLOB →
 * bytes, anything mixed → unknown). A column with neither (an expression over no rows, or only
 * NULLs) is `unknown`.
 */
export function sqliteColumns(
  names: readonly string[],
  declaredTypes: readonly string[],
  rows: readonly (readonly WorkerValue[])[],
): ColumnInfo[] {
  return names.map((name, column) => {
    const declared = declaredTypes[column] ?? '';
    const nativeType = declared === '' ? {} : { nativeType: declared };
    const candidate = declaredColumnType(declared);
    if (candidate !== undefined && rows.every((row) => fitsOrNull(candidate, row[column]))) {
      return { name, type: candidate, ...nativeType };
    }
    return { name, type: storedType(rows, column) ?? 'unknown', ...nativeType };
  });
}
