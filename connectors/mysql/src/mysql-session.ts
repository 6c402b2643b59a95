// One MySQL/MariaDB session: a single mysql2 connection made read-only and UTC at creation, that
// runs each query as a prepared statement (so a template can never stack a second statement) in
// one round trip, re-issuing the server-side statement timeout only when it changes. Liveness is
// tracked locally from the connection's events, so `validate()` does no I/O.
import {
  type CompiledQuery,
  ConnectorError,
  type ConnectorLogger,
  type ConnectorSession,
  type DescribeOptions,
  type ExecuteOptions,
  leadingKeyword,
  type RawResult,
  READ_ONLY_KEYWORDS,
  type StatementDescription,
} from '@quarry/sdk-connector';
import mysql, { type Connection, type ConnectionOptions, type FieldPacket } from 'mysql2';
import { mapMysqlError } from './mysql-errors.js';
import { toMysqlParams } from './mysql-params.js';
import { type MysqlColumn, mysqlColumn } from './mysql-types.js';

/** Which server is on the other end; they name the statement-timeout variable differently. */
export type MysqlFlavour = 'mariadb' | 'mysql';

/** What a session needs: driver options for its own connection and for cancel connections. */
export interface MysqlSessionOptions {
  readonly connection: ConnectionOptions;
  readonly logger: ConnectorLogger;
}

/** A session plus facts tests and diagnostics may read. */
export interface MysqlSession extends ConnectorSession {
  /** The server's connection id (what `KILL QUERY` and PROCESSLIST use). */
  readonly threadId: number;
  readonly flavour: MysqlFlavour;
}

/**
 * sql_mode flags that change how strings are read: ANSI_QUOTES and NO_BACKSLASH_ESCAPES, and the
 * combination modes that bring ANSI_QUOTES back when the list is set again.
 */
const STRING_MODES: ReadonlySet<string> = new Set([
  'ANSI_QUOTES',
  'NO_BACKSLASH_ESCAPES',
  'ANSI',
  'ORACLE',
  'MSSQL',
  'DB2',
  'MAXDB',
  'POSTGRESQL',
]);

/** The server's sql_mode without {@link STRING_MODES}, as a SET statement. */
export function pinnedSqlMode(current: string): string {
  const kept = current
    .split(',')
    .map((mode) => mode.trim().toUpperCase())
    .filter((mode) => /^[A-Z_]+$/.test(mode) && !STRING_MODES.has(mode));
  return `SET SESSION sql_mode = '${kept.join(',')}'`;
}

/** How long a graceful close may take before the socket is destroyed. */
const CLOSE_GRACE_MS = 1_000;
/** Cancel opens its own short-lived connection; it must not hang on an unreachable server. */
const CANCEL_CONNECT_TIMEOUT_MS = 5_000;

/** Opens one mysql2 connection and waits for the handshake. */
export function connectMysql(options: ConnectionOptions): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const connection = mysql.createConnection(options);
    const onError = (error: unknown): void => {
      connection.removeListener('connect', onConnect);
      // A failed connection may still report socket errors; never let one go unhandled.
      connection.on('error', () => {});
      connection.destroy();
      reject(error);
    };
    const onConnect = (): void => {
      connection.removeListener('error', onError);
      resolve(connection);
    };
    connection.once('error', onError);
    connection.once('connect', onConnect);
  });
}

/** Runs one text-protocol statement (setup and control statements only, never user SQL). */
function runControl(connection: Connection, sql: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    connection.query({ sql, rowsAsArray: true }, (error, rows) => (error ? reject(error) : resolve(rows)));
  });
}

/**
 * Whether the session's server-side limit must be re-set for a query asking `requestedMs`. The
 * runtime passes the time *left* (`ceil(timeout − elapsed)`), which jitters by a few ms between
 * queries; re-issuing SET for each would double the round trips. So a limit is kept while it is
 * not below the request (the server must never stop a query early) and not far above it (the
 * runtime's own timer then fires first and cancels with KILL QUERY).
 */
export function needsNewTimeout(currentMs: number | undefined, requestedMs: number): boolean {
  if (currentMs === undefined) return true;
  return currentMs < requestedMs || currentMs > requestedMs + Math.max(250, requestedMs * 0.05);
}

/** The limit actually set: the request rounded up to 100 ms, so small jitter keeps one value. */
export function serverTimeoutFor(requestedMs: number): number {
  return Math.ceil(requestedMs / 100) * 100;
}

/**
 * The statement setting the server-side time limit. MariaDB counts `max_statement_time` in
 * (fractional) seconds and applies it to every statement; MySQL counts `max_execution_time` in
 * milliseconds and applies it to SELECT only. 0 means no limit on both.
 */
export function timeoutStatement(flavour: MysqlFlavour, timeoutMs: number): string {
  const ms = Number.isFinite(timeoutMs) && timeoutMs > 0 ? Math.ceil(timeoutMs) : 0;
  return flavour === 'mariadb'
    ? `SET SESSION max_statement_time = ${(ms / 1000).toFixed(3)}`
    : `SET SESSION max_execution_time = ${ms}`;
}

function closeQuietly(connection: Connection): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      connection.destroy();
      resolve();
    }, CLOSE_GRACE_MS);
    timer.unref();
    connection.end(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Whatever goes wrong while opening a session, the caller sees CONNECT_FAILED. */
function connectFailure(error: unknown): ConnectorError {
  const mapped = mapMysqlError(error);
  return mapped.code === 'CONNECT_FAILED'
    ? mapped
    : new ConnectorError('CONNECT_FAILED', 'could not open a session on the MySQL server', {
        cause: error,
        driverCode: mapped.driverCode,
      });
}

/**
 * Opens a session: connects, detects MariaDB vs MySQL, makes the session read-only and UTC.
 *
 * @throws ConnectorError `CONNECT_FAILED` when the server is unreachable or refuses the login.
 */
export async function createMysqlSession(options: MysqlSessionOptions): Promise<MysqlSession> {
  const { logger } = options;
  let connection: Connection;
  try {
    connection = await connectMysql(options.connection);
  } catch (error) {
    throw connectFailure(error);
  }

  /** Set when the server or the network ended the connection: the pool must drop it. */
  let broken = false;
  /** Set after a cancel or a statement that may have changed session state: never reuse. */
  let retired = false;
  let closed = false;
  /** Rejects the running execution when the connection dies under it. */
  let failPending: ((error: unknown) => void) | undefined;

  connection.on('error', (error: { code?: unknown }) => {
    broken = true;
    logger.warn({ driverCode: error.code }, 'mysql session connection error');
    failPending?.(error);
  });
  connection.on('end', () => {
    broken = true;
    failPending?.(
      Object.assign(new Error('connection ended'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true }),
    );
  });

  let flavour: MysqlFlavour;
  try {
    const rows = (await runControl(connection, 'SELECT VERSION()')) as unknown[][];
    flavour = String(rows[0]?.[0] ?? '').includes('MariaDB') ? 'mariadb' : 'mysql';
    await runControl(connection, 'SET SESSION TRANSACTION READ ONLY');
    // The SDK's read-only check lexes '…' and "…" as strings with backslash escapes: a server
    // whose sql_mode says otherwise would read a different statement than the one checked.
    const modes = (await runControl(connection, 'SELECT @@SESSION.sql_mode')) as unknown[][];
    await runControl(connection, pinnedSqlMode(String(modes[0]?.[0] ?? '')));
    await runControl(connection, "SET time_zone = '+00:00'");
  } catch (error) {
    connection.destroy();
    throw connectFailure(error);
  }
  const threadId = connection.threadId;
  /** The server-side limit currently set on the session; undefined = server default. */
  let currentTimeoutMs: number | undefined;

  function runPrepared(query: CompiledQuery, rowLimit: number): Promise<RawResult> {
    return new Promise<RawResult>((resolve, reject) => {
      let columns: readonly MysqlColumn[] | undefined;
      let converted: readonly number[] = [];
      const rows: unknown[][] = [];
      let settled = false;
      const settle = (error: unknown, result?: RawResult): void => {
        if (settled) return;
        settled = true;
        failPending = undefined;
        if (result === undefined) reject(error);
        else resolve(result);
      };
      failPending = (error) => settle(error);

      let command: ReturnType<Connection['execute']>;
      try {
        command = connection.execute(query.sql, toMysqlParams(query.params));
      } catch (error) {
        settle(error);
        return;
      }
      command.on('fields', (fields: FieldPacket[] | undefined, index?: number) => {
        if ((index ?? 0) !== 0 || fields === undefined) return;
        columns = fields.map(mysqlColumn);
        converted = columns.flatMap((c, i) => (c.convert === undefined ? [] : [i]));
      });
      command.on('result', (row: unknown, index?: number) => {
        // Past the limit rows are dropped as they arrive: memory stays bounded even though the
        // server still streams the rest (the protocol has no way to stop a result set early
        // short of KILL QUERY, which would cost a connection per capped query).
        if ((index ?? 0) !== 0 || columns === undefined || rows.length >= rowLimit || !Array.isArray(row))
          return;
        for (const i of converted) {
          const value = row[i];
          if (value !== null) row[i] = columns[i]!.convert!(value);
        }
        rows.push(row);
      });
      command.on('error', (error: unknown) => settle(error));
      command.on('end', () => {
        if (settled) return; // mysql2 emits 'end' after 'error' too
        if (columns === undefined) {
          // SET, DO, CALL without rows, …: such a statement can change the session (even lift
          // READ ONLY), so this session is never reused, and the analytic is refused.
          retired = true;
          settle(
            new ConnectorError(
              'QUERY_FAILED',
              'the statement returned no result set; analytics must be queries',
              {
                driverCode: 'NO_RESULT_SET',
              },
            ),
          );
          return;
        }
        settle(undefined, { columns: columns.map((c) => c.info), rows });
      });
    });
  }

  return {
    threadId,
    flavour,

    async execute(query: CompiledQuery, execOptions: ExecuteOptions): Promise<RawResult> {
      if (closed) throw new ConnectorError('CLOSED', 'the session is closed');
      if (broken) throw new ConnectorError('CONNECT_FAILED', 'the connection to the MySQL server was lost');
      // Retired after a cancel or a state-changing statement: another session must take the query.
      if (retired) throw new ConnectorError('CONNECT_FAILED', 'the session was retired; use another session');
      if (execOptions.signal.aborted) throw new ConnectorError('QUERY_ABORTED', 'the query was cancelled');
      try {
        if (needsNewTimeout(currentTimeoutMs, execOptions.timeoutMs)) {
          const limitMs = serverTimeoutFor(execOptions.timeoutMs);
          currentTimeoutMs = undefined; // unknown until the SET succeeds
          await runControl(connection, timeoutStatement(flavour, limitMs));
          currentTimeoutMs = limitMs;
        }
        return await runPrepared(query, execOptions.rowLimit);
      } catch (error) {
        throw mapMysqlError(error);
      }
    },

    /**
     * Prepares the statement (COM_STMT_PREPARE: unknown tables and columns fail here; nothing
     * runs) and reads its column definitions. The statement stays in mysql2's per-connection
     * cache, where the analytic's first call finds it. MySQL reports no statement type, so
     * "reads" is its first keyword, and a statement with no result columns (`SELECT … INTO`) is
     * not one.
     */
    async describe(query: CompiledQuery, describeOptions: DescribeOptions): Promise<StatementDescription> {
      if (closed) throw new ConnectorError('CLOSED', 'the session is closed');
      if (broken) throw new ConnectorError('CONNECT_FAILED', 'the connection to the MySQL server was lost');
      if (retired) throw new ConnectorError('CONNECT_FAILED', 'the session was retired; use another session');
      if (describeOptions.signal.aborted)
        throw new ConnectorError('QUERY_ABORTED', 'the check was cancelled');
      const reads = READ_ONLY_KEYWORDS.has(leadingKeyword(query.sql, { hashComments: true }));
      let fields: readonly FieldPacket[];
      try {
        fields = await new Promise<readonly FieldPacket[]>((resolve, reject) => {
          failPending = reject;
          connection.prepare(query.sql, (error, statement) => {
            failPending = undefined;
            if (error) reject(error);
            else resolve((statement as unknown as { columns?: FieldPacket[] }).columns ?? []);
          });
        });
      } catch (error) {
        // A write the server will not even prepare (a SELECT-only user's DELETE) is a write.
        if (!reads) return { columns: [], readOnly: false };
        throw mapMysqlError(error);
      }
      const columns = fields.map((field) => mysqlColumn(field).info);
      const readOnly = reads && columns.length > 0;
      return { columns, readOnly };
    },

    // Synchronous on purpose: the pool's fast lane checks health with no promise or timer.
    validate(): boolean {
      return !broken && !retired && !closed && connection.state === 'authenticated';
    },

    async cancel(): Promise<void> {
      // A KILL QUERY that arrives after the statement finished could hit this session's next
      // statement; retiring the session makes sure there is none.
      retired = true;
      if (failPending === undefined || broken || closed) return;
      try {
        const killer = await connectMysql({
          ...options.connection,
          connectTimeout: Math.min(
            options.connection.connectTimeout ?? CANCEL_CONNECT_TIMEOUT_MS,
            CANCEL_CONNECT_TIMEOUT_MS,
          ),
        });
        killer.on('error', () => {});
        try {
          // threadId is the server's integer connection id, never caller input.
          await runControl(killer, `KILL QUERY ${Math.trunc(threadId)}`);
        } finally {
          await closeQuietly(killer);
        }
      } catch (error) {
        logger.warn({ driverCode: mapMysqlError(error).driverCode }, 'mysql cancel failed');
      }
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      if (failPending !== undefined || broken) {
        failPending?.(new ConnectorError('CLOSED', 'the session was closed while a query was running'));
        connection.destroy();
        return;
      }
      await closeQuietly(connection);
    },
  };
}
