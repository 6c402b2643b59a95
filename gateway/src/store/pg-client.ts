// SqlClient on a real PostgreSQL through a node-postgres pool (DATABASE_URL). The pool gets an
// `error` listener (an idle client killed by the server would otherwise crash the process), a
// client whose transaction failed to roll back is destroyed rather than reused, and int8 is
// parsed to a number so both backends return the same types.

import pg from 'pg';
import { asInvalidText } from '../errors/store-error.js';
import { type QueryOptions, type SqlClient, type SqlExecutor, withSavepoint } from './sql-client.js';

/** Options for {@link createPgClient}. */
export interface PgClientOptions {
  /** Most connections the pool opens (default 10). */
  readonly max?: number;
  /** Called when an idle pooled connection fails; defaults to ignoring it (the pool drops it). */
  readonly onError?: (error: Error) => void;
}

const INT8_OID = 20;

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

/** Connects a pool to `url` (a `postgres://` connection string); no I/O until the first query. */
export function createPgClient(url: string, options: PgClientOptions = {}): SqlClient {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10, types });
  pool.on('error', (error) => options.onError?.(error));

  const rows = async <R>(
    runner: pg.Pool | pg.PoolClient,
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
      throw asInvalidText(error) ?? error;
    }
  };

  const transaction = async <T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    const tx: SqlExecutor = {
      kind: 'postgres',
      query: (sql, params, options) => rows(client, sql, params, options),
      exec: async (script) => {
        await client.query(script);
      },
      transaction: (inner) => withSavepoint(tx, inner),
    };
    try {
      await client.query('BEGIN');
      const result = await fn(tx);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      try {
        await client.query('ROLLBACK');
        client.release();
      } catch (rollbackError) {
        // The session is in an unknown state: destroy it instead of returning it to the pool.
        client.release(rollbackError instanceof Error ? rollbackError : true);
      }
      throw error;
    }
  };

  let closed: Promise<void> | undefined;
  return {
    kind: 'postgres',
    query: (sql, params, options) => rows(pool, sql, params, options),
    exec: async (script) => {
      await pool.query(script);
    },
    transaction,
    close: () => {
      closed ??= pool.end();
      return closed;
    },
  };
}
