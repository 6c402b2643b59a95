// Owner connections: validated by the connector's own config schema, secrets split out and
// sealed by the store, hosts checked against private ranges, and one live pooled Connector per
// connection, created on first use and closed when the connection changes on any instance.
import {
  type Connector,
  type ConnectorLogger,
  type ConnectorPlugin,
  createConnector,
  parseConnectorConfig,
  secretFieldsOf,
} from '@quarry/sdk-connector';
import type { PluginRegistry } from '../connections/plugin-registry.js';
import { ApiError } from '../http/api-error.js';
import { assertPublicHost } from '../security/private-address.js';
import type { Connection, ConnectionRepository } from '../store/connection-repository.js';

export interface NewConnectionRequest {
  readonly name: string;
  readonly type: string;
  readonly config: Readonly<Record<string, unknown>>;
}

export interface ConnectionService {
  create(accountId: string, request: NewConnectionRequest): Promise<Connection>;
  list(accountId: string): Promise<readonly Connection[]>;
  get(accountId: string, id: string): Promise<Connection>;
  findByName(accountId: string, name: string): Promise<Connection | null>;
  delete(accountId: string, id: string): Promise<void>;
  /** Opens a session to the warehouse; throws a ConnectorError (→ 503/400) when it cannot. */
  test(accountId: string, id: string): Promise<{ readonly latency_ms: number }>;
  /** The live connector of a connection (pooled; created on first use). */
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
  readonly allowPrivateHosts: boolean;
  readonly logger: ConnectorLogger;
  /** Connector types that read the gateway's own disk (need the same operator opt-in as private hosts). */
  readonly localTypes?: readonly string[];
}

/** Config fields whose values name a network host. */
const HOST_FIELDS = ['host', 'hostname', 'server'];

function hostsIn(config: Readonly<Record<string, unknown>>): string[] {
  const hosts: string[] = [];
  for (const [field, value] of Object.entries(config)) {
    if (typeof value !== 'string') continue;
    if (HOST_FIELDS.includes(field)) hosts.push(value);
    else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
      try {
        hosts.push(new URL(value).hostname);
      } catch {
        // Not a URL after all: the connector's own schema judges it.
      }
    }
  }
  return hosts;
}

export function createConnectionService(options: ConnectionServiceOptions): ConnectionService {
  const { repository, plugins, logger } = options;
  const localTypes = options.localTypes ?? ['duckdb'];
  // Opening a connector is async: concurrent first calls share one promise. `ready` holds the
  // settled ones, for metrics.
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
   * Refuses private/loopback/link-local hosts, and (at creation through the owner API) connector
   * types that read the gateway's own disk, unless the operator allows both; cloud metadata
   * endpoints are refused always. Rechecked when a connector opens, so a DNS name that
   * later resolves somewhere private is caught too. Operator-made connections (the demo) are
   * created through the store directly and never pass the local-type check.
   */
  async function checkHosts(
    type: string,
    config: Readonly<Record<string, unknown>>,
    creating: boolean,
  ): Promise<void> {
    if (creating && !options.allowPrivateHosts && localTypes.includes(type)) {
      throw new ApiError(
        'FORBIDDEN',
        `Connections of type "${type}" read the gateway's own files; the operator has not allowed them.`,
      );
    }
    for (const host of hostsIn(config)) {
      try {
        // Even an operator who allows private hosts never means the cloud metadata endpoints.
        await assertPublicHost(host, { allowPrivate: options.allowPrivateHosts });
      } catch (error) {
        throw new ApiError('FORBIDDEN', `Connections to ${(error as Error).message} are not allowed.`, {
          details: [{ field: 'config.host', message: (error as Error).message }],
        });
      }
    }
  }

  async function fullConfig(accountId: string, connection: Connection): Promise<Record<string, unknown>> {
    const secrets =
      connection.secretFields.length > 0 ? await repository.readSecrets(accountId, connection.id) : {};
    const config: Record<string, unknown> = { ...connection.config };
    for (const [field, value] of Object.entries(secrets)) config[field] = JSON.parse(value) as unknown;
    return config;
  }

  async function open(accountId: string, connection: Connection): Promise<Connector> {
    const plugin = pluginFor(connection.type);
    const config = await fullConfig(accountId, connection);
    await checkHosts(connection.type, config, false);
    return createConnector(plugin, config, { logger });
  }

  const service: ConnectionService = {
    async create(accountId, request) {
      const plugin = pluginFor(request.type);
      const parsed = parseConnectorConfig(plugin, request.config) as Record<string, unknown>;
      await checkHosts(request.type, parsed, true);
      const secretNames = new Set(secretFieldsOf(plugin.configSchema).map((p) => p.split('.')[0] as string));
      const config: Record<string, unknown> = {};
      const secrets: Record<string, string> = {};
      for (const [field, value] of Object.entries(request.config)) {
        if (secretNames.has(field)) secrets[field] = JSON.stringify(value);
        else config[field] = value;
      }
      return repository.create({ accountId, name: request.name, type: request.type, config, secrets });
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
      const connector = await open(accountId, connection);
      try {
        await connector.test();
      } finally {
        await connector.close();
      }
      return { latency_ms: Math.round((performance.now() - started) * 10) / 10 };
    },
    connectorFor(accountId, connectionId) {
      const existing = live.get(connectionId);
      if (existing) return existing;
      const connector = (async () => {
        const connection = await repository.get(accountId, connectionId);
        if (!connection) {
          throw new ApiError('SOURCE_UNAVAILABLE', "The analytic's connection no longer exists.", {
            retryAfter: 5,
          });
        }
        return open(accountId, connection);
      })();
      live.set(connectionId, connector);
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
