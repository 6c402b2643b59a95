// The DuckDB side of the fake Trino coordinator (test code): runs one statement as Trino would
// for the session the request headers describe (time zone, catalog and schema), with
// EXECUTE IMMEDIATE … USING bound through DuckDB (see fake-trino-sql.ts), and turns DuckDB's
// errors into Trino's error names, codes and types (io.trino.spi.StandardErrorCode).
import type { IncomingHttpHeaders } from 'node:http';
import type { DuckDBConnection, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import {
  castPlaceholders,
  FakeTrinoError,
  lexTrino,
  parseExecuteImmediate,
  refuseStackedStatements,
  translateLiteral,
  translateQuery,
} from './fake-trino-sql.js';

const ERROR_CODES: Readonly<Record<string, readonly [number, string]>> = {
  GENERIC_USER_ERROR: [0, 'USER_ERROR'],
  SYNTAX_ERROR: [1, 'USER_ERROR'],
  USER_CANCELED: [3, 'USER_ERROR'],
  FUNCTION_NOT_FOUND: [6, 'USER_ERROR'],
  INVALID_FUNCTION_ARGUMENT: [7, 'USER_ERROR'],
  DIVISION_BY_ZERO: [8, 'USER_ERROR'],
  INVALID_CAST_ARGUMENT: [9, 'USER_ERROR'],
  NUMERIC_VALUE_OUT_OF_RANGE: [19, 'USER_ERROR'],
  CATALOG_NOT_FOUND: [44, 'USER_ERROR'],
  SCHEMA_NOT_FOUND: [45, 'USER_ERROR'],
  TABLE_NOT_FOUND: [46, 'USER_ERROR'],
  COLUMN_NOT_FOUND: [47, 'USER_ERROR'],
  TYPE_MISMATCH: [58, 'USER_ERROR'],
  INVALID_PARAMETER_USAGE: [80, 'USER_ERROR'],
  GENERIC_INTERNAL_ERROR: [65536, 'INTERNAL_ERROR'],
  EXCEEDED_TIME_LIMIT: [131075, 'INSUFFICIENT_RESOURCES'],
};

/** A DuckDB error (its message starts with its class) as the Trino error it stands for. */
export function trinoErrorOf(error: unknown, timedOut: boolean): FakeTrinoError {
  if (error instanceof FakeTrinoError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (message.startsWith('INTERRUPT')) {
    return timedOut
      ? new FakeTrinoError('EXCEEDED_TIME_LIMIT', 'Query exceeded the maximum execution time limit')
      : new FakeTrinoError('USER_CANCELED', 'Query was canceled');
  }
  const rules: readonly [RegExp, string][] = [
    [/^Parser Error/, 'SYNTAX_ERROR'],
    [/^Catalog Error: Table/, 'TABLE_NOT_FOUND'],
    [/^Catalog Error: .*Function/, 'FUNCTION_NOT_FOUND'],
    [/^Binder Error: .*column/i, 'COLUMN_NOT_FOUND'],
    [/^Binder Error/, 'TYPE_MISMATCH'],
    [/^Conversion Error/, 'INVALID_CAST_ARGUMENT'],
    [/^Out of Range Error/, 'NUMERIC_VALUE_OUT_OF_RANGE'],
    [/^Invalid Input Error/, 'INVALID_FUNCTION_ARGUMENT'],
  ];
  const name = rules.find(([pattern]) => pattern.test(message))?.[1] ?? 'GENERIC_INTERNAL_ERROR';
  return new FakeTrinoError(name, message);
}

/** Trino's QueryError JSON for a failure page: {message, errorCode, errorName, errorType, …}. */
export function errorBody(error: FakeTrinoError): object {
  const [errorCode, errorType] = ERROR_CODES[error.errorName] ?? [65536, 'INTERNAL_ERROR'];
  return {
    message: error.message,
    errorCode,
    errorName: error.errorName,
    errorType,
    errorLocation: { lineNumber: 1, columnNumber: 1 },
    failureInfo: { type: 'io.trino.spi.TrinoException', message: error.message, suppressed: [], stack: [] },
  };
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The `key=value,…` pairs of an X-Trino-Session header. */
export function sessionProperties(header: string | string[] | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) out.set(part.slice(0, eq).trim(), decodeURIComponent(part.slice(eq + 1).trim()));
  }
  return out;
}

/** Milliseconds of an airlift Duration (`1500ms`, `2s`, `1.5m`). */
export function durationMs(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ns|us|ms|s|m|h|d)\s*$/.exec(text);
  if (m === null) return undefined;
  const unit = { ns: 1e-6, us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2]!]!;
  return Number(m[1]) * unit;
}

/** One request header's value (the first, when repeated). */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** A statement's result: column names, DuckDB types and rows. */
export interface StatementResult {
  readonly names: readonly string[];
  readonly types: DuckDBType[];
  readonly rows: DuckDBValue[][];
}

/**
 * Runs one statement on `connection` for the session `headers` describe; `checkStopped` throws
 * when the query was cancelled or timed out between two DuckDB calls.
 */
export async function runStatement(
  connection: DuckDBConnection,
  text: string,
  headers: IncomingHttpHeaders,
  defaultTimeZone: string,
  checkStopped: () => void,
): Promise<StatementResult> {
  const zone = header(headers, 'x-trino-time-zone') ?? defaultTimeZone;
  await connection.run(`SET TimeZone = '${zone.replaceAll("'", "''")}'`);
  const catalog = header(headers, 'x-trino-catalog');
  const schema = header(headers, 'x-trino-schema');
  if (catalog !== undefined) {
    try {
      await connection.run(
        `USE ${quoteIdent(catalog)}${schema === undefined ? '' : `.${quoteIdent(schema)}`}`,
      );
    } catch {
      throw new FakeTrinoError(schema === undefined ? 'CATALOG_NOT_FOUND' : 'SCHEMA_NOT_FOUND', 'not found');
    }
  }
  checkStopped();
  const tokens = lexTrino(text);
  refuseStackedStatements(tokens);
  const immediate = parseExecuteImmediate(tokens);
  let values: DuckDBValue[] = [];
  let types: DuckDBType[] = [];
  let sql: string;
  if (immediate === undefined) {
    sql = translateQuery(tokens);
  } else {
    if (immediate.using.length > 0) {
      const literals = await connection.prepare(`SELECT ${immediate.using.map(translateLiteral).join(', ')}`);
      const evaluated = await literals.runAndReadAll();
      types = evaluated.columnTypes();
      values = evaluated.getRows()[0] ?? [];
    }
    const inner = lexTrino(immediate.inner);
    refuseStackedStatements(inner);
    sql = translateQuery(
      castPlaceholders(
        inner,
        types.map((type) => type.toString()),
      ),
    );
  }
  checkStopped();
  const prepared = await connection.prepare(sql);
  if (prepared.parameterCount !== values.length) {
    throw new FakeTrinoError('INVALID_PARAMETER_USAGE', 'Incorrect number of parameters');
  }
  if (values.length > 0) prepared.bind(values, types);
  checkStopped();
  const reader = await prepared.runAndReadAll();
  return { names: reader.columnNames(), types: reader.columnTypes(), rows: reader.getRows() };
}
