// One connector session on Trino. Trino has no server-side session: every query is its own HTTP
// exchange (POST /v1/statement, then GET nextUri until it is gone), so a session is a slot of
// the pool that runs one query at a time through a fresh trino-client instance. Each page is
// checked for `error` (a failure can follow data pages), rows stop at the row limit (the rest is
// cancelled, never fetched), and a timeout cancels the query with DELETE /v1/query/{id} while the
// per-query `query_max_execution_time` session property stops it on the server regardless.
import {
  type ColumnInfo,
  type CompiledQuery,
  ConnectorError,
  type ConnectorLogger,
  type ConnectorSession,
  type ExecuteOptions,
  type RawResult,
} from '@quarry/sdk-connector';
import type { Columns, ConnectionOptions, QueryResult } from 'trino-client';
import { createTrinoClient, type TrinoAgents } from './trino-client.js';
import { mapTrinoError, trinoQueryError } from './trino-errors.js';
import { trinoStatement } from './trino-statement.js';
import { columnTypeOf, parseTrinoType } from './trino-types.js';
import { type TrinoValueConverter, trinoValueConverter } from './trino-values.js';

/** What every session of a connector shares. */
export interface TrinoSessionContext {
  readonly connection: ConnectionOptions;
  readonly agents: TrinoAgents;
  /** The configured server's origin: every `nextUri` must stay on it. */
  readonly origin: string;
  readonly logger: ConnectorLogger;
}

/** Slack on axios's per-request timeout past the query's own limit (the runtime's timer acts first). */
const REQUEST_GRACE_MS = 10_000;
/** How long a cancel (DELETE /v1/query/{id}) may take. */
const KILL_TIMEOUT_MS = 5_000;

/** The query a session is running. */
interface Running {
  /** Trino's query id, from the POST's answer. */
  id: string | undefined;
  /** Set by cancel, by the row cap, and by close: follow no more pages. */
  stopped: boolean;
  /** Aborts this query's pending HTTP request (a long poll). */
  readonly controller: AbortController;
  /** Settles once the POST has been answered (the id is known then, if Trino created the query). */
  posted: Promise<void>;
}

/** Asks Trino to cancel a query (DELETE /v1/query/{id}); never throws. */
async function killQuery(context: TrinoSessionContext, id: string): Promise<void> {
  try {
    await createTrinoClient(context.connection, context.agents, { timeoutMs: KILL_TIMEOUT_MS }).cancel(id);
  } catch (error) {
    context.logger.debug(
      { queryId: id, code: mapTrinoError(error).driverCode },
      'cancelling the Trino query failed',
    );
  }
}

/** Columns and per-column value converters of a result. */
function describeColumns(columns: Columns | undefined): {
  infos: ColumnInfo[];
  converters: TrinoValueConverter[];
} {
  const infos: ColumnInfo[] = [];
  const converters: TrinoValueConverter[] = [];
  for (const column of columns ?? []) {
    const type = parseTrinoType(column.type);
    infos.push({ name: column.name, type: columnTypeOf(type), nativeType: column.type });
    converters.push(trinoValueConverter(type));
  }
  return { infos, converters };
}

function toRawResult(columns: Columns | undefined, data: readonly unknown[][]): RawResult {
  const { infos, converters } = describeColumns(columns);
  const width = converters.length;
  const rows: unknown[][] = new Array(data.length);
  for (let r = 0; r < data.length; r++) {
    const source = data[r]!;
    const row: unknown[] = new Array(width);
    for (let c = 0; c < width; c++) row[c] = converters[c]!(source[c] ?? null);
    rows[r] = row;
  }
  return { columns: infos, rows };
}

/** Runs one statement to completion, the row limit, or a stop; throws the failure of any page. */
async function runStatement(
  context: TrinoSessionContext,
  statement: string,
  timeoutMs: number,
  rowLimit: number,
  running: Running,
): Promise<RawResult> {
  let posted!: () => void;
  running.posted = new Promise<void>((resolve) => {
    posted = resolve;
  });
  const client = createTrinoClient(context.connection, context.agents, {
    signal: running.controller.signal,
    timeoutMs: timeoutMs + REQUEST_GRACE_MS,
    origin: context.origin,
    onResponse: (body: QueryResult) => {
      if (running.id === undefined && typeof body.id === 'string') running.id = body.id;
    },
  });
  let iterator: Awaited<ReturnType<typeof client.query>>;
  try {
    // Sent with this query only: a shared client's session header would outlive it.
    iterator = await client.query({
      query: statement,
      session: { query_max_execution_time: `${Math.max(1, Math.ceil(timeoutMs))}ms` },
    });
  } finally {
    posted();
  }
  const data: unknown[][] = [];
  let columns: Columns | undefined;
  let step = await iterator.next();
  for (;;) {
    const page = step.value as QueryResult;
    if (page.error !== undefined && page.error !== null) {
      // With the query id an operator finds the query, and Trino's full message, in Trino's UI.
      context.logger.debug(
        { queryId: running.id, errorName: page.error.errorName, errorType: page.error.errorType },
        'Trino failed the query',
      );
      throw trinoQueryError(page.error);
    }
    if (page.columns !== undefined) columns = page.columns;
    for (const row of page.data ?? []) {
      if (data.length >= rowLimit) break;
      data.push(row);
    }
    if (page.nextUri === undefined) break;
    if (data.length >= rowLimit) {
      // Enough rows: fetch no further page and free the cluster from the rest.
      running.stopped = true;
      if (running.id !== undefined) await killQuery(context, running.id);
      break;
    }
    if (running.stopped) throw new ConnectorError('QUERY_ABORTED', 'the Trino query was cancelled');
    step = await iterator.next();
  }
  return toRawResult(columns, data);
}

/** Creates a session; `open()` proves the coordinator answers before the pool hands it out. */
export function createTrinoSession(context: TrinoSessionContext): ConnectorSession & {
  open(connectTimeoutMs: number): Promise<void>;
} {
  let closed = false;
  let current: Running | undefined;

  async function execute(statement: string, timeoutMs: number, rowLimit: number): Promise<RawResult> {
    if (closed) throw new ConnectorError('CLOSED', 'the Trino session is closed');
    const running: Running = {
      id: undefined,
      stopped: false,
      controller: new AbortController(),
      posted: Promise.resolve(),
    };
    current = running;
    try {
      return await runStatement(context, statement, timeoutMs, rowLimit, running);
    } catch (error) {
      if (running.stopped && !(error instanceof ConnectorError)) {
        throw new ConnectorError('QUERY_ABORTED', 'the Trino query was cancelled');
      }
      throw mapTrinoError(error);
    } finally {
      if (current === running) current = undefined;
    }
  }

  async function cancel(): Promise<void> {
    const running = current;
    if (running === undefined || running.stopped) return;
    running.stopped = true;
    // The POST is answered at once with the query id; cancelling needs that id.
    await running.posted;
    running.controller.abort();
    if (running.id !== undefined) await killQuery(context, running.id);
  }

  return {
    async open(connectTimeoutMs: number): Promise<void> {
      const timer = setTimeout(() => void cancel(), connectTimeoutMs);
      try {
        // A row limit above the one row, so the probe reads to the end instead of cancelling.
        await execute('SELECT 1', connectTimeoutMs, 2);
      } catch (error) {
        const failure = mapTrinoError(error);
        if (failure.code === 'CONNECT_FAILED') throw failure;
        throw new ConnectorError('CONNECT_FAILED', 'the Trino coordinator did not run SELECT 1', {
          retryable: failure.retryable,
          ...(failure.driverCode === undefined ? {} : { driverCode: failure.driverCode }),
        });
      } finally {
        clearTimeout(timer);
      }
    },

    execute(query: CompiledQuery, { timeoutMs, rowLimit }: ExecuteOptions): Promise<RawResult> {
      let statement: string;
      try {
        statement = trinoStatement(query);
      } catch (error) {
        return Promise.reject(error);
      }
      return execute(statement, timeoutMs, rowLimit);
    },

    // Synchronous on purpose: nothing on the server can end a Trino "session".
    validate(): boolean {
      return !closed;
    },

    cancel,

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      const running = current;
      if (running !== undefined && !running.stopped) await cancel();
    },
  };
}
