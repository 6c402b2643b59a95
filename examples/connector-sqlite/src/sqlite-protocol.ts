// The messages between a session (main thread, sqlite-session.ts) and its worker
// (sqlite-worker.js). Types only: the worker is plain JavaScript and reads them through JSDoc.

/** What a worker starts with (its `workerData`). */
export interface WorkerStart {
  /** Absolute path of the database file, copied into the worker's memory once. */
  readonly path: string;
  /** A larger file is refused when the worker opens it. */
  readonly maxFileBytes: number;
}

/** A parameter value as the worker binds it (see sqlite-params.ts). */
export type WorkerParam = number | string | null;

/** One query for the worker; a worker runs one at a time. */
export interface WorkerQuery {
  readonly sql: string;
  /**
   * `sql` with every parameter replaced by NULL (see sqlite-probe-sql.ts): the worker compiles it
   * as a temporary view to prove the statement is a query and to learn its declared column types.
   */
  readonly probeSql: string;
  readonly params: readonly WorkerParam[];
  /** The worker steps the statement at most this many times. */
  readonly rowLimit: number;
}

/** A cell as the worker reads it: INTEGER → bigint, REAL → number, TEXT → string, BLOB → bytes. */
export type WorkerValue = bigint | number | string | Uint8Array | null;

/** Why the worker refused or failed a request. */
export type WorkerErrorCode =
  /** The database file could not be read or is not a database. */
  | 'OPEN_FAILED'
  /** The database file is larger than `maxFileBytes`. */
  | 'TOO_LARGE'
  /** The SQL text holds no statement. */
  | 'EMPTY'
  /** The SQL text holds more than one statement. */
  | 'MULTIPLE_STATEMENTS'
  /** The statement is not a query (SQLite refuses it as the body of a view). */
  | 'NOT_A_QUERY'
  /** SQLite rejected or failed the statement. */
  | 'SQLITE_ERROR';

/** Everything a worker posts back: one reply per start and per query. */
export type WorkerReply =
  | { readonly kind: 'ready' }
  | {
      readonly kind: 'result';
      readonly columns: readonly string[];
      /** Each column's declared type as SQLite reports it for a view column ('' when none). */
      readonly declaredTypes: readonly string[];
      readonly rows: readonly (readonly WorkerValue[])[];
    }
  | { readonly kind: 'error'; readonly code: WorkerErrorCode; readonly message: string };
