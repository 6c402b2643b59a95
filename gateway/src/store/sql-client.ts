// The one SQL surface the control-plane store talks to, so every repository runs unchanged on
// a real PostgreSQL (pg pool) and on embedded PGlite. Both backends agree on value types:
// int8 and count(*) arrive as JS numbers (control-plane counters stay far below 2^53),
// timestamptz as Date, jsonb parsed, text[] as string[], bytea as Buffer.

/** Which engine a {@link SqlClient} runs on. */
export type SqlClientKind = 'postgres' | 'pglite';

/** Options of one {@link SqlExecutor.query}. */
export interface QueryOptions {
  /**
   * A hot statement's name: on PostgreSQL it is then parsed and planned once per connection (a
   * named prepared statement) instead of on every call. One name must always go with the same
   * text. PGlite ignores it.
   */
  readonly name?: string;
}

/** What repositories need: statements and transactions, on a client or inside a transaction. */
export interface SqlExecutor {
  readonly kind: SqlClientKind;
  /** Runs one statement with `$1…` parameters and returns its rows. */
  query<R>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]>;
  /** Runs a parameterless script that may hold several statements (migrations). */
  exec(script: string): Promise<void>;
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws.
   * Inside `fn` use only `tx`: on PGlite (one connection) a query on the outer client waits
   * for the transaction to end and so would never run. Nested calls use savepoints.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
}

/** A backend-neutral SQL client that owns its connections. */
export interface SqlClient extends SqlExecutor {
  /** Releases the pool or closes the embedded database; the client is unusable afterwards. */
  close(): Promise<void>;
  /**
   * The pool's figures and the calls that failed for want of the store (PostgreSQL; the embedded
   * store has no pool), read by /metrics.
   */
  stats?(): SqlClientStats;
}

/** A pooled client's connections now, and its store failures so far. */
export interface SqlClientStats {
  readonly total: number;
  readonly idle: number;
  readonly waiting: number;
  readonly errors: number;
}

let savepointCounter = 0;

/**
 * Runs `fn` inside a savepoint of an already open transaction; shared by both backends so
 * nested `transaction()` calls behave the same everywhere.
 */
export async function withSavepoint<T>(tx: SqlExecutor, fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
  savepointCounter += 1;
  const name = `quarry_sp_${savepointCounter}`;
  await tx.query(`SAVEPOINT ${name}`);
  try {
    const result = await fn(tx);
    await tx.query(`RELEASE SAVEPOINT ${name}`);
    return result;
  } catch (error) {
    await tx.query(`ROLLBACK TO SAVEPOINT ${name}`);
    throw error;
  }
}
