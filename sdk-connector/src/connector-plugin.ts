// The plugin interface, split the way Kysely splits Dialect and Driver: a plugin describes a
// warehouse type (name, config schema, SQL dialect) and creates a driver; the driver opens
// sessions; a session executes compiled queries. Pooling, timeouts, cancellation, row caps and
// JSON-safe values are the SDK runtime's job (see createConnector), so a plugin stays thin.
import type { z } from 'zod';
import type { Destination } from './connector-destinations.js';
import type { ConnectorError } from './connector-error.js';
import type { PoolOptions } from './connector-pool.js';
import type { DestinationGuard } from './destination-guard.js';
import type { ScalarParamType, ScalarValue } from './param-types.js';
import type { SqlFamily } from './read-only-sql.js';

/** Logical column types reported in `columns` and used to make values JSON-safe. */
export type ColumnType =
  /** Text. */
  | 'string'
  /** Whole numbers; a JSON number when |v| ≤ 2^53 − 1, else a decimal string. */
  | 'integer'
  /** Binary floating point; a JSON number (NaN/±Infinity become null). */
  | 'number'
  /** Exact decimals; a JSON number when it round-trips exactly, else a decimal string. */
  | 'decimal'
  | 'boolean'
  /** `YYYY-MM-DD`. */
  | 'date'
  /** ISO-8601, UTC, e.g. `2024-01-31T12:00:00.000Z`. */
  | 'timestamp'
  /** `HH:MM:SS[.fff]`. */
  | 'time'
  /** Base64. */
  | 'bytes'
  /** Any JSON value (JSON/JSONB/structs/maps). */
  | 'json'
  /** A list; elements made JSON-safe recursively. */
  | 'array'
  /** Anything else, rendered as a string. */
  | 'unknown';

/** One result column as a session reports it. */
export interface ColumnInfo {
  readonly name: string;
  readonly type: ColumnType;
  /** The engine's own type name (e.g. `int8`, `DECIMAL(18,2)`), for display only. */
  readonly nativeType?: string;
}

/** One bound parameter of a compiled query, in placeholder order (or once per name for named dialects). */
export interface BoundParam {
  readonly name: string;
  readonly type: ScalarParamType;
  readonly array: boolean;
  readonly value: ScalarValue | readonly ScalarValue[] | null;
}

/**
 * A query ready for a session: SQL in the dialect's placeholder syntax plus the values to bind.
 * For `literal` dialects `params` is empty: values are already rendered into `sql` by the
 * dialect's literal renderer, from validated values only.
 */
export interface CompiledQuery {
  readonly sql: string;
  readonly params: readonly BoundParam[];
}

/** How `:name` placeholders compile for an engine. */
export type PlaceholderStyle =
  /** `$1`, `$2`, … with an optional cast per type (Postgres, DuckDB). */
  | 'numbered'
  /**
   * `?`; arrays expand to `?, ?, …` (an empty array to `NULL`) for `IN (…)` (MySQL, Snowflake),
   * or bind as one `?` with {@link SqlDialect.wholeArrays} (Trino).
   */
  | 'positional'
  /** `@name` (BigQuery). */
  | 'named'
  /** Typed SQL literals rendered from validated values, for engines that cannot bind (Trino). */
  | 'literal';

/** The SQL dialect facts the template compiler and scanner need. */
export interface SqlDialect {
  readonly placeholders: PlaceholderStyle;
  /**
   * The SQL family whose read-only rule the runtime applies to every compiled statement before
   * a session sees it (see {@link readOnlyViolation}): how its text is tokenized and which
   * constructs that write or reach the host are refused. Defaults to `'ansi'` (one SELECT, WITH
   * or VALUES statement, ANSI strings and comments).
   */
  readonly family?: SqlFamily;
  /**
   * For `numbered` and `positional`: the cast appended to a placeholder (`::int8`), so typed NULLs
   * work; `undefined` leaves that type's placeholder bare (e.g. where the engine wants a plain bind,
   * as in Snowflake's `LIMIT ?`).
   */
  castFor?(type: ScalarParamType, array: boolean): string | undefined;
  /** For `literal`: renders one validated value as a SQL literal. */
  renderLiteral?(param: BoundParam): string;
  /**
   * For `positional`: bind an array param as one `?` holding the whole array (one BoundParam with
   * `array: true`, a typed NULL when null) instead of expanding it to `?, ?, …`. For engines with
   * array values whose owners write `contains(:ids, id)` rather than `IN (:ids)` (Trino's
   * `EXECUTE IMMEDIATE … USING ARRAY[…]`).
   */
  readonly wholeArrays?: boolean;
  /** `'…\'…'` escapes exist in string literals (MySQL). */
  readonly backslashEscapes?: boolean;
  /** `` `ident` `` quoted identifiers (MySQL, BigQuery). */
  readonly backtickIdentifiers?: boolean;
  /** `$tag$ … $tag$` string constants (Postgres). */
  readonly dollarQuotes?: boolean;
  /** `#` starts a line comment (MySQL). */
  readonly hashComments?: boolean;
}

/** What the runtime asks of one execution. */
export interface ExecuteOptions {
  /** The statement's time limit; the session should also enforce it on the server. */
  readonly timeoutMs: number;
  /** Return at most this many rows and stop fetching past it (the runtime asks maxRows + 1). */
  readonly rowLimit: number;
  /**
   * The caller's cost guard in bytes billed (QueryRequest.maxBytesBilled), when it gave one; an
   * engine that bills by bytes scanned must not run a query that would bill more (combine it
   * with a connection-level guard by taking the smaller). Others ignore it.
   */
  readonly maxBytesBilled?: number;
  /**
   * The caller's bound on the result's size (QueryRequest.maxResultBytes), when it gave one. A
   * driver that sees rows as they arrive should stop keeping them once their text passes it and
   * reject with `ConnectorError('RESULT_TOO_LARGE')`, reading the rest of the result (or
   * cancelling it) so the session stays usable: that keeps a huge result from ever being held in
   * memory. Drivers that only get all rows at once may ignore it; the runtime measures what it
   * is handed and fails the query the same way.
   */
  readonly maxResultBytes?: number;
  /**
   * Aborted when the query times out or the caller gives up. Created on first access, so a session
   * that never reads it costs nothing. It speaks for this execution only until `execute` settles:
   * do not keep reading it after that. The runtime may hand a signal that was never aborted to a
   * later query, but never one that still has listeners, so remove yours when you are done.
   */
  readonly signal: AbortSignal;
}

/** Rows as the driver returns them; the runtime makes values JSON-safe by column type. */
export interface RawResult {
  readonly columns: readonly ColumnInfo[];
  /** Each row's values in column order. */
  readonly rows: readonly (readonly unknown[])[];
}

/**
 * Where a streaming session hands its rows (see {@link ConnectorSession.stream}): the columns
 * once, then the rows in batches as they come off the wire.
 */
export interface RawRowSink {
  /** The result's columns, exactly once, before any rows. */
  columns(columns: readonly ColumnInfo[]): void;
  /**
   * A batch of rows, each its values in column order. A returned promise asks the session to
   * stop reading from the warehouse until it settles (backpressure); a throw or rejection stops
   * the query, and the session's `stream` rejects with that very error.
   */
  rows(batch: readonly (readonly unknown[])[]): void | Promise<void>;
}

/** What {@link ConnectorSession.describe} is given besides the statement. */
export interface DescribeOptions {
  /** The time limit; the runtime also stops waiting (and destroys the session) when it passes. */
  readonly timeoutMs: number;
  /** Aborted when the time limit passes or the caller gives up. */
  readonly signal: AbortSignal;
}

/**
 * What a warehouse says of a statement without running it (prepared, described or explained):
 * the columns it would produce and whether it only reads.
 */
export interface StatementDescription {
  /** The result columns, in order; empty for a statement that returns no rows. */
  readonly columns: readonly ColumnInfo[];
  /**
   * False when the statement would change data or schema (INSERT, UPDATE, DELETE, MERGE, DDL, a
   * data-modifying CTE, a locking read): a gateway refuses such an analytic before it is saved.
   */
  readonly readOnly: boolean;
}

/** One connection to a warehouse. Sessions are read-only and used by one query at a time. */
export interface ConnectorSession {
  /** Executes a compiled query in a read-only context with the given limits. */
  execute(query: CompiledQuery, options: ExecuteOptions): Promise<RawResult>;
  /**
   * Optional: executes like {@link execute}, but hands the rows to `sink` in batches as they
   * arrive instead of keeping them, waiting while a batch's promise is pending, so a result
   * larger than memory can flow to disk. Stops after `options.rowLimit` rows. The runtime falls
   * back to `execute` (and hands its rows over at once) for sessions without it.
   */
  stream?(query: CompiledQuery, options: ExecuteOptions, sink: RawRowSink): Promise<void>;
  /**
   * Cheap liveness check run on borrow; false (or a throw, or a rejection) destroys the session.
   *
   * Prefer a local, synchronous check (a flag kept from the connection's events) returning a
   * plain boolean: that is what the pool's fast lane uses, at no cost per query. A returned
   * promise is still honoured (with a time limit), but costs a few promise turns and a timer on
   * every borrow.
   */
  validate?(): boolean | Promise<boolean>;
  /**
   * Cancels the statement running on this session on the server (pg_cancel_backend, KILL QUERY,
   * interrupt, a cancel request). Called while `execute` is pending; must not throw.
   */
  cancel?(): Promise<void>;
  /**
   * Optional: checks a compiled query against the warehouse without running it (Postgres
   * Parse/Describe or EXPLAIN, MySQL prepare, DuckDB prepare, a cloud engine's dry run) and says
   * what it would return. Bound values are typed NULLs. An unknown table or column must reject
   * like a failed query (QUERY_FAILED, or a driver error mapError makes one), so the warehouse's
   * message reaches the owner. Nothing may be executed, and the session stays read-only.
   */
  describe?(query: CompiledQuery, options: DescribeOptions): Promise<StatementDescription>;
  /** Closes the connection. Must be idempotent. */
  close(): Promise<void>;
}

/** Creates sessions; one per connector instance (i.e. per owner connection). */
export interface ConnectorDriver {
  /** Opens one new session; throw a ConnectorError('CONNECT_FAILED') when the warehouse is unreachable. */
  createSession(): Promise<ConnectorSession>;
  /** Releases driver-wide resources once every session is closed. */
  destroy?(): Promise<void>;
}

/** A minimal structured logger (pino-compatible). */
export interface ConnectorLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * Caps on what an engine running inside the gateway process (DuckDB, SQLite) may take, set by
 * the gateway for owner connections. An embedded driver applies the smaller of its config's
 * setting and the cap.
 */
export interface ResourceCaps {
  /** Most worker threads one connection may use. */
  readonly maxThreads?: number;
  /** Most memory one connection's engine may use, in bytes. */
  readonly maxMemoryBytes?: number;
}

/** What a plugin's driver is given besides its config. */
export interface DriverContext {
  readonly logger: ConnectorLogger;
  /**
   * The only way to reach a host, a unix socket, a file of the gateway host or its identity:
   * call it before every connect (each new session) and connect to the address it returns.
   * HTTP drivers use {@link createGuardedAgents}.
   */
  readonly destinations: DestinationGuard;
  /** Caps for engines that run inside the gateway process; absent for the operator's own connections. */
  readonly resources?: ResourceCaps;
}

/**
 * Something of the gateway host's own that a connection would use, beyond what its owner wrote
 * in its config. See {@link ConnectorPlugin.hostAccess}.
 */
export type HostAccess =
  /** Files on the gateway host's disk (an embedded engine reading a database file: DuckDB, SQLite). */
  | 'files'
  /**
   * The gateway's own identity: ambient credentials such as cloud application-default
   * credentials, an instance's metadata identity, or credentials in its environment or home.
   */
  | 'credentials';

/**
 * A warehouse type. Third parties export one of these (as `plugin` or the default export of
 * their package) and operators register it by module specifier.
 */
export interface ConnectorPlugin<Config = unknown> {
  /** Unique type name used in connection definitions, e.g. `postgres`. */
  readonly type: string;
  /** Human-readable name, e.g. `PostgreSQL`. */
  readonly displayName?: string;
  /**
   * Validates a connection's config once, at creation. Mark secret fields with
   * {@link secretField} so they are redacted from logs and listed as secrets.
   */
  readonly configSchema: z.ZodType<Config>;
  readonly dialect: SqlDialect;
  /** Engine-appropriate pool defaults (an embedded engine may want `max: 1`). */
  readonly defaultPool?: Partial<PoolOptions>;
  /** Creates the driver for one validated config. */
  createDriver(config: Config, context: DriverContext): ConnectorDriver | Promise<ConnectorDriver>;
  /** Maps a driver error to a ConnectorError; the default maps everything to QUERY_FAILED. */
  mapError?(error: unknown): ConnectorError;
  /**
   * What of the gateway host's own a connection with this (validated) config would use:
   * `'files'` when it reads files on the gateway host, `'credentials'` when it authenticates as
   * the gateway itself. Return `[]` (or omit the hook) when a connection reaches only the hosts
   * its config names, with the credentials its config holds.
   *
   * Such a connection acts with the operator's authority rather than the owner's, so the gateway
   * lets owners create it only when the operator opted in (`QUARRY_ALLOW_HOST_FILES` for
   * `'files'`, `QUARRY_ALLOW_HOST_IDENTITY` for `'credentials'`; connections the operator makes,
   * like the demo's, are not affected). Called once when an owner creates a connection; keep it
   * a pure function of the config. Drivers must still check at run time, through
   * {@link DriverContext.destinations} (`checkFile`, `checkIdentity`).
   *
   * @example
   * hostAccess: () => ['files'],                                          // always (SQLite)
   * hostAccess: (config) => (config.useDefaultCredentials ? ['credentials'] : []),
   */
  hostAccess?(config: Config): readonly HostAccess[];
  /**
   * Every host, URL, unix socket, file and ambient identity a connection with this (validated)
   * config would use, so the gateway can refuse a connection at creation (403) rather than at
   * its first query. Must list everything the driver may contact, including hosts hidden in
   * URL parameters (libpq's `?host=`). Declaring is not enforcing: the driver must also pass
   * every connect through {@link DriverContext.destinations}.
   *
   * @example
   * destinations: (config) => [{ kind: 'host', host: config.host, port: config.port }],
   */
  destinations?(config: Config): readonly Destination[];
}
