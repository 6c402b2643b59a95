// One DuckDB connection as a connector session: prepared, typed execution of SELECT statements
// only, results streamed chunk by chunk and cut at the row limit, cancel via interrupt().
import type { DuckDBConnection, DuckDBPreparedStatement, DuckDBType } from '@duckdb/node-api';
import {
  type ColumnInfo,
  type CompiledQuery,
  ConnectorError,
  type ConnectorSession,
  type ExecuteOptions,
  leadingKeyword,
  type RawResult,
  type RawRowSink,
  READ_ONLY_KEYWORDS,
  type StatementDescription,
} from '@quarry/sdk-connector';
import { StatementType } from './duckdb-api.js';
import { mapDuckdbError } from './duckdb-errors.js';
import { bindParams } from './duckdb-params.js';
import { columnTypeFor } from './duckdb-types.js';
import { toRawValue } from './duckdb-values.js';

/** Options for {@link createDuckdbSession}. */
export interface DuckdbSessionOptions {
  /** Prepared statements kept per session, by SQL text (default 64). */
  readonly preparedCacheSize?: number;
  /** False once the database behind the connection has been closed. */
  readonly isDatabaseOpen?: () => boolean;
  /** Called once when the session closes. */
  readonly onClose?: () => void;
}

/**
 * Wraps an open DuckDB connection. Only SELECT statements run: DuckDB's READ_ONLY mode still
 * allows temp tables, COPY … TO, SET and ATTACH, so the statement type is the read-only guard.
 * Errors come out as ConnectorErrors (see duckdb-errors.ts).
 */
export function createDuckdbSession(
  connection: DuckDBConnection,
  options: DuckdbSessionOptions = {},
): ConnectorSession {
  const cacheSize = options.preparedCacheSize ?? 64;
  // Preparing is the bulk of a small query's cost; analytics reuse a handful of SQL texts.
  const prepared = new Map<string, DuckDBPreparedStatement>();
  let closed = false;

  async function preparedFor(sql: string): Promise<DuckDBPreparedStatement> {
    const cached = prepared.get(sql);
    if (cached !== undefined) {
      // Refresh its place so the least recently used statement is evicted first.
      prepared.delete(sql);
      prepared.set(sql, cached);
      return cached;
    }
    // prepare() refuses several statements at once, so a template cannot stack statements.
    const statement = await connection.prepare(sql);
    if (statement.statementType !== StatementType.SELECT) {
      statement.destroySync();
      throw new ConnectorError(
        'QUERY_FAILED',
        'only SELECT statements can run on a read-only DuckDB connection',
        {
          driverCode: 'READ_ONLY',
        },
      );
    }
    prepared.set(sql, statement);
    if (prepared.size > cacheSize) {
      const [oldestSql, oldest] = prepared.entries().next().value as [string, DuckDBPreparedStatement];
      prepared.delete(oldestSql);
      oldest.destroySync();
    }
    return statement;
  }

  /** Runs the query; with `sink`, each chunk's rows go to it (awaited) instead of being kept. */
  async function executeOnce(query: CompiledQuery, rowLimit: number, sink?: RawRowSink): Promise<RawResult> {
    const statement = await preparedFor(query.sql);
    bindParams(statement, query.params);
    // A streaming result computes chunks on demand, so a huge result is never materialised.
    const result = await statement.stream();
    const count = result.columnCount;
    const types: DuckDBType[] = [];
    const columns: ColumnInfo[] = [];
    for (let i = 0; i < count; i++) {
      const type = result.columnType(i);
      types.push(type);
      columns.push({
        name: result.columnName(i),
        type: columnTypeFor(type),
        nativeType: type.alias ?? type.toString(),
      });
    }
    sink?.columns(columns);
    let rows: unknown[][] = [];
    let handed = 0;
    while (handed + rows.length < rowLimit) {
      const chunk = await result.fetchChunk();
      if (chunk === null || chunk.rowCount === 0) break;
      const take = Math.min(chunk.rowCount, rowLimit - handed - rows.length);
      const start = rows.length;
      for (let r = 0; r < take; r++) rows.push(new Array<unknown>(count));
      for (let c = 0; c < count; c++) {
        const values = chunk.getColumnValues(c);
        const type = types[c] as DuckDBType;
        for (let r = 0; r < take; r++)
          (rows[start + r] as unknown[])[c] = toRawValue(values[r] ?? null, type);
      }
      if (sink !== undefined) {
        // The next chunk is computed only once the sink took this one: DuckDB waits at its pace.
        const batch = rows;
        rows = [];
        handed += batch.length;
        await sink.rows(batch);
      }
    }
    // The rest of a cut result is dropped with `result`: the next query on this connection
    // discards DuckDB's pending stream.
    return { columns, rows };
  }

  return {
    async execute(query: CompiledQuery, { rowLimit }: ExecuteOptions): Promise<RawResult> {
      if (closed) throw new ConnectorError('CLOSED', 'the DuckDB session is closed');
      try {
        return await executeOnce(query, rowLimit);
      } catch (error) {
        throw mapDuckdbError(error);
      }
    },

    async stream(query: CompiledQuery, { rowLimit }: ExecuteOptions, sink: RawRowSink): Promise<void> {
      if (closed) throw new ConnectorError('CLOSED', 'the DuckDB session is closed');
      let sinkFailed: { error: unknown } | undefined;
      const guarded: RawRowSink = {
        columns: (columns) => sink.columns(columns),
        rows: async (batch) => {
          try {
            await sink.rows(batch);
          } catch (error) {
            sinkFailed = { error };
            throw error;
          }
        },
      };
      try {
        await executeOnce(query, rowLimit, guarded);
      } catch (error) {
        if (sinkFailed !== undefined) throw sinkFailed.error;
        throw mapDuckdbError(error);
      }
    },

    /**
     * Prepares the statement (unknown tables and columns fail here; nothing runs) and reads its
     * statement type and result columns. Not cached: the statement is destroyed at once. A write
     * that DuckDB's read-only mode refuses to prepare is reported as one, not as a failure.
     */
    async describe(query: CompiledQuery): Promise<StatementDescription> {
      if (closed) throw new ConnectorError('CLOSED', 'the DuckDB session is closed');
      let statement: DuckDBPreparedStatement;
      try {
        statement = await connection.prepare(query.sql);
      } catch (error) {
        // DuckDB's FROM-first queries (`FROM t SELECT …`) read too.
        const keyword = leadingKeyword(query.sql);
        if (!READ_ONLY_KEYWORDS.has(keyword) && keyword !== 'FROM') return { columns: [], readOnly: false };
        throw mapDuckdbError(error);
      }
      try {
        const columns: ColumnInfo[] = [];
        for (let i = 0; i < statement.columnCount; i++) {
          let type: ReturnType<typeof statement.columnType>;
          try {
            type = statement.columnType(i);
          } catch {
            // A type DuckDB settles only once the params are bound (`range(:n)`): the driver
            // cannot name it yet ("Unexpected type id: 0"). The statement itself prepared.
            columns.push({ name: statement.columnName(i), type: 'unknown', nativeType: 'unresolved' });
            continue;
          }
          columns.push({
            name: statement.columnName(i),
            type: columnTypeFor(type),
            nativeType: type.alias ?? type.toString(),
          });
        }
        return { columns, readOnly: statement.statementType === StatementType.SELECT };
      } finally {
        statement.destroySync();
      }
    },

    // Synchronous on purpose: the pool's fast lane checks health with no promise or timer.
    validate(): boolean {
      // Embedded: nothing can kill the connection from outside except closing the database.
      return !closed && (options.isDatabaseOpen?.() ?? true);
    },

    async cancel(): Promise<void> {
      if (closed) return;
      try {
        connection.interrupt();
      } catch {
        // Nothing running, or the connection is already gone: there is nothing to cancel.
      }
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const statement of prepared.values()) {
        try {
          statement.destroySync();
        } catch {
          // Already destroyed with its connection.
        }
      }
      prepared.clear();
      try {
        connection.closeSync();
      } catch {
        // The driver already closed it while destroying the database.
      }
      options.onClose?.();
    },
  };
}
