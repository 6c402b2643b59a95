// One Snowflake session as a connector session: a snowflake-sdk connection (one login, one
// service session) that runs one statement at a time. Each statement passes the read-only gate,
// is sent with its binds and with statement parameters that bound it on the service
// (STATEMENT_TIMEOUT_IN_SECONDS, MULTI_STATEMENT_COUNT=1, TIMEZONE=UTC), and its rows are streamed
// only up to the row limit, so chunks past it are never downloaded. cancel() sends the driver's
// abort request for the running statement.

import type { EventEmitter } from 'node:events';
import {
  type CompiledQuery,
  ConnectorError,
  type ConnectorSession,
  type ExecuteOptions,
  type RawResult,
} from '@quarry/sdk-connector';
import type { Connection, RowStatement, SnowflakeError } from 'snowflake-sdk';
import type { SnowflakeDriverOptions } from './snowflake-connection-options.js';
import { connectFailure, mapSnowflakeError } from './snowflake-errors.js';
import { toSnowflakeBinds } from './snowflake-params.js';
import { readOnlyViolation } from './snowflake-read-only.js';
import type { SnowflakeSdkModule } from './snowflake-sdk.js';
import { type RawConverter, type SnowflakeColumn, snowflakeColumn } from './snowflake-types.js';

/** Shared by a driver's sessions: bumped when one of them finds the service gone. */
export interface SessionHealth {
  epoch: number;
}

/** What a session needs. */
export interface SnowflakeSessionOptions {
  readonly sdk: SnowflakeSdkModule;
  readonly connection: SnowflakeDriverOptions;
  readonly health: SessionHealth;
  /** Emits `refused` (with the ConnectorError) when the driver's guarded agents refuse a request. */
  readonly refusals?: EventEmitter;
}

/** How long close() waits for the logout request before giving up on it. */
const CLOSE_WAIT_MS = 5_000;

/** Statement parameters of every query; the timeout is added per query. */
const STATEMENT_PARAMETERS = { MULTI_STATEMENT_COUNT: 1, TIMEZONE: 'UTC' } as const;

function connect(connection: Connection): Promise<void> {
  return new Promise((resolve, reject) => {
    connection.connect((error) => (error ? reject(error) : resolve()));
  });
}

function withTimeLimit(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The rows of a finished statement, up to `rowLimit`, with date/timestamp values made exact text. */
function readRows(statement: RowStatement, columns: readonly SnowflakeColumn[], rowLimit: number) {
  const converted: [number, NonNullable<RawConverter>][] = [];
  columns.forEach((column, index) => {
    if (column.convert !== undefined) converted.push([index, column.convert]);
  });
  return new Promise<unknown[][]>((resolve, reject) => {
    const rows: unknown[][] = [];
    statement
      .streamRows({ start: 0, end: rowLimit - 1 })
      .on('data', (row: unknown[]) => {
        for (const [index, convert] of converted) row[index] = convert(row[index]);
        rows.push(row);
      })
      .on('end', () => resolve(rows))
      .on('error', reject);
  });
}

/**
 * Logs in and returns the session.
 *
 * @throws ConnectorError `CONNECT_FAILED` when the service is unreachable or refuses the login.
 */
export async function createSnowflakeSession(options: SnowflakeSessionOptions): Promise<ConnectorSession> {
  const { sdk, health } = options;
  let connection: Connection;
  try {
    connection = sdk.createConnection(options.connection);
    await connect(connection);
  } catch (error) {
    throw connectFailure(error);
  }

  let closed = false;
  /** The service or the network failed under this session: never reuse it. */
  let broken = false;
  /** The health epoch this session was last known good in. */
  let goodInEpoch = health.epoch;
  let running: RowStatement | undefined;

  function markBroken(): void {
    if (broken) return;
    broken = true;
    // Sessions opened alongside this one are likely gone too: each checks once on its next borrow.
    health.epoch++;
  }

  function run(query: CompiledQuery, timeoutMs: number): Promise<RowStatement> {
    return new Promise((resolve, reject) => {
      running = connection.execute({
        sqlText: query.sql,
        binds: toSnowflakeBinds(query.params),
        parameters: {
          ...STATEMENT_PARAMETERS,
          STATEMENT_TIMEOUT_IN_SECONDS: Math.max(1, Math.ceil(timeoutMs / 1000)),
        },
        streamResult: true,
        complete: (error: SnowflakeError | undefined, statement) =>
          error ? reject(error) : resolve(statement),
      });
    });
  }

  return {
    async execute(query: CompiledQuery, { timeoutMs, rowLimit }: ExecuteOptions): Promise<RawResult> {
      if (closed) throw new ConnectorError('CLOSED', 'the Snowflake session is closed');
      if (broken) throw new ConnectorError('CONNECT_FAILED', 'the Snowflake session was lost');
      const violation = readOnlyViolation(query.sql);
      if (violation !== undefined) {
        throw new ConnectorError('QUERY_FAILED', `refused on a read-only connection: ${violation}`, {
          driverCode: 'READ_ONLY',
        });
      }
      // A request the guarded agents refuse (a result chunk on another host) fails this query at
      // once, rather than after the driver's own retries.
      let onRefused: ((error: Error) => void) | undefined;
      const refused = new Promise<never>((_, reject) => {
        onRefused = reject;
      });
      refused.catch(() => {});
      options.refusals?.on('refused', onRefused!);
      try {
        const statement = await Promise.race([run(query, timeoutMs), refused]);
        const columns = (statement.getColumns() ?? []).map(snowflakeColumn);
        const rows = await Promise.race([readRows(statement, columns, rowLimit), refused]);
        return { columns: columns.map((column) => column.info), rows };
      } catch (error) {
        const failure = mapSnowflakeError(error);
        if (failure.code === 'CONNECT_FAILED') markBroken();
        throw failure;
      } finally {
        options.refusals?.off('refused', onRefused!);
        running = undefined;
      }
    },

    // No I/O on the fast path: a session is trusted until the driver reports it down, or until a
    // sibling found the service gone, when it proves itself once with a heartbeat.
    validate(): boolean | Promise<boolean> {
      if (closed || broken || !connection.isUp()) return false;
      const epoch = health.epoch;
      if (goodInEpoch === epoch) return true;
      return connection.isValidAsync().then(
        (ok) => {
          if (ok) goodInEpoch = epoch;
          else broken = true;
          return ok;
        },
        () => {
          broken = true;
          return false;
        },
      );
    },

    async cancel(): Promise<void> {
      const statement = running;
      if (statement === undefined || closed) return;
      await new Promise<void>((resolve) => {
        try {
          // The driver's abort request: by query id once the service has sent one, else by request id.
          statement.cancel(() => resolve());
        } catch {
          resolve();
        }
      });
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      // Logs the service session out; an unreachable service must not hold close() for long.
      await withTimeLimit(
        new Promise<void>((resolve) => {
          try {
            connection.destroy(() => resolve());
          } catch {
            resolve();
          }
        }),
        CLOSE_WAIT_MS,
      );
    },
  };
}
