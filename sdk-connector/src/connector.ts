// Public shape of a running connector: what the gateway (and the conformance kit) use.
// Implementation: create-connector.ts.
import type {
  ColumnInfo,
  ConnectorLogger,
  ResourceCaps,
  SqlDialect,
  StatementDescription,
} from './connector-plugin.js';
import type { PoolOptions, PoolStats } from './connector-pool.js';
import type { HostResolver } from './destination-guard.js';
import type { DestinationPolicy } from './destination-policy.js';
import type { ParamValues } from './param-types.js';
import type { SqlTemplate } from './sql-template.js';

/** A JSON value as it appears in results. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [k: string]: JsonValue };

/** One query through a connector. */
export interface QueryRequest {
  /** The parsed analytic template (see parseTemplate); parse once, run many times. */
  readonly template: SqlTemplate;
  /** Validated values (see validateParams) for every name the template uses. */
  readonly params: ParamValues;
  /** Time limit; on expiry the query is cancelled on the server and QUERY_TIMEOUT thrown (default 30,000). */
  readonly timeoutMs?: number;
  /** Rows past this are cut and `truncated` is true (default 10,000). */
  readonly maxRows?: number;
  /**
   * The owner's cost guard for engines that bill by bytes scanned (BigQuery): a query that would
   * bill more fails instead of running. Engines that do not bill by bytes ignore it. A positive
   * safe integer.
   */
  readonly maxBytesBilled?: number;
  /**
   * The result's size bound in bytes, counted as the rows' JSON plus 64 bytes per row (so a
   * million narrow rows weigh what they take in memory, not just their few bytes of JSON): past
   * it the query fails with RESULT_TOO_LARGE and no rows are returned. Plugins that see rows as
   * they arrive stop keeping them (ExecuteOptions.maxResultBytes); the runtime counts the rows
   * it is handed either way. A positive safe integer; unset, no bound.
   */
  readonly maxResultBytes?: number;
  /** Aborting cancels the query on the server and throws QUERY_ABORTED. */
  readonly signal?: AbortSignal;
}

/** A statement to check without running it (see {@link Connector.describe}). */
export interface DescribeRequest {
  /** The parsed analytic template. */
  readonly template: SqlTemplate;
  /** A value for every name the template uses; typed NULLs (`value: null`) are what a check needs. */
  readonly params: ParamValues;
  /** Time limit (default: the connector's default query timeout). */
  readonly timeoutMs?: number;
  /** Aborting stops the check with QUERY_ABORTED. */
  readonly signal?: AbortSignal;
}

/** A finished query: JSON-safe rows keyed by column name. */
export interface QueryResult {
  readonly columns: readonly ColumnInfo[];
  readonly rows: readonly Readonly<Record<string, JsonValue>>[];
  readonly rowCount: number;
  /** True exactly when the query produced more than `maxRows` rows. */
  readonly truncated: boolean;
  /** Wall time from acquiring a session to the last row, in milliseconds. */
  readonly durationMs: number;
}

/** A row as the runtime hands it: JSON-safe values keyed by column name. */
export type ResultRow = Readonly<Record<string, JsonValue>>;

/** Where {@link Connector.stream} hands a result. */
export interface RowSink {
  /** The result's columns, exactly once, before any rows. */
  columns(columns: readonly ColumnInfo[]): void;
  /**
   * A batch of JSON-safe rows. A returned promise holds the warehouse until it settles
   * (backpressure); a throw or rejection stops the query, which fails with that very error.
   */
  rows(batch: readonly ResultRow[]): void | Promise<void>;
}

/** A streamed query's outcome: everything but the rows, which went to the sink. */
export interface StreamSummary {
  readonly columns: readonly ColumnInfo[];
  readonly rowCount: number;
  /** True exactly when the query produced more than `maxRows` rows. */
  readonly truncated: boolean;
  readonly durationMs: number;
}

/** Options for createConnector. */
export interface ConnectorOptions {
  readonly logger?: ConnectorLogger;
  /** Overrides the plugin's pool defaults. */
  readonly pool?: Partial<PoolOptions>;
  /** Defaults for requests that do not say. */
  readonly defaultTimeoutMs?: number;
  readonly defaultMaxRows?: number;
  /**
   * What the connection may reach. Default {@link OPERATOR_TRUSTED} (everything but cloud
   * metadata): the caller is trusted. A gateway passes a narrower policy for owners' connections.
   */
  readonly destinations?: DestinationPolicy;
  /** Resolves host names for the destination guard (default: the system resolver). */
  readonly resolve?: HostResolver;
  /** Caps for engines that run in this process (see {@link ResourceCaps}). */
  readonly resources?: ResourceCaps;
}

/** A live connection to one warehouse: pooled, read-only, with timeouts and row caps. */
export interface Connector {
  readonly type: string;
  readonly dialect: SqlDialect;
  /** Runs a query. Throws ConnectorError only. */
  query(request: QueryRequest): Promise<QueryResult>;
  /**
   * Runs a query and hands its rows to `sink` in batches instead of holding them: with a session
   * that streams (Postgres, DuckDB), a result larger than memory flows through at the sink's
   * pace; other sessions' results are fetched whole (bounded by `maxResultBytes`) and handed
   * over in batches. `maxResultBytes` bounds only what a non-streaming session holds. Throws
   * ConnectorError, or the sink's own error.
   */
  stream(request: QueryRequest, sink: RowSink): Promise<StreamSummary>;
  /**
   * Checks a statement against the warehouse without running it: the columns it would produce
   * and whether it only reads. Resolves `undefined` when the plugin's sessions cannot describe
   * (the optional {@link ConnectorSession.describe}). Throws ConnectorError only: QUERY_FAILED
   * (with the warehouse's message) for SQL the warehouse refuses, such as an unknown table.
   */
  describe?(request: DescribeRequest): Promise<StatementDescription | undefined>;
  /** Opens (or borrows) a session and validates it; throws CONNECT_FAILED when unreachable. */
  test(): Promise<void>;
  stats(): PoolStats;
  /** Waits for running queries (up to `graceMs`), then closes every session. Idempotent. */
  close(graceMs?: number): Promise<void>;
}
