// One Postgres session: a pg.Client opened read-only with the statement timeout and output formats
// set in its startup packet, so a query costs exactly one round trip (see postgres-query). Its
// health is a local flag kept by the client's events, so validate() does no I/O.

import { hash } from 'node:crypto';
import {
  type CompiledQuery,
  ConnectorError,
  type ConnectorLogger,
  type ConnectorSession,
  type DescribeOptions,
  type DestinationGuard,
  type ExecuteOptions,
  leadingKeyword,
  type RawResult,
  type RawRowSink,
  READ_ONLY_KEYWORDS,
  type StatementDescription,
} from '@quarry/sdk-connector';
import pg from 'pg';
import { sendCancelRequest } from './postgres-cancel.js';
import type { PostgresSettings, PostgresSsl } from './postgres-config.js';
import { mapPostgresError } from './postgres-errors.js';
import { type PgQueryOutcome, type PgQuerySpec, PostgresQuery } from './postgres-query.js';
import { toPostgresValues } from './postgres-values.js';

/** Rows per batch a streaming query hands to its sink. */
const STREAM_BATCH_ROWS = 2_048;
/** Batches waiting on the sink at which the socket is paused. */
const PAUSE_AT_BATCHES = 2;

/**
 * Statements a session keeps prepared, least recently used let go first. A call's statement is
 * then parsed once per session (PostgreSQL then plans it as it does any prepared statement: a
 * custom plan per call, or a generic one reused once that costs no more): about a third less of
 * the warehouse's CPU for a one-row lookup (connectors/postgres/README.md).
 */
const PREPARED_PER_SESSION = 64;

/**
 * A statement's name is the hash of its text, so that wherever a name is found prepared (a
 * transaction-mode pooler hands a session another server connection) it holds the same text.
 */
function statementName(text: string): string {
  return `quarry_${hash('sha1', text)}`;
}

/**
 * The errors a prepared statement can meet that its unnamed twin would not: it is gone (a
 * pooler's other server connection, DISCARD ALL: 26000), its name is taken there (42P05), or a
 * table changed the columns its plan returns (0A000). Raised before anything ran.
 */
const STATEMENT_LOST = new Set(['26000', '42P05', '0A000']);

/** The socket under pg's connection. */
interface PausableStream {
  pause(): void;
  resume(): void;
}

/** The statement_timeout a query asks for, in whole ms; 0 (no limit) for a non-positive value. */
function timeoutSetting(timeoutMs: number): number {
  return Number.isFinite(timeoutMs) && timeoutMs > 0 ? Math.min(Math.ceil(timeoutMs), 2_147_483_647) : 0;
}

/**
 * Whether the server's current statement_timeout can stay for a query asking for `wanted`: never
 * shorter (it would cut the query early), and at most a little longer, since the runtime's own
 * timer cancels on time and the server's limit is the backstop. The runtime passes the time left
 * of the request, which drifts by a few ms per query; without this slack nearly every query
 * would carry a SET.
 */
function timeoutFits(current: number, wanted: number): boolean {
  if (wanted === 0 || current === 0) return current === wanted;
  return current >= wanted && current <= wanted + Math.max(1000, wanted / 10);
}

interface ParameterStatus {
  readonly parameterName: string;
  readonly parameterValue: string;
}

/** pg's Client keeps the backend's pid and cancel key as untyped instance fields. */
interface BackendKey {
  readonly processID: number | null;
  readonly secretKey: number | null;
}

/** A live Postgres session; created by {@link createPostgresSession}. */
export class PostgresSession implements ConnectorSession {
  /** The backend's process id (pg_backend_pid()), for cancel requests and diagnostics. */
  readonly processId: number;
  private readonly client: pg.Client;
  private readonly settings: PostgresSettings;
  /** Where this session connected (the checked address), for its cancel requests. */
  private readonly target: PostgresTarget;
  private readonly secretKey: number;
  /** statement_timeout currently in force on the server; NaN when unknown. */
  private statementTimeoutMs: number;
  /** False once the connection errored or ended. */
  private alive = true;
  /** Set when a query left the session writable or inside a transaction. */
  private tainted = false;
  private running = false;
  private cancelling: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  /** Statement text → its name, for the statements prepared on this session (oldest use first). */
  private readonly prepared = new Map<string, string>();
  /** Statements let go from `prepared`, to close with the next query. */
  private unprepared: string[] = [];
  /** False once a prepared statement went missing: a pooler in the way; the unnamed one from then on. */
  private preparing = true;

  constructor(
    client: pg.Client,
    settings: PostgresSettings,
    target: PostgresTarget,
    tracker: SessionTracker,
  ) {
    this.client = client;
    this.settings = settings;
    this.target = target;
    const key = client as unknown as BackendKey;
    this.processId = key.processID ?? 0;
    this.secretKey = key.secretKey ?? 0;
    this.statementTimeoutMs = settings.statementTimeoutMs;
    tracker.onDead = () => {
      this.alive = false;
    };
    tracker.onWritable = () => {
      this.tainted = true;
    };
  }

  execute(query: CompiledQuery, options: ExecuteOptions): Promise<RawResult> {
    return this.run(query, options, undefined);
  }

  /**
   * Streams the rows to `sink` in batches as they are parsed. While two batches wait on the
   * sink, the socket is paused, so the server's rows wait in its send buffer and TCP's window
   * rather than in this process. A sink that fails gets the query cancelled on the server and
   * `stream` rejects with its error.
   */
  async stream(query: CompiledQuery, options: ExecuteOptions, sink: RawRowSink): Promise<void> {
    const socket = (this.client as unknown as { connection: { stream: PausableStream } }).connection.stream;
    let waiting = 0;
    let chain: Promise<void> = Promise.resolve();
    let failure: { error: unknown } | undefined;
    const settle = () => {
      waiting--;
      if (waiting < PAUSE_AT_BATCHES) socket.resume();
    };
    const fail = (error: unknown) => {
      failure ??= { error };
      void this.cancel();
    };
    await this.run(query, options, {
      batchRows: STREAM_BATCH_ROWS,
      columns: (columns) => sink.columns(columns),
      rows: (batch) => {
        if (failure !== undefined) throw failure.error;
        waiting++;
        if (waiting >= PAUSE_AT_BATCHES) socket.pause();
        chain = chain.then(async () => {
          if (failure !== undefined) return settle();
          try {
            await sink.rows(batch);
          } catch (error) {
            fail(error);
          }
          settle();
        });
      },
    }).catch((error: unknown) => {
      if (failure === undefined) throw error;
    });
    await chain;
    socket.resume();
    if (failure !== undefined) throw failure.error;
  }

  private async run(
    query: CompiledQuery,
    options: ExecuteOptions,
    stream: PgQuerySpec['stream'],
  ): Promise<RawResult> {
    if (this.closing !== undefined) throw new ConnectorError('CLOSED', 'the Postgres session is closed');
    // CONNECT_FAILED (not QUERY_FAILED) so the runtime destroys this session instead of keeping it.
    if (!this.alive || this.tainted)
      throw new ConnectorError('CONNECT_FAILED', 'the Postgres session was lost');
    if (options.signal.aborted)
      throw new ConnectorError('QUERY_ABORTED', 'the query was aborted before it ran');
    const timeoutMs = timeoutSetting(options.timeoutMs);
    const newTimeout = timeoutFits(this.statementTimeoutMs, timeoutMs) ? undefined : timeoutMs;
    const rowLimit =
      Number.isFinite(options.rowLimit) && options.rowLimit > 0 ? Math.floor(options.rowLimit) : 0;
    this.running = true;
    let outcome: PgQueryOutcome;
    try {
      outcome = await this.wire(query, stream, options.maxResultBytes, rowLimit, newTimeout);
    } catch (error) {
      // A failed query rolls its implicit transaction back, SET included: ask again next time.
      if (newTimeout !== undefined) this.statementTimeoutMs = Number.NaN;
      const mapped = mapPostgresError(error);
      // A FATAL error (e.g. pg_terminate_backend) reaches the query before the socket's 'end'.
      if (mapped.code === 'CONNECT_FAILED') this.alive = false;
      throw mapped;
    } finally {
      this.running = false;
      // Never hand the session back while a cancel request is still on its way to the server.
      if (this.cancelling !== undefined) await this.cancelling;
    }
    if (newTimeout !== undefined) this.statementTimeoutMs = newTimeout;
    if (this.tainted || this.client.getTransactionStatus() !== 'I') {
      // e.g. `BEGIN READ WRITE` or `SET default_transaction_read_only = off` as a template: the
      // next query on this session would not be read-only, so the session must not be reused.
      this.tainted = true;
      this.alive = false;
      void endClient(this.client);
      throw new ConnectorError(
        'QUERY_FAILED',
        'the query changed the session state (transaction or read-only mode)',
      );
    }
    return { columns: outcome.columns, rows: outcome.rows };
  }

  /**
   * Runs the query on its prepared statement (preparing it first when this session has not), or
   * on the unnamed one. A prepared statement that went missing or stale fails before anything
   * ran, so the query is sent again once: re-prepared when only its plan's columns changed, on
   * the unnamed statement from then on when the statement was lost (a pooler in the way).
   */
  private async wire(
    query: CompiledQuery,
    stream: PgQuerySpec['stream'],
    maxResultBytes: number | undefined,
    rowLimit: number,
    setStatementTimeoutMs: number | undefined,
  ): Promise<PgQueryOutcome> {
    const text = query.sql;
    const values = toPostgresValues(query.params);
    for (let attempt = 0; ; attempt++) {
      let statement: PgQuerySpec['statement'];
      if (this.preparing) {
        const name = this.prepared.get(text);
        if (name !== undefined) {
          // Most recently used last: the first key is the one to let go.
          this.prepared.delete(text);
          this.prepared.set(text, name);
          statement = { name, parse: false };
        } else statement = { name: statementName(text), parse: true };
      }
      const close = this.unprepared.length === 0 ? undefined : this.unprepared;
      if (close !== undefined) this.unprepared = [];
      try {
        const outcome = await new Promise<PgQueryOutcome>((resolve, reject) => {
          const pending = new PostgresQuery(
            {
              text,
              values,
              fetchLimit: this.settings.portalRowLimit ? rowLimit : 0,
              keepRows: rowLimit === 0 ? Number.POSITIVE_INFINITY : rowLimit,
              // A failed attempt rolled its SET back with it: the retry sends it again.
              setStatementTimeoutMs,
              statement,
              close,
              ...(stream === undefined ? { maxBytes: maxResultBytes } : { stream }),
            },
            (error, outcome) => (outcome === undefined ? reject(error) : resolve(outcome)),
          );
          // PostgresQuery implements pg's submittable protocol against the subset of Connection
          // it uses (PgWire); @types/pg's Connection signatures differ, hence the cast.
          this.client.query(pending as unknown as pg.Submittable);
        });
        if (statement?.parse) this.remember(text, statement.name);
        return outcome;
      } catch (error) {
        if (statement === undefined) throw error;
        // Whether the statement is still there is unknown: closed with the next query.
        this.prepared.delete(text);
        this.unprepared.push(statement.name);
        const code = (error as { code?: unknown }).code;
        if (attempt > 0 || typeof code !== 'string' || !STATEMENT_LOST.has(code) || !this.alive) throw error;
        if (code !== '0A000') {
          this.preparing = false;
          this.prepared.clear();
          this.unprepared = [];
        }
      }
    }
  }

  /** Records a statement as prepared, letting go of the least recently used past the bound. */
  private remember(text: string, name: string): void {
    this.prepared.set(text, name);
    if (this.prepared.size <= PREPARED_PER_SESSION) return;
    const [oldest, oldName] = this.prepared.entries().next().value as [string, string];
    this.prepared.delete(oldest);
    this.unprepared.push(oldName);
  }

  /**
   * Checks a statement without running it, in two round trips: Parse/Describe (unknown tables
   * and columns fail here, and the row description gives the columns), then, for a statement
   * that reads by its first keyword, `EXPLAIN (FORMAT JSON)`, whose plan shows a data-modifying
   * CTE (ModifyTable) or a locking read (LockRows). EXPLAIN without ANALYZE executes nothing.
   */
  async describe(query: CompiledQuery, options: DescribeOptions): Promise<StatementDescription> {
    if (this.closing !== undefined) throw new ConnectorError('CLOSED', 'the Postgres session is closed');
    if (!this.alive || this.tainted)
      throw new ConnectorError('CONNECT_FAILED', 'the Postgres session was lost');
    if (options.signal.aborted)
      throw new ConnectorError('QUERY_ABORTED', 'the check was aborted before it ran');
    const values = toPostgresValues(query.params);
    const described = await this.submit({
      text: query.sql,
      values,
      fetchLimit: 0,
      keepRows: 0,
      describeOnly: true,
    });
    let readOnly = READ_ONLY_KEYWORDS.has(leadingKeyword(query.sql));
    if (readOnly) {
      const explained = await this.submit({
        text: `EXPLAIN (FORMAT JSON) ${query.sql}`,
        values,
        fetchLimit: 0,
        keepRows: 1,
      });
      const plan = explained.rows[0]?.[0];
      const text = typeof plan === 'string' ? plan : JSON.stringify(plan ?? null);
      if (/"Node Type":\s*"(ModifyTable|LockRows)"/.test(text)) readOnly = false;
    }
    return { columns: described.columns, readOnly };
  }

  /** Sends one statement through the extended protocol (see PostgresQuery); errors mapped. */
  private async submit(spec: PgQuerySpec): Promise<PgQueryOutcome> {
    this.running = true;
    try {
      return await new Promise<PgQueryOutcome>((resolve, reject) => {
        const pending = new PostgresQuery(spec, (error, outcome) =>
          outcome === undefined ? reject(error) : resolve(outcome),
        );
        this.client.query(pending as unknown as pg.Submittable);
      });
    } catch (error) {
      const mapped = mapPostgresError(error);
      if (mapped.code === 'CONNECT_FAILED') this.alive = false;
      throw mapped;
    } finally {
      this.running = false;
      if (this.cancelling !== undefined) await this.cancelling;
      if (this.client.getTransactionStatus() !== 'I') {
        this.tainted = true;
        this.alive = false;
      }
    }
  }

  /** Synchronous on purpose: the pool's fast lane checks health with no promise or timer. */
  validate(): boolean {
    return (
      this.alive && !this.tainted && this.closing === undefined && this.client.getTransactionStatus() === 'I'
    );
  }

  cancel(): Promise<void> {
    if (!this.running || !this.alive) return Promise.resolve();
    if (this.cancelling === undefined) {
      this.cancelling = sendCancelRequest({
        host: this.target.host,
        port: this.settings.port,
        ssl: this.target.ssl,
        processId: this.processId,
        secretKey: this.secretKey,
      }).finally(() => {
        this.cancelling = undefined;
      });
    }
    return this.cancelling;
  }

  close(): Promise<void> {
    if (this.closing === undefined) {
      this.alive = false;
      this.closing = endClient(this.client);
    }
    return this.closing;
  }
}

/** Client events land here; the session installs its handlers once it exists. */
interface SessionTracker {
  onDead: () => void;
  onWritable: () => void;
}

/** Ends a client, destroying its socket if a polite Terminate does not finish within a second. */
async function endClient(client: pg.Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const forced = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      client.connection.stream.destroy();
      resolve();
    }, 1000);
  });
  try {
    await Promise.race([client.end().catch(() => undefined), forced]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where a session connects: a checked IP address (or an allowed unix socket directory). */
export interface PostgresTarget {
  readonly host: string;
  /** TLS options, verifying the configured name (`servername`) rather than the address. */
  readonly ssl: PostgresSsl;
}

/**
 * Checks the configured host with the guard (each session again: a name may resolve elsewhere
 * by now) and returns the address to connect to. A host starting with `/` is a unix socket
 * directory, which is the gateway host itself.
 */
export async function postgresTarget(
  settings: PostgresSettings,
  guard: DestinationGuard,
): Promise<PostgresTarget> {
  if (settings.host.startsWith('/')) {
    guard.checkSocket(settings.host);
    return { host: settings.host, ssl: settings.ssl };
  }
  const checked = await guard.checkHost(settings.host, settings.port);
  const named = checked.address !== checked.host;
  return {
    host: checked.address,
    ssl: settings.ssl === false || !named ? settings.ssl : { ...settings.ssl, servername: checked.host },
  };
}

/**
 * Opens a session. Throws ConnectorError CONNECT_FAILED when the destination is not allowed, the
 * server cannot be reached, refuses the credentials, or does not confirm the session is read-only.
 */
export async function createPostgresSession(
  settings: PostgresSettings,
  logger: ConnectorLogger,
  guard: DestinationGuard,
): Promise<PostgresSession> {
  const target = await postgresTarget(settings, guard);
  const client = new pg.Client({
    host: target.host,
    port: settings.port,
    database: settings.database,
    user: settings.user,
    // A function, so pg never falls back to PGPASSWORD or ~/.pgpass for an empty password.
    password: () => settings.password,
    ssl: target.ssl === false ? false : { ...target.ssl },
    application_name: settings.applicationName,
    options: settings.startupOptions,
    client_encoding: 'UTF8',
    connectionTimeoutMillis: settings.connectTimeoutMs,
    keepAlive: true,
  });
  const tracker: SessionTracker = { onDead: () => {}, onWritable: () => {} };
  let readOnly: string | undefined;
  // Without an error listener, a session the server kills while idle would crash the process.
  client.on('error', (error: Error & { code?: unknown }) => {
    tracker.onDead();
    logger.warn({ driverCode: error.code }, 'postgres session failed');
  });
  client.on('end', () => tracker.onDead());
  // Postgres 14+ reports default_transaction_read_only whenever it changes (and at startup).
  client.connection.on('parameterStatus', (message: ParameterStatus) => {
    if (message.parameterName !== 'default_transaction_read_only') return;
    readOnly = message.parameterValue;
    if (readOnly !== 'on') tracker.onWritable();
  });
  try {
    await client.connect();
  } catch (error) {
    await endClient(client);
    const mapped = mapPostgresError(error);
    throw mapped.code === 'CONNECT_FAILED'
      ? mapped
      : new ConnectorError('CONNECT_FAILED', 'could not open a Postgres session', {
          cause: error,
          driverCode: mapped.driverCode,
        });
  }
  if (readOnly !== undefined && readOnly !== 'on') {
    // A pooler or server that drops the startup options would leave the session writable.
    await endClient(client);
    throw new ConnectorError(
      'CONNECT_FAILED',
      'the Postgres server did not apply read-only mode to the session',
    );
  }
  return new PostgresSession(client, settings, target, tracker);
}
