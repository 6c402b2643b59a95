// SqlClient on a real PostgreSQL through a node-postgres pool (DATABASE_URL). The pool gets an
// `error` listener (an idle client killed by the server would otherwise crash the process), a
// client whose transaction failed to roll back is destroyed rather than reused, and int8 is
// parsed to a number so both backends return the same types.
//
// Every call is bounded in time (`timeoutMs`): getting a connection (connect, or waiting for a
// free one) and each statement, client-side, so a store that stops answering fails the call
// instead of holding it. A call whose connection fails throws StoreUnavailableError, saying
// whether the statement had been sent (`inDoubt`: a write may have committed unheard); such a
// connection is destroyed, never reused. A statement's own error (a constraint, a syntax error)
// is thrown as it is and its connection kept.
import pg from 'pg';
import {
  asInvalidText,
  isConnectionFailure,
  isStoreUnavailable,
  StoreUnavailableError,
} from '../errors/store-error.js';
import { type QueryOptions, type SqlClient, type SqlExecutor, withSavepoint } from './sql-client.js';

/** Options for {@link createPgClient}. */
export interface PgClientOptions {
  /** Most connections the pool opens (default 10). */
  readonly max?: number;
  /** Called when an idle pooled connection fails; defaults to ignoring it (the pool drops it). */
  readonly onError?: (error: Error) => void;
  /** Bound on getting a connection and on each statement, in ms (default none). */
  readonly timeoutMs?: number;
}

const INT8_OID = 20;

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

/** Its query fails with the same error, and the client is then released with it (destroyed). */
function ignoreCheckedOutError(): void {}

/** Connects a pool to `url` (a `postgres://` connection string); no I/O until the first query. */
export function createPgClient(url: string, options: PgClientOptions = {}): SqlClient {
  const timeoutMs = options.timeoutMs;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    types,
    keepAlive: true,
    ...(timeoutMs === undefined ? {} : { connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs }),
  });
  pool.on('error', (error) => options.onError?.(error));
  /** Calls failed because the store could not be reached or stopped answering (for /metrics). */
  let errors = 0;

  /**
   * A connection from the pool; failing here, nothing was sent. A checked-out client whose socket
   * fails emits `error` even while a query is running (the query fails too): without a listener
   * of ours that would crash the process, since the pool listens only while a client is idle.
   */
  const guarded = new WeakSet<pg.PoolClient>();
  const connect = async (): Promise<pg.PoolClient> => {
    try {
      const client = await pool.connect();
      if (!guarded.has(client)) {
        guarded.add(client);
        client.on('error', ignoreCheckedOutError);
      }
      return client;
    } catch (error) {
      errors += 1;
      throw new StoreUnavailableError('the store cannot be reached', { inDoubt: false, cause: error });
    }
  };

  /**
   * A statement's error as callers see it: the connection's failure wrapped, text the database
   * cannot hold (NUL) as INVALID, any other statement error as is.
   */
  const failure = (error: unknown): unknown => {
    if (!isConnectionFailure(error)) return asInvalidText(error) ?? error;
    errors += 1;
    return new StoreUnavailableError('the store stopped answering', { inDoubt: true, cause: error });
  };

  const rows = async <R>(
    runner: pg.PoolClient,
    sql: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ) => {
    const values = params === undefined ? undefined : [...params];
    try {
      const result = await (options?.name === undefined
        ? runner.query(sql, values)
        : runner.query({ name: options.name, text: sql, values }));
      return result.rows as R[];
    } catch (error) {
      throw failure(error);
    }
  };

  /** One statement on a pooled connection; a connection that failed is destroyed. */
  const pooled = async <R>(sql: string, params?: readonly unknown[], options?: QueryOptions) => {
    const client = await connect();
    try {
      const result = await rows<R>(client, sql, params, options);
      client.release();
      return result;
    } catch (error) {
      client.release(isStoreUnavailable(error) ? error : undefined);
      throw error;
    }
  };

  const transaction = async <T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> => {
    const client = await connect();
    const tx: SqlExecutor = {
      kind: 'postgres',
      query: (sql, params, options) => rows(client, sql, params, options),
      exec: async (script) => {
        await rows(client, script);
      },
      transaction: (inner) => withSavepoint(tx, inner),
    };
    try {
      await rows(client, 'BEGIN');
      const result = await fn(tx);
      await rows(client, 'COMMIT');
      client.release();
      return result;
    } catch (error) {
      if (isStoreUnavailable(error)) {
        // The connection is gone or silent: a ROLLBACK would wait out the timeout again.
        client.release(error);
        throw error;
      }
      try {
        await client.query('ROLLBACK');
        client.release();
      } catch (rollbackError) {
        // The session is in an unknown state: destroy it instead of returning it to the pool.
        client.release(rollbackError instanceof Error ? rollbackError : true);
      }
      throw failure(error);
    }
  };

  let closed: Promise<void> | undefined;
  return {
    kind: 'postgres',
    query: (sql, params, options) => pooled(sql, params, options),
    exec: async (script) => {
      await pooled(script);
    },
    transaction,
    stats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, errors }),
    close: () => {
      closed ??= pool.end();
      return closed;
    },
  };
}
