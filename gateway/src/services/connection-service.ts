// Owner connections: validated by the connector's own config schema, secrets split out and
// sealed by the store, every destination the plugin declares checked by the SDK's destination
// guard (private networks, host files and host identity each need their own operator opt-in;
// cloud metadata never), and one live pooled Connector per connection, created on first use and
// closed when the connection changes on any instance. The connector's driver gets the same guard
// and checks again at every session it opens, connecting to the checked address. A saved
// connection that can no longer be opened (its file deleted, its host gone, its connector
// unregistered) is the source being unavailable (503), never the caller's mistake.
import {
  type Connector,
  type ConnectorError,
  type ConnectorLogger,
  type ConnectorPlugin,
  checkDestinations,
  createConnector,
  createDestinationGuard,
  type DescribeRequest,
  type Destination,
  type DestinationPolicy,
  type HostResolver,
  isConnectorError,
  isDestinationRefusal,
  OPERATOR_TRUSTED,
  parseConnectorConfig,
  type ResourceCaps,
  type StatementDescription,
  secretFieldsOf,
} from '@quarry/sdk-connector';
import type { PluginRegistry } from '../connections/plugin-registry.js';
import { ApiError } from '../errors/api-error.js';
import type { Connection, ConnectionRepository } from '../store/connection-repository.js';
import { secretStrings, warehouseMessageOf } from './warehouse-message.js';

export interface NewConnectionRequest {
  readonly name: string;
  readonly type: string;
  readonly config: Readonly<Record<string, unknown>>;
}

export interface CreateConnectionOptions {
  /**
   * Open a session with the new config before saving it (default true): a warehouse that
   * cannot be reached, or refuses the credentials, is a 400 with its own (redacted) words.
   */
  readonly test?: boolean;
}

/** A change to a connection: the config fields given replace the saved ones; `null` removes one. */
export interface ConnectionChange {
  readonly config: Readonly<Record<string, unknown>>;
}

export interface ConnectionService {
  create(
    accountId: string,
    request: NewConnectionRequest,
    options?: CreateConnectionOptions,
  ): Promise<Connection>;
  list(accountId: string): Promise<readonly Connection[]>;
  get(accountId: string, id: string): Promise<Connection>;
  findByName(accountId: string, name: string): Promise<Connection | null>;
  /**
   * Changes a connection's config (secrets included) in place: the merged config passes the same
   * checks as a new one (schema, host access, destinations) and, unless `test` is false, opens a
   * session before it is saved. Once saved, the pool is closed here (its calls in flight finish
   * on the old config) and, through the change log, on every other instance.
   */
  update(
    accountId: string,
    id: string,
    change: ConnectionChange,
    options?: CreateConnectionOptions,
  ): Promise<Connection>;
  delete(accountId: string, id: string): Promise<void>;
  /**
   * Opens a session to the warehouse; throws a 503 SOURCE_UNAVAILABLE ApiError carrying the
   * warehouse's own (redacted) words when it cannot, or naming the problems when the saved
   * config no longer validates (a deleted file).
   */
  test(accountId: string, id: string): Promise<{ readonly latency_ms: number }>;
  /**
   * Checks a statement on one of the owner's connections without running it (a fresh connector,
   * closed after); undefined when its connector cannot describe. A warehouse that cannot be
   * reached is a 503 with its words; a refused statement is the connector's QUERY_FAILED.
   */
  describe(
    accountId: string,
    connectionId: string,
    request: DescribeRequest,
  ): Promise<StatementDescription | undefined>;
  /**
   * The live connector of a connection (pooled; created on first use). A connection that cannot
   * be opened any more is a 503 SOURCE_UNAVAILABLE ApiError, whose message says nothing of the
   * owner's config (callers read it); the reason is logged.
   */
  connectorFor(accountId: string, connectionId: string): Promise<Connector>;
  /** Closes and forgets the connector of a connection (change feed, delete). */
  evict(connectionId: string): Promise<void>;
  /** Pool counters of every live connector, for /metrics. */
  pools(): { connection: string; type: string; connector: Connector }[];
  close(graceMs?: number): Promise<void>;
}

export interface ConnectionServiceOptions {
  readonly repository: ConnectionRepository;
  readonly plugins: PluginRegistry;
  /** What owners' connections may reach (GatewayConfig.destinations). */
  readonly destinations: DestinationPolicy;
  readonly logger: ConnectorLogger;
  /** Resolves host names for the destination guard (default: the system resolver). */
  readonly resolve?: HostResolver;
  /**
   * Connections the operator made (the demo's DuckDB file, written by the gateway itself): they
   * open with OPERATOR_TRUSTED and no resource caps. Everything else is an owner's.
   */
  readonly isOperatorConnection?: (connection: Connection) => boolean;
  /**
   * Live pools kept at once (QUARRY_MAX_LIVE_POOLS, default 200): past it the least recently
   * used one is closed (its calls in flight finish first), so strangers' connections cannot
   * grow the gateway's sockets and memory without end.
   */
  readonly maxLivePools?: number;
  /** Opening one warehouse session may take this long at most (QUARRY_WAREHOUSE_CONNECT_TIMEOUT_MS). */
  readonly connectTimeoutMs?: number;
  /**
   * Awaited before a connector is opened for `connection` (not on calls that find it open): the
   * start-up work its warehouse needs (the demo file being prepared), so the calls made meanwhile
   * wait for it instead of failing. Resolves (never rejects) when the work is done or the wait's
   * bound has passed.
   */
  readonly beforeOpen?: (connection: Connection) => Promise<void>;
}

/**
 * What an owner's embedded engine (DuckDB) may take of the gateway process: two threads and
 * 1 GiB, whatever its config asks (DuckDB's own default is every core and 80% of the RAM).
 */
export const OWNER_RESOURCE_CAPS: ResourceCaps = { maxThreads: 2, maxMemoryBytes: 1024 * 1024 * 1024 };

/** Seconds a caller should wait before retrying a connection that could not be opened. */
const UNAVAILABLE_RETRY_AFTER_S = 5;

/** How the owner API words each kind of host access it refuses. */
const HOST_ACCESS_WORDS: Readonly<Record<string, string>> = {
  files: "read the gateway's own files",
  credentials: "use the gateway's own credentials",
};

/**
 * What of the gateway host's own a connection would use, by the plugin's `hostAccess` hook. An
 * answer of another shape (a plugin written in JavaScript) counts as host access: fail closed.
 */
function hostAccessOf(plugin: ConnectorPlugin, config: unknown): readonly string[] {
  const access: unknown = plugin.hostAccess?.(config);
  if (access === undefined || access === null || access === false) return [];
  return Array.isArray(access) ? access.map(String) : ['unknown'];
}

/** Config fields whose values name a network host. */
const HOST_FIELDS = ['host', 'hostname', 'server'];

/**
 * What a connection would reach: the plugin's own declaration, or for a plugin that declares
 * nothing, a best guess from its fields (hosts, and http(s) URLs by their host).
 */
function destinationsOf(plugin: ConnectorPlugin, config: Readonly<Record<string, unknown>>): Destination[] {
  if (plugin.destinations !== undefined) return [...plugin.destinations(config)];
  const found: Destination[] = [];
  for (const [field, value] of Object.entries(config)) {
    if (typeof value !== 'string') continue;
    if (/^https?:\/\//i.test(value)) found.push({ kind: 'url', url: value });
    else if (HOST_FIELDS.includes(field)) found.push({ kind: 'host', host: value, port: 0 });
  }
  return found;
}

/** A connector failure as its owner sees it: what the warehouse said, secrets removed. */
function unreachableForOwner(error: ConnectorError, secrets: readonly string[]): ApiError {
  const said = warehouseMessageOf(error, secrets);
  return new ApiError('SOURCE_UNAVAILABLE', `The warehouse could not be reached: ${said ?? error.message}.`, {
    retryAfter: UNAVAILABLE_RETRY_AFTER_S,
    cause: error,
    details: [{ message: said ?? error.message }],
  });
}

/** The strings of a config's secret fields (what must never appear in an owner's message). */
function secretsOf(plugin: ConnectorPlugin, config: Readonly<Record<string, unknown>>): string[] {
  const fields = new Set(secretFieldsOf(plugin.configSchema).map((p) => p.split('.')[0] as string));
  return secretStrings(Object.entries(config).flatMap(([k, v]) => (fields.has(k) ? [v] : [])));
}

export function createConnectionService(options: ConnectionServiceOptions): ConnectionService {
  const { repository, plugins, logger } = options;
  const resolve = options.resolve === undefined ? {} : { resolve: options.resolve };
  const ownerGuard = createDestinationGuard(options.destinations, resolve);
  const operatorGuard = createDestinationGuard(OPERATOR_TRUSTED, resolve);
  // Opening a connector is async: concurrent first calls share one promise. `ready` holds the
  // settled ones, for metrics.
  const maxLivePools = Math.max(1, options.maxLivePools ?? 200);
  const live = new Map<string, Promise<Connector>>();
  const ready = new Map<string, Connector>();

  function pluginFor(type: string): ConnectorPlugin {
    const plugin = plugins.get(type);
    if (!plugin) {
      throw new ApiError('INVALID_REQUEST', `Unknown connector type "${type}".`, {
        details: [{ field: 'type', message: `one of: ${plugins.types().join(', ')}` }],
      });
    }
    return plugin;
  }

  /**
   * Refuses, at creation through the owner API, a connection that would use the gateway host's
   * own files or credentials (the plugin's `hostAccess`), unless the operator opted in with
   * QUARRY_ALLOW_HOST_FILES / QUARRY_ALLOW_HOST_IDENTITY. Operator-made connections (the demo)
   * are created through the store directly and never pass here.
   */
  function checkHostAccess(plugin: ConnectorPlugin, config: unknown, raw = false): void {
    const policy = options.destinations;
    let declared: readonly string[];
    try {
      declared = hostAccessOf(plugin, config);
    } catch (error) {
      // A hook that needs a validated config answers after validation.
      if (raw) return;
      throw error;
    }
    const access = declared.filter(
      (a) => !((a === 'files' && policy.hostFiles) || (a === 'credentials' && policy.hostIdentity)),
    );
    if (access.length === 0) return;
    if (access.every((a) => a === 'files')) {
      throw new ApiError(
        'FORBIDDEN',
        `Connections of type "${plugin.type}" ${HOST_ACCESS_WORDS.files}; the operator has not allowed them.`,
      );
    }
    const words = new Set(access.map((a) => HOST_ACCESS_WORDS[a] ?? "use the gateway host's own resources"));
    const hint = access.includes('credentials') ? ' Give the connection credentials of its own.' : '';
    throw new ApiError(
      'FORBIDDEN',
      `This ${plugin.type} connection would ${[...words].join(' and ')}; the operator has not allowed that.${hint}`,
    );
  }

  /**
   * Checks every destination of a connection with the guard. Run at creation (403, or 400 for a
   * name that does not resolve) and again whenever a connector opens (a 503 there); the driver
   * checks once more at each session it opens and connects to the address it checked.
   */
  async function checkHosts(
    plugin: ConnectorPlugin,
    config: Readonly<Record<string, unknown>>,
    trusted = false,
  ): Promise<void> {
    await checkDestinations(destinationsOf(plugin, config), trusted ? operatorGuard : ownerGuard);
  }

  async function fullConfig(accountId: string, connection: Connection): Promise<Record<string, unknown>> {
    const secrets =
      connection.secretFields.length > 0 ? await repository.readSecrets(accountId, connection.id) : {};
    const config: Record<string, unknown> = { ...connection.config };
    for (const [field, value] of Object.entries(secrets)) config[field] = JSON.parse(value) as unknown;
    return config;
  }

  /**
   * Opens a saved connection. The connection was valid when it was created, so failing now is
   * the source being unavailable, not a bad request: an unregistered type, a host that no longer
   * resolves, a config that no longer validates (its file was deleted). Those become 503
   * SOURCE_UNAVAILABLE; a destination the settings now refuse (a host resolving somewhere
   * private) is 403, since retrying changes nothing. The owner (`forOwner`) is told why, callers
   * of an analytic are not, and the reason is logged either way. Not cached: a restored file
   * works on the next call.
   */
  async function open(accountId: string, connection: Connection, forOwner: boolean): Promise<Connector> {
    const unavailable = (reason: string, cause: unknown, details: readonly { message: string }[] = []) => {
      logger.warn(
        { err: cause, connection: connection.id, type: connection.type, reason },
        'a saved connection cannot be opened',
      );
      return new ApiError(
        'SOURCE_UNAVAILABLE',
        forOwner
          ? `The connection cannot be opened: ${reason}.`
          : "The analytic's data source is unavailable right now.",
        { retryAfter: UNAVAILABLE_RETRY_AFTER_S, cause, ...(forOwner ? { details } : {}) },
      );
    };
    const plugin = plugins.get(connection.type);
    if (!plugin) {
      throw unavailable(
        `its connector type "${connection.type}" is not registered on this gateway`,
        undefined,
      );
    }
    if (options.beforeOpen !== undefined) await options.beforeOpen(connection);
    const config = await fullConfig(accountId, connection);
    const trusted = options.isOperatorConnection?.(connection) ?? false;
    try {
      await checkHosts(plugin, config, trusted);
      return await createConnector(plugin, config, {
        logger,
        ...(options.connectTimeoutMs === undefined
          ? {}
          : { pool: { connectTimeoutMs: options.connectTimeoutMs } }),
        destinations: trusted ? OPERATOR_TRUSTED : options.destinations,
        ...resolve,
        ...(trusted ? {} : { resources: OWNER_RESOURCE_CAPS }),
      });
    } catch (error) {
      if (isConnectorError(error, 'CONFIG_INVALID')) {
        throw unavailable('its saved config is no longer valid', error, error.details);
      }
      // A destination the gateway's settings refuse (a host now private, a switch turned off
      // since it was saved): retrying changes nothing, so 403, naming the setting to the owner.
      if (isDestinationRefusal(error)) {
        logger.warn(
          { err: error, connection: connection.id, type: connection.type },
          'a saved connection is refused by the destination settings',
        );
        throw new ApiError(
          'FORBIDDEN',
          forOwner
            ? `The connection cannot be opened: ${error.message}.`
            : "The analytic's data source is not reachable from this gateway.",
        );
      }
      if (isConnectorError(error, 'CONNECT_FAILED')) throw unavailable(error.message, error);
      throw error;
    }
  }

  /**
   * Opens one session with a connection's config before it is saved. A warehouse that cannot be
   * reached or refuses the credentials is the owner's config not working yet: 400, in the
   * warehouse's own words (secrets removed), saying how to save it anyway.
   */
  async function testNew(plugin: ConnectorPlugin, config: Readonly<Record<string, unknown>>): Promise<void> {
    let connector: Connector | undefined;
    try {
      connector = await createConnector(plugin, config, {
        logger,
        destinations: options.destinations,
        ...resolve,
        resources: OWNER_RESOURCE_CAPS,
      });
      await connector.test();
    } catch (error) {
      if (!isConnectorError(error)) throw error;
      const said = warehouseMessageOf(error, secretsOf(plugin, config)) ?? error.message;
      throw new ApiError(
        'INVALID_REQUEST',
        `The connection was not saved: the warehouse could not be reached: ${said}. Fix the config, or save it untested with ?test=false.`,
        { details: [{ field: 'config', message: said }], cause: error },
      );
    } finally {
      await connector?.close();
    }
  }

  /** Opens a connector on `config` for its owner, runs `use`, and closes it. */
  async function withOwnerConnector<T>(
    accountId: string,
    connection: Connection,
    use: (connector: Connector) => Promise<T>,
  ): Promise<T> {
    const connector = await open(accountId, connection, true);
    try {
      return await use(connector);
    } catch (error) {
      if (isConnectorError(error, 'CONNECT_FAILED') || isConnectorError(error, 'POOL_EXHAUSTED')) {
        const plugin = plugins.get(connection.type);
        const config = plugin ? await fullConfig(accountId, connection) : {};
        throw unreachableForOwner(error, plugin ? secretsOf(plugin, config) : []);
      }
      throw error;
    } finally {
      await connector.close();
    }
  }

  /**
   * What a config must pass to be saved through the owner API, new or changed: its type's schema,
   * the host-access switches, the destination guard (403 for a refused destination, 400 for a
   * name that does not resolve) and, unless `test` is false, one session opened with it.
   */
  async function vet(
    plugin: ConnectorPlugin,
    config: Readonly<Record<string, unknown>>,
    vetOptions: CreateConnectionOptions,
  ): Promise<void> {
    // Asked once before validation too: a schema that inspects the host (SQLite's reads the
    // file's header) must not tell an owner without the switch which files exist.
    checkHostAccess(plugin, config, true);
    const parsed = parseConnectorConfig(plugin, config) as Record<string, unknown>;
    checkHostAccess(plugin, parsed);
    try {
      await checkHosts(plugin, parsed);
    } catch (error) {
      if (isDestinationRefusal(error)) {
        throw new ApiError('FORBIDDEN', `This connection is not allowed: ${error.message}.`, {
          details: [{ field: 'config.host', message: error.message }],
        });
      }
      if (isConnectorError(error, 'CONNECT_FAILED')) {
        throw new ApiError('INVALID_REQUEST', `The connection's ${error.message}.`, {
          details: [{ field: 'config.host', message: error.message }],
        });
      }
      throw error;
    }
    if (vetOptions.test !== false) await testNew(plugin, config);
  }

  /** A config as stored: the secret fields (sealed by the store) apart from the rest. */
  function split(plugin: ConnectorPlugin, whole: Readonly<Record<string, unknown>>) {
    const secretNames = new Set(secretFieldsOf(plugin.configSchema).map((p) => p.split('.')[0] as string));
    const config: Record<string, unknown> = {};
    const secrets: Record<string, string> = {};
    for (const [field, value] of Object.entries(whole)) {
      if (secretNames.has(field)) secrets[field] = JSON.stringify(value);
      else config[field] = value;
    }
    return { config, secrets };
  }

  const service: ConnectionService = {
    async create(accountId, request, createOptions = {}) {
      const plugin = pluginFor(request.type);
      await vet(plugin, request.config, createOptions);
      return repository.create({
        accountId,
        name: request.name,
        type: request.type,
        ...split(plugin, request.config),
      });
    },
    async update(accountId, id, change, updateOptions = {}) {
      const connection = await service.get(accountId, id);
      const plugin = pluginFor(connection.type);
      const merged = await fullConfig(accountId, connection);
      for (const [field, value] of Object.entries(change.config)) {
        if (value === null) delete merged[field];
        else merged[field] = value;
      }
      await vet(plugin, merged, updateOptions);
      const updated = await repository.update(accountId, id, split(plugin, merged));
      // After the swap: calls already holding the old pool finish on it (close drains them,
      // without the owner's answer waiting for that); the next call opens one on the new config.
      // Other instances hear it from the change log.
      void service.evict(id);
      return updated;
    },
    list: (accountId) => repository.list(accountId),
    async get(accountId, id) {
      const connection = await repository.get(accountId, id);
      if (!connection) throw new ApiError('NOT_FOUND', `No connection "${id}".`);
      return connection;
    },
    findByName: (accountId, name) => repository.findByName(accountId, name),
    async delete(accountId, id) {
      await repository.delete(accountId, id);
      await service.evict(id);
    },
    async test(accountId, id) {
      const connection = await service.get(accountId, id);
      const started = performance.now();
      await withOwnerConnector(accountId, connection, (connector) => connector.test());
      return { latency_ms: Math.round((performance.now() - started) * 10) / 10 };
    },
    async describe(accountId, connectionId, request) {
      const connection = await service.get(accountId, connectionId);
      return withOwnerConnector(accountId, connection, (connector) =>
        connector.describe === undefined ? Promise.resolve(undefined) : connector.describe(request),
      );
    },
    connectorFor(accountId, connectionId) {
      const existing = live.get(connectionId);
      if (existing) {
        // Most recently used last: the Map's order is the eviction order.
        live.delete(connectionId);
        live.set(connectionId, existing);
        return existing;
      }
      const connector = (async () => {
        const connection = await repository.get(accountId, connectionId);
        if (!connection) {
          // Deleted (by force, or between the catalog's load and now): no retry brings it back.
          throw new ApiError(
            'NOT_FOUND',
            "The analytic's connection was deleted; its owner must deploy it again.",
          );
        }
        return open(accountId, connection, false);
      })();
      live.set(connectionId, connector);
      if (live.size > maxLivePools) {
        const oldest = live.keys().next().value as string;
        void service.evict(oldest);
      }
      connector.then(
        (c) => {
          if (live.get(connectionId) === connector) ready.set(connectionId, c);
        },
        () => {
          if (live.get(connectionId) === connector) live.delete(connectionId);
        },
      );
      return connector;
    },
    async evict(connectionId) {
      const connector = live.get(connectionId);
      if (!connector) return;
      live.delete(connectionId);
      ready.delete(connectionId);
      try {
        await (await connector).close(5_000);
      } catch {
        // A connector that never opened has nothing to close.
      }
    },
    pools() {
      return [...ready].map(([connection, connector]) => ({ connection, type: connector.type, connector }));
    },
    async close(graceMs) {
      const connectors = [...live.values()];
      live.clear();
      ready.clear();
      await Promise.allSettled(connectors.map(async (c) => (await c).close(graceMs)));
    },
  };
  return service;
}
