// The Postgres connector plugin: config schema, dialect, pool defaults, and a driver that opens
// one read-only pg.Client per session, to the address the destination guard checked. Everything
// else (pooling, timeouts, row caps, JSON values) is the SDK runtime's. The session module (and
// pg with it) is imported on a connection's first session: a gateway with no PostgreSQL
// connection never loads it.
import type { ConnectorDriver, ConnectorPlugin, DriverContext } from '@quarry/sdk-connector';
import { type PostgresConfig, postgresConfigSchema, resolvePostgresSettings } from './postgres-config.js';
import { postgresDialect } from './postgres-dialect.js';
import { mapPostgresError } from './postgres-errors.js';

/** Creates the driver for one validated config: settings are resolved once, here. */
function createPostgresDriver(config: PostgresConfig, context: DriverContext): ConnectorDriver {
  const settings = resolvePostgresSettings(config);
  return {
    createSession: async () =>
      (await import('./postgres-session.js')).createPostgresSession(
        settings,
        context.logger,
        context.destinations,
      ),
  };
}

/** The `postgres` connector plugin (PostgreSQL 12+, and wire-compatible engines that honour startup options). */
export const postgresPlugin: ConnectorPlugin<PostgresConfig> = {
  type: 'postgres',
  displayName: 'PostgreSQL',
  configSchema: postgresConfigSchema,
  dialect: postgresDialect,
  createDriver: createPostgresDriver,
  mapError: mapPostgresError,
  // The host the driver connects to, wherever the config hid it (a URL's `?host=` included).
  destinations: (config) => {
    const { host, port } = resolvePostgresSettings(config);
    return [host.startsWith('/') ? { kind: 'socket', path: host } : { kind: 'host', host, port }];
  },
};
