// Errors from a SQLite worker, and their mapping onto ConnectorErrors. SQLite's messages can hold
// table names and values, so they are kept for logs (as the error's message and `cause`) and
// never copied into what callers see; the worker's own refusals say what to do instead.
import { ConnectorError, isConnectorError } from '@quarry/sdk-connector';
import type { WorkerErrorCode } from './sqlite-protocol.js';

/** A worker's error code, or `WORKER_EXITED` when the session's worker stopped unasked. */
export type SqliteErrorCode = WorkerErrorCode | 'WORKER_EXITED';

/** A refusal or failure reported by a worker (or by the session when its worker died). */
export class SqliteWorkerError extends Error {
  override readonly name = 'SqliteWorkerError';
  /** Also the ConnectorError's `driverCode`. */
  readonly code: SqliteErrorCode;

  constructor(code: SqliteErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Caller-safe messages: the refusals a worker makes before SQLite runs anything, and a lost worker. */
const QUERY_MESSAGES: Readonly<Partial<Record<SqliteErrorCode, string>>> = {
  EMPTY: 'the query holds no SQL statement',
  MULTIPLE_STATEMENTS: 'a query must be a single SQL statement',
  NOT_A_QUERY: 'only a query (SELECT, WITH … SELECT or VALUES) can run on a read-only SQLite connection',
  WORKER_EXITED: 'the SQLite worker stopped during the query',
};

/** An error raised while a worker opened the database file. */
export function connectFailed(error: unknown): ConnectorError {
  if (isConnectorError(error)) return error;
  const driverCode = error instanceof SqliteWorkerError ? error.code : undefined;
  const message =
    driverCode === 'TOO_LARGE'
      ? 'the SQLite database file is larger than the connection allows (maxFileBytes)'
      : 'could not open the SQLite database file';
  return new ConnectorError('CONNECT_FAILED', message, { cause: error, driverCode });
}

/**
 * Maps an error from a running query. Everything is QUERY_FAILED: a worker that died mid-query
 * has already made its session invalid, so the pool replaces it on the next borrow.
 */
export function mapSqliteError(error: unknown): ConnectorError {
  if (isConnectorError(error)) return error;
  const code = error instanceof SqliteWorkerError ? error.code : undefined;
  const message = (code === undefined ? undefined : QUERY_MESSAGES[code]) ?? 'SQLite rejected the query';
  return new ConnectorError('QUERY_FAILED', message, { cause: error, driverCode: code });
}
