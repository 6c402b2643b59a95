// The options a connector's test passes to describeConnectorConformance: how to reach the engine,
// how to build the fixture, the engine-specific SQL the kit runs, and optional server-side probes.
import type { ColumnType, ConnectorLogger, ConnectorPlugin } from '../connector-plugin.js';
import type { PoolOptions } from '../connector-pool.js';
import type { ScalarParamType } from '../param-types.js';
import type { ConformanceColumnName } from './conformance-fixture.js';

/**
 * Engine-specific SQL templates. Every template uses named `:params` (the kit parses them with
 * `parseTemplate` and the plugin's dialect) and receives the fixture table's name as written.
 */
export interface ConformanceSql {
  /**
   * A template selecting the bound param `:v` as a single column named `v` (one row), e.g.
   * `SELECT :v AS v`, or with a cast where the engine needs one to report the type
   * (`SELECT CAST(:v AS DATETIME(3)) AS v`). `array` asks for an array param of `type`; return
   * `undefined` when the engine cannot select an array value (arrays are then proven by `inList`).
   */
  echo(type: ScalarParamType, array: boolean): string | undefined;
  /**
   * A query that runs for at least 10 s unless cancelled, containing `marker` (in a comment, e.g.
   * `SELECT pg_sleep(10) /* marker *\/`) so `runningQueries` can find it on the server.
   */
  slow(marker: string): string;
  /**
   * Rows of `table` whose `id` is in the integer array param `:ids`, selecting at least `id`,
   * ordered by `id`: `… WHERE id = ANY(:ids) ORDER BY id` or `… WHERE id IN (:ids) ORDER BY id`.
   */
  inList(table: string): string;
  /** Row count of `table` as one row with one column (default: the kit counts the rows of `all`). */
  count?(table: string): string;
  /**
   * Every fixture column in table order, ordered by id (default
   * `SELECT id, name, amount, big, ratio, flag, day, ts, note FROM <table> ORDER BY id`).
   */
  all?(table: string): string;
  /** `id`s of rows whose `name` equals the string param `:name` (default `SELECT id FROM <table> WHERE name = :name ORDER BY id`). */
  byName?(table: string): string;
  /**
   * `id`s of rows passing the typed-NULL idiom on `column` with the param `:x` of `type`
   * (default `SELECT id FROM <table> WHERE (:x IS NULL OR <column> = :x) ORDER BY id`).
   */
  nullFilter?(table: string, column: ConformanceColumnName, type: ScalarParamType): string;
  /**
   * Statements that must fail on a read-only connector (default: INSERT, UPDATE, DELETE,
   * TRUNCATE, CREATE TABLE, DROP TABLE on `table`, and a stacked `SELECT 1; DELETE FROM …`).
   */
  writes?(table: string): readonly string[];
}

/** The kit's checks, by name (see describeConnectorConformance). */
export type ConformanceCheck =
  | 'echo'
  | 'typedNulls'
  | 'arrays'
  | 'arrayEcho'
  | 'hostileStrings'
  | 'nul'
  | 'readOnly'
  | 'readOnlyRuntime'
  | 'timeout'
  | 'maxRows'
  | 'maxResultBytes'
  | 'columnTypes'
  | 'concurrency'
  | 'killSessions'
  | 'close'
  | 'unreachable'
  | 'destinations'
  | 'describe';

/**
 * Where a hostile owner may try to point a connector: the gateway's own network (`loopback`,
 * `private`), cloud metadata (`link-local`), the host's unix sockets, or its files.
 */
export type ForbiddenDestinationKind = 'loopback' | 'link-local' | 'private' | 'unix-socket' | 'host-file';

/**
 * The warehouse named by a host name, for the `destinations` check's rebinding part (see
 * {@link ConformanceOptions.namedWarehouse}).
 */
export interface NamedWarehouse {
  /**
   * The name: one no DNS knows (e.g. `warehouse.quarry.invalid`) where the plugin's schema
   * accepts it, else `localhost` (for a schema that allows plain http on loopback names only).
   */
  readonly host: string;
  /** The IP address the warehouse listens on: the only answer the kit's guard gives for `host`. */
  readonly address: string;
  /** A working config (as `config` gives) that names the warehouse `host` wherever it names a host. */
  readonly config: unknown;
}

/** Options of {@link describeConnectorConformance}. */
export interface ConformanceOptions<Config = unknown> {
  /** Suite title, e.g. `postgres`. */
  readonly name: string;
  /** The plugin under test. */
  readonly plugin: ConnectorPlugin<Config>;
  /** Raw config for `createConnector`; called once, after `setup` has built the fixture. */
  readonly config: () => unknown | Promise<unknown>;
  /**
   * A config whose warehouse cannot be reached (e.g. a port nothing listens on), including a
   * password when the engine has one: `test()` must fail with CONNECT_FAILED within 5 s and the
   * message must not contain any secret. Omit for engines that cannot be unreachable.
   */
  readonly unreachableConfig?: () => unknown | Promise<unknown>;
  /**
   * A config pointing the connector at `kind` (see {@link ForbiddenDestinationKind}), or
   * `undefined` when no config of this plugin can address it (MySQL's schema has no socket
   * field). The `destinations` check proves each is refused, by the plugin's declared
   * `destinations` and by the driver itself, when the gateway's policy does not allow it; that a
   * `loopback` or `host-file` config is not refused when the policy allows it (so the refusal
   * is the policy's, not a dead address); and that `link-local` (use 169.254.169.254) is refused
   * even then. Give at least one kind: a warehouse connector that reaches anything can be
   * pointed somewhere.
   */
  readonly forbiddenDestinations?: (kind: ForbiddenDestinationKind) => unknown;
  /**
   * The warehouse named by a host name, for the `destinations` check's rebinding part: the kit's
   * destination guard resolves `host` to `address`, and while the check runs the system resolver
   * (`dns.lookup`) fails for `host` and records every time it is asked. The connector must open
   * a session and run a query without ever asking it — a driver that resolves the name again for
   * itself could be sent elsewhere by a DNS answer that changed since the guard's check (DNS
   * rebinding) — and a new connector must be refused once the guard's answer for `host` is cloud
   * metadata. Give it for every connector that reaches a network host. (A driver resolving names
   * by other means than `dns.lookup`, such as undici's fetch, is not seen by the trap; it still
   * fails the check when `host` is a name no DNS knows.)
   */
  readonly namedWarehouse?: () => NamedWarehouse | Promise<NamedWarehouse>;
  /** Pool overrides; the kit defaults to `{ max: 3 }` so it can prove more concurrent queries than `max`. */
  readonly pool?: Partial<PoolOptions>;
  /**
   * Resolves `true` when the engine is reachable, else a reason. With a reason the suite is
   * skipped with a loud warning, except when `process.env.CI === 'true'`, where it fails.
   */
  readonly available?: () => Promise<true | string>;
  /**
   * Creates the table named `table` with CONFORMANCE_COLUMNS and CONFORMANCE_ROWS using write
   * access of its own (see `conformanceFixtureSql`). Called once before the connector is created.
   */
  readonly setup: (table: string) => Promise<void>;
  /** Drops the fixture table; called once after the connector is closed. */
  readonly teardown?: (table: string) => Promise<void>;
  /** The fixture table name (default `quarry_conf_<name>_<random>`, unique per run). */
  readonly table?: string;
  /** Engine-specific SQL; see {@link ConformanceSql}. */
  readonly sql: ConformanceSql;
  /**
   * How many statements whose text contains `marker` are still running on the server, excluding
   * the probe itself (pg_stat_activity, information_schema.PROCESSLIST). Omit for embedded
   * engines: the kit then only proves the timed-out query settled and the connector recovered.
   */
  readonly runningQueries?: (marker: string) => Promise<number>;
  /** Terminates this connector's sessions from the server side. Omit when impossible (embedded). */
  readonly killSessions?: () => Promise<void>;
  /**
   * Logical types the engine reports for fixture columns where they differ from
   * CONFORMANCE_COLUMNS (e.g. `{ flag: 'integer' }` if booleans are TINYINT and you document it).
   * Expected values follow the type (a boolean reported as integer must be 1/0).
   */
  readonly columnTypes?: Partial<Record<ConformanceColumnName, ColumnType>>;
  /**
   * Logical types `echo` reports per param type where they differ from the defaults (integer →
   * integer, number → number, string/enum → string, boolean → boolean, date → date, timestamp →
   * timestamp; arrays → array).
   */
  readonly echoTypes?: Partial<Record<ScalarParamType, ColumnType>>;
  /**
   * What `arrayEcho` expects back for a NULL array param: `null` (default), or `empty` (`[]`) for
   * engines whose results cannot hold a NULL array (BigQuery returns every NULL array as `[]`).
   */
  readonly nullArrays?: 'null' | 'empty';
  /** The `timeoutMs` given to the `slow` query (default 1,000). */
  readonly slowTimeoutMs?: number;
  /**
   * Checks that cannot apply to this plugin, each with the reason; they register no test, and
   * the reason is printed when the suite is collected. A warehouse connector claiming conformance lists none:
   * this exists for test doubles with a tiny SQL subset (the SDK's memory plugin). Engines without
   * server sessions omit `killSessions`/`runningQueries` instead.
   */
  readonly notApplicable?: Partial<Record<ConformanceCheck, string>>;
  /**
   * The plugin's sessions implement the optional `describe` (checking a statement without
   * running it): the `describe` check then proves it. Default false: the check does not apply.
   */
  readonly describes?: boolean;
  /** Logger for the connectors the kit creates (default: silent). */
  readonly logger?: ConnectorLogger;
}
