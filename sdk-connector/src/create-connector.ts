// The runtime that turns a thin plugin into a Connector: validates the config once, pools
// sessions, compiles templates, enforces the time limit (cancelling on the server), caps rows,
// makes values JSON-safe, and maps every driver error to a ConnectorError that leaks nothing.
// Plugins only open sessions and run SQL; everything a caller relies on lives here, once.
import { parseConnectorConfig, secretValuesOf } from './config-schema.js';
import type {
  Connector,
  ConnectorOptions,
  DescribeRequest,
  JsonValue,
  QueryRequest,
  QueryResult,
  RowSink,
  StreamSummary,
} from './connector.js';
import { ConnectorError, isConnectorError, redactSecrets } from './connector-error.js';
import type {
  ColumnInfo,
  CompiledQuery,
  ConnectorDriver,
  ConnectorPlugin,
  ConnectorSession,
  ExecuteOptions,
  RawRowSink,
  StatementDescription,
} from './connector-plugin.js';
import type { PoolOptions } from './connector-pool.js';
import { createDestinationGuard } from './destination-guard.js';
import { OPERATOR_TRUSTED } from './destination-policy.js';
import { type JsonConverter, jsonConverterFor } from './json-values.js';
import { noopLogger } from './noop-logger.js';
import { QueryDeadlines, QueryStop, raceStop, STOPPED } from './query-stop.js';
import { assertReadOnlySql } from './read-only-sql.js';
import { RESULT_ROW_BYTES, resultTooLarge, resultValueBytes } from './result-size.js';
import { createSessionPool, DEFAULT_POOL_OPTIONS } from './session-pool.js';
import { compileTemplate } from './sql-template.js';

/** SQL texts remembered as read-only per connector (cleared when full: Trino's literals vary). */
const READ_ONLY_MEMO = 1_000;

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_ROWS = 10_000;
const DEFAULT_CLOSE_GRACE_MS = 5_000;
/**
 * After a time limit or an abort, how long the cancel and the driver's settling may take in all
 * before the caller is answered and the session destroyed: a warehouse that stopped answering
 * (its cancel request and the query both hang) fails a call at its time limit + this, never later.
 */
const STOP_SETTLE_MS = 500;

type Row = Record<string, JsonValue>;

/** Rows per batch when a non-streaming session's whole result is handed to a sink. */
const STREAM_BATCH_ROWS = 4_096;

/** A sink's own error on its way through a session (see `stream`): rethrown as it was. */
class SinkFailure extends Error {
  override readonly cause: unknown;
  constructor(cause: unknown) {
    super('the result sink failed');
    this.cause = cause;
  }
}

function definedOnly(options: Partial<PoolOptions> | undefined): Partial<PoolOptions> {
  if (!options) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) if (v !== undefined) out[k] = v;
  return out as Partial<PoolOptions>;
}

function driverCodeOf(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const e = error as { code?: unknown; sqlState?: unknown; errno?: unknown };
  for (const c of [e.code, e.sqlState, e.errno]) {
    if (typeof c === 'string' || typeof c === 'number') return String(c);
  }
  return undefined;
}

function waitFor(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** A request's optional byte bound, checked: undefined, or a positive safe integer. */
function byteBound(request: QueryRequest, name: 'maxBytesBilled' | 'maxResultBytes'): number | undefined {
  const value = request[name];
  if (value !== undefined && !(Number.isSafeInteger(value) && value > 0)) {
    throw new ConnectorError('PARAM_INVALID', `${name} must be a positive safe integer`);
  }
  return value;
}

/**
 * Converts a driver's rows to objects keyed by column name, one converter per column. With a
 * finite `maxBytes`, throws RESULT_TOO_LARGE as soon as the rows' JSON (values and keys, by
 * {@link resultValueBytes}) plus RESULT_ROW_BYTES a row would pass it.
 */
function toRows(
  columns: readonly ColumnInfo[],
  rows: readonly (readonly unknown[])[],
  count: number,
  maxBytes = Number.POSITIVE_INFINITY,
): Row[] {
  const width = columns.length;
  const names: string[] = new Array(width);
  const converters: JsonConverter[] = new Array(width);
  let protoKey = false;
  // `{"name":…,}` per column, `{}` and `,` per row, and its cost in memory besides its values.
  let rowOverhead = RESULT_ROW_BYTES;
  for (let c = 0; c < width; c++) {
    const column = columns[c]!;
    names[c] = column.name;
    converters[c] = jsonConverterFor(column.type);
    if (column.name === '__proto__') protoKey = true;
    rowOverhead += column.name.length + 4;
  }
  const measure = maxBytes !== Number.POSITIVE_INFINITY;
  let bytes = 2;
  const out: Row[] = new Array(count);
  for (let r = 0; r < count; r++) {
    const src = rows[r]!;
    const row: Row = {};
    if (protoKey) {
      for (let c = 0; c < width; c++) {
        Object.defineProperty(row, names[c]!, {
          value: converters[c]!(src[c]),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    } else {
      for (let c = 0; c < width; c++) row[names[c]!] = converters[c]!(src[c]);
    }
    if (measure) {
      bytes += rowOverhead;
      for (let c = 0; c < width; c++) bytes += resultValueBytes(row[names[c]!] as JsonValue);
      if (bytes > maxBytes) throw resultTooLarge(maxBytes, r + 1);
    }
    out[r] = row;
  }
  return out;
}

/**
 * A session's ExecuteOptions, its `signal` read from the query's stop on first access. A class
 * (the getter on its prototype): an object literal with a getter and optional fields spread in is
 * built slowly, about 0.5 µs a query against 16 ns for an instance.
 */
class StopOptions implements ExecuteOptions {
  readonly maxBytesBilled?: number;
  readonly maxResultBytes?: number;

  constructor(
    readonly timeoutMs: number,
    readonly rowLimit: number,
    maxBytesBilled: number | undefined,
    maxResultBytes: number | undefined,
    private readonly stop: QueryStop,
  ) {
    if (maxBytesBilled !== undefined) this.maxBytesBilled = maxBytesBilled;
    if (maxResultBytes !== undefined) this.maxResultBytes = maxResultBytes;
  }

  get signal(): AbortSignal {
    return this.stop.signal;
  }
}
/**
 * Creates a running connector from a plugin and a raw (unvalidated) connection config.
 *
 * The config is validated once (CONFIG_INVALID lists every problem, never a secret), the
 * plugin's driver is created, and sessions are pooled with `plugin.defaultPool` then
 * `options.pool` applied over the defaults. No session is opened until the first query or
 * {@link Connector.test} (unless the pool's `min` is above 0).
 *
 * @example
 * const connector = await createConnector(postgresPlugin, { url: 'postgres://…' });
 * const result = await connector.query({ template: parseTemplate('SELECT 1 AS one'), params: {} });
 * await connector.close();
 */
export async function createConnector<C>(
  plugin: ConnectorPlugin<C>,
  rawConfig: unknown,
  options: ConnectorOptions = {},
): Promise<Connector> {
  const config = parseConnectorConfig(plugin, rawConfig);
  const secrets = secretValuesOf(plugin.configSchema, config);
  const logger = options.logger ?? noopLogger;
  const defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const defaultMaxRows = options.defaultMaxRows ?? DEFAULT_MAX_ROWS;
  const poolOptions: PoolOptions = {
    ...DEFAULT_POOL_OPTIONS,
    ...definedOnly(plugin.defaultPool),
    ...definedOnly(options.pool),
  };
  if (!(poolOptions.max >= 1) || !(poolOptions.min >= 0) || poolOptions.min > poolOptions.max) {
    throw new ConnectorError('CONFIG_INVALID', 'pool options need 0 ≤ min ≤ max and max ≥ 1', {
      details: [{ param: 'pool', message: `min ${poolOptions.min}, max ${poolOptions.max}` }],
    });
  }

  let driver: ConnectorDriver;
  try {
    driver = await plugin.createDriver(config, {
      logger,
      destinations: createDestinationGuard(options.destinations ?? OPERATOR_TRUSTED, {
        ...(options.resolve === undefined ? {} : { resolve: options.resolve }),
      }),
      ...(options.resources === undefined ? {} : { resources: options.resources }),
    });
  } catch (error) {
    if (isConnectorError(error)) throw redacted(error);
    logger.warn({ err: redactText(error), type: plugin.type }, 'creating the driver failed');
    throw new ConnectorError('CONNECT_FAILED', `could not initialise the ${plugin.type} driver`, {
      cause: error,
      ...withDriverCode(error),
    });
  }
  const pool = createSessionPool(driver, poolOptions, logger);

  let closing: Promise<void> | undefined;
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];

  function redactText(error: unknown): string {
    return redactSecrets(error instanceof Error ? error.message : String(error), secrets);
  }

  function withDriverCode(error: unknown): { driverCode?: string } {
    const code = driverCodeOf(error);
    return code === undefined ? {} : { driverCode: code };
  }

  /** A connector error whose message could still carry a secret value gets a clean copy. */
  function redacted(error: ConnectorError): ConnectorError {
    const message = redactSecrets(error.message, secrets);
    const details = error.details.map((d) => ({ ...d, message: redactSecrets(d.message, secrets) }));
    const warehouse =
      error.warehouseMessage === undefined ? undefined : redactSecrets(error.warehouseMessage, secrets);
    if (
      message === error.message &&
      warehouse === error.warehouseMessage &&
      details.every((d, i) => d.message === error.details[i]!.message)
    ) {
      return error;
    }
    return new ConnectorError(error.code, message, {
      retryable: error.retryable,
      cause: error.cause,
      details,
      ...(error.driverCode === undefined ? {} : { driverCode: error.driverCode }),
      ...(warehouse === undefined ? {} : { warehouseMessage: warehouse }),
    });
  }

  /** Maps anything a session threw to a ConnectorError that is safe to show. */
  function mapDriverError(error: unknown): ConnectorError {
    return withWarehouseMessage(mapToConnectorError(error));
  }

  /**
   * A failed query keeps the warehouse's own message (secrets removed) for the analytic's owner:
   * from the driver error behind it, or the plugin's message when it threw one itself.
   */
  function withWarehouseMessage(error: ConnectorError): ConnectorError {
    if (error.code !== 'QUERY_FAILED' || error.warehouseMessage !== undefined) return error;
    const source = error.cause instanceof Error ? error.cause.message : undefined;
    if (source === undefined || source === '') return error;
    return new ConnectorError(error.code, error.message, {
      retryable: error.retryable,
      cause: error.cause,
      details: error.details,
      ...(error.driverCode === undefined ? {} : { driverCode: error.driverCode }),
      warehouseMessage: redactSecrets(source, secrets).slice(0, 2_000),
    });
  }

  function mapToConnectorError(error: unknown): ConnectorError {
    if (isConnectorError(error)) return redacted(error);
    logger.warn(
      { err: redactText(error), ...withDriverCode(error), type: plugin.type },
      'query failed in the driver',
    );
    if (plugin.mapError) {
      try {
        return redacted(plugin.mapError(error));
      } catch (mapFailure) {
        logger.error({ err: redactText(mapFailure), type: plugin.type }, 'plugin.mapError threw');
      }
    }
    return new ConnectorError('QUERY_FAILED', 'the warehouse rejected or failed the query', {
      cause: error,
      ...withDriverCode(error),
    });
  }

  /**
   * Whether a session is known to be fine after `error`: only when the session itself (or the
   * plugin's mapError) classified it as an ordinary query failure. Anything else destroys it.
   */
  function sessionSurvives(error: unknown, failure: ConnectorError): boolean {
    const classified = isConnectorError(error) || plugin.mapError !== undefined;
    return (
      classified &&
      (failure.code === 'QUERY_FAILED' ||
        failure.code === 'PARAM_INVALID' ||
        failure.code === 'RESULT_TOO_LARGE')
    );
  }

  const readOnlyPassed = new Set<string>();

  function compile(request: Pick<QueryRequest, 'template' | 'params'>): CompiledQuery {
    let compiled: CompiledQuery;
    try {
      compiled = compileTemplate(request.template, plugin.dialect, request.params);
    } catch (error) {
      if (isConnectorError(error)) throw error;
      throw new ConnectorError(
        'PARAM_INVALID',
        error instanceof Error ? error.message : 'invalid parameters',
        {
          cause: error,
        },
      );
    }
    // Every statement, run or described, whatever was checked when it was deployed: the text is
    // the last thing between a caller and the warehouse (a READ ONLY session still writes files).
    // A text that passed is remembered (with placeholders it is the same on every call), so the
    // tokenizer runs once per analytic version, not once per call.
    if (!readOnlyPassed.has(compiled.sql)) {
      assertReadOnlySql(compiled.sql, plugin.dialect.family);
      if (readOnlyPassed.size >= READ_ONLY_MEMO) readOnlyPassed.clear();
      readOnlyPassed.add(compiled.sql);
    }
    return compiled;
  }

  /** The running queries' time limits, and AbortControllers kept for reuse (see query-stop.ts). */
  const deadlines = new QueryDeadlines();

  /** What one execution on a borrowed session needs to know of its request. */
  interface Execution {
    readonly maxRows: number;
    readonly maxResultBytes: number | undefined;
    readonly started: number;
  }

  /**
   * Runs one request on a pooled session: compiles it, borrows a session (retrying once on a
   * dead idle one), runs `exec` under the time limit and the caller's signal (cancelling on the
   * server when either fires) and hands its outcome to `finish`.
   */
  async function onSession<T, R>(
    request: QueryRequest,
    exec: (session: ConnectorSession, compiled: CompiledQuery, options: ExecuteOptions) => Promise<T>,
    finish: (outcome: T, execution: Execution) => R,
  ): Promise<R> {
    if (closing) throw new ConnectorError('CLOSED', 'the connector is closed');
    inFlight++;
    let stop: QueryStop | undefined;
    try {
      const timeoutMs = request.timeoutMs ?? defaultTimeoutMs;
      const maxRows = request.maxRows ?? defaultMaxRows;
      if (!(timeoutMs > 0)) throw new ConnectorError('PARAM_INVALID', 'timeoutMs must be a positive number');
      if (!Number.isInteger(maxRows) || maxRows < 0) {
        throw new ConnectorError('PARAM_INVALID', 'maxRows must be a non-negative integer');
      }
      const maxBytesBilled = byteBound(request, 'maxBytesBilled');
      const maxResultBytes = byteBound(request, 'maxResultBytes');
      const compiled = compile(request);
      const started = performance.now();
      const currentStop = new QueryStop(timeoutMs, started, request.signal, deadlines);
      stop = currentStop;
      if (currentStop.reason !== undefined) throw currentStop.error();

      for (let attempt = 0; ; attempt++) {
        let session: ConnectorSession;
        // Time spent waiting for a session counts against the limit; an idle one costs none.
        let remainingMs = attempt === 0 ? timeoutMs : timeoutMs - (performance.now() - started);
        try {
          // The signal is only created if the caller has to wait for a session.
          const borrowed = pool.acquireNow(() => currentStop.signal);
          if (borrowed instanceof Promise) {
            session = await borrowed;
            remainingMs = timeoutMs - (performance.now() - started);
          } else {
            session = borrowed;
          }
        } catch (error) {
          if (currentStop.reason !== undefined) throw currentStop.error();
          throw isConnectorError(error) ? error : mapDriverError(error);
        }
        const reused = pool.wasIdle(session);
        let pending: Promise<T> | undefined;
        let raw: T;
        try {
          if (currentStop.reason !== undefined) throw STOPPED;
          const options = new StopOptions(
            Math.max(1, Math.ceil(remainingMs)),
            maxRows + 1,
            maxBytesBilled,
            maxResultBytes,
            currentStop,
          );
          pending = exec(session, compiled, options);
          raw = await raceStop(pending, currentStop);
        } catch (error) {
          if (currentStop.reason !== undefined) {
            if (pending !== undefined) await cancelAndSettle(session, pending);
            const failure = currentStop.error();
            pool.release(session, failure);
            throw failure;
          }
          if (error instanceof SinkFailure) {
            // The sink refused (a full disk store, a client gone): the query was stopped by the
            // session; its state is unknown, so the session is not reused.
            pool.release(session, mapDriverError(error.cause));
            throw error.cause;
          }
          const failure = mapDriverError(error);
          pool.release(session, sessionSurvives(error, failure) ? undefined : failure);
          // A session the server killed while it sat idle must not fail this caller: retry once.
          if (failure.code === 'CONNECT_FAILED' && failure.retryable && reused && attempt === 0) {
            logger.info({ type: plugin.type }, 'idle session was dead; retrying on another session');
            continue;
          }
          throw failure;
        }
        pool.release(session);
        return finish(raw, { maxRows, maxResultBytes, started });
      }
    } finally {
      stop?.finish();
      inFlight--;
      if (inFlight === 0 && idleWaiters.length > 0) notifyIdle();
    }
  }

  function run(request: QueryRequest): Promise<QueryResult> {
    return onSession(
      request,
      (session, compiled, options) => session.execute(compiled, options),
      (raw, { maxRows, maxResultBytes, started }) => {
        const truncated = raw.rows.length > maxRows;
        const rows = toRows(raw.columns, raw.rows, truncated ? maxRows : raw.rows.length, maxResultBytes);
        return {
          columns: raw.columns,
          rows,
          rowCount: rows.length,
          truncated,
          durationMs: performance.now() - started,
        };
      },
    );
  }

  /**
   * Runs a query into `sink`: the session's own stream when it has one (rows converted batch by
   * batch, at most `maxRows`), else its whole result handed over in batches. A sink's error is
   * wrapped in SinkFailure on its way through the session, so it comes out as itself.
   */
  function stream(request: QueryRequest, sink: RowSink): Promise<StreamSummary> {
    let columns: readonly ColumnInfo[] = [];
    let delivered = 0;
    let truncated = false;
    let convert: ((rows: readonly (readonly unknown[])[], count: number) => Row[]) | undefined;
    const toSink: RawRowSink = {
      columns(described) {
        columns = described;
        convert = (rows, count) => toRows(described, rows, count);
        sink.columns(described);
      },
      rows(batch) {
        if (truncated || convert === undefined) return;
        const maxRows = request.maxRows ?? defaultMaxRows;
        let count = batch.length;
        if (delivered + count > maxRows) {
          truncated = true;
          count = maxRows - delivered;
        }
        if (count <= 0) return;
        delivered += count;
        let handed: void | Promise<void>;
        try {
          handed = sink.rows(convert(batch, count));
        } catch (error) {
          throw new SinkFailure(error);
        }
        return handed instanceof Promise
          ? handed.catch((error: unknown) => {
              throw new SinkFailure(error);
            })
          : undefined;
      },
    };
    return onSession(
      request,
      async (session, compiled, options) => {
        if (session.stream !== undefined) {
          await session.stream(compiled, options, toSink);
          return;
        }
        const raw = await session.execute(compiled, options);
        toSink.columns(raw.columns);
        for (let at = 0; at < raw.rows.length && !truncated; at += STREAM_BATCH_ROWS) {
          const handed = toSink.rows(raw.rows.slice(at, at + STREAM_BATCH_ROWS));
          if (handed instanceof Promise) await handed;
        }
      },
      (_, { started }) => ({
        columns,
        rowCount: delivered,
        truncated,
        durationMs: performance.now() - started,
      }),
    );
  }

  /**
   * Checks a statement on one pooled session without running it. A session that does not
   * answer within the time limit (or the caller's abort) is cancelled and destroyed.
   */
  async function describe(request: DescribeRequest): Promise<StatementDescription | undefined> {
    if (closing) throw new ConnectorError('CLOSED', 'the connector is closed');
    inFlight++;
    try {
      const timeoutMs = request.timeoutMs ?? defaultTimeoutMs;
      if (!(timeoutMs > 0)) throw new ConnectorError('PARAM_INVALID', 'timeoutMs must be a positive number');
      const compiled = compile(request);
      const controller = new AbortController();
      const onAbort = () => controller.abort(request.signal?.reason);
      if (request.signal?.aborted) throw new ConnectorError('QUERY_ABORTED', 'the check was aborted');
      request.signal?.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => controller.abort(new Error('timeout')), timeoutMs);
      const stopped = () =>
        request.signal?.aborted
          ? new ConnectorError('QUERY_ABORTED', 'the check was aborted')
          : new ConnectorError('QUERY_TIMEOUT', `the check took longer than ${timeoutMs} ms`);
      try {
        let session: ConnectorSession;
        try {
          session = await pool.acquire(controller.signal);
        } catch (error) {
          if (controller.signal.aborted) throw stopped();
          throw isConnectorError(error) ? error : mapDriverError(error);
        }
        if (session.describe === undefined) {
          pool.release(session);
          return undefined;
        }
        const pending = session.describe(compiled, { timeoutMs, signal: controller.signal });
        const aborted = new Promise<never>((_, reject) => {
          if (controller.signal.aborted) reject(stopped());
          controller.signal.addEventListener('abort', () => reject(stopped()), { once: true });
        });
        try {
          const description = await Promise.race([pending, aborted]);
          pool.release(session);
          return description;
        } catch (error) {
          if (controller.signal.aborted) {
            await cancelAndSettle(session, pending);
            const failure = stopped();
            pool.release(session, failure);
            throw failure;
          }
          const failure = mapDriverError(error);
          pool.release(session, sessionSurvives(error, failure) ? undefined : failure);
          throw failure;
        }
      } finally {
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
      }
    } finally {
      inFlight--;
      if (inFlight === 0 && idleWaiters.length > 0) notifyIdle();
    }
  }

  /**
   * A stopped query: cancel it on the server and give the driver a moment to settle, both within
   * STOP_SETTLE_MS. The session is destroyed afterwards whatever happened.
   */
  async function cancelAndSettle(session: ConnectorSession, pending: Promise<unknown>): Promise<void> {
    const started = performance.now();
    let cancelled: Promise<void>;
    try {
      cancelled = session.cancel?.() ?? Promise.resolve();
    } catch {
      // cancel() must not throw; if it does, the session is destroyed anyway
      cancelled = Promise.resolve();
    }
    await waitFor(cancelled, STOP_SETTLE_MS);
    await waitFor(pending, Math.max(0, STOP_SETTLE_MS - (performance.now() - started)));
  }

  function notifyIdle(): void {
    if (inFlight !== 0) return;
    const waiting = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiting) resolve();
  }

  return {
    type: plugin.type,
    dialect: plugin.dialect,

    query: run,

    stream,

    describe,

    async test() {
      if (closing) throw new ConnectorError('CLOSED', 'the connector is closed');
      const session = await pool.acquire();
      let ok: boolean;
      try {
        ok = session.validate ? await session.validate() : true;
      } catch (error) {
        const failure = new ConnectorError('CONNECT_FAILED', 'the session failed validation', {
          cause: error,
          ...withDriverCode(error),
        });
        pool.release(session, failure);
        throw failure;
      }
      if (!ok) {
        const failure = new ConnectorError('CONNECT_FAILED', 'the session failed validation');
        pool.release(session, failure);
        throw failure;
      }
      pool.release(session);
    },

    stats() {
      return pool.stats();
    },

    close(graceMs = DEFAULT_CLOSE_GRACE_MS) {
      if (closing) return closing;
      closing = (async () => {
        const started = performance.now();
        if (inFlight > 0) {
          await waitFor(
            new Promise<void>((resolve) => {
              idleWaiters.push(resolve);
            }),
            graceMs,
          );
        }
        await pool.drain(Math.max(0, graceMs - (performance.now() - started)));
      })();
      return closing;
    },
  };
}
