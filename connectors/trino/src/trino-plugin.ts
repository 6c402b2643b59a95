// The Trino connector plugin: config schema, dialect, pool defaults, and a driver whose sessions
// share one pair of guarded keep-alive HTTP agents (the connector's connections to the coordinator).
import {
  type ConnectorDriver,
  type ConnectorPlugin,
  createGuardedAgents,
  type DriverContext,
} from '@quarry/sdk-connector';
import { TRINO_MAX_RESPONSE_BYTES, trinoConnectionOptions } from './trino-client.js';
import { resolveTrinoSettings, type TrinoConfig, trinoConfigSchema } from './trino-config.js';
import { trinoDialect } from './trino-dialect.js';
import { mapTrinoError } from './trino-errors.js';
import { createTrinoSession, type TrinoSessionContext } from './trino-session.js';

/** Creates the driver for one validated config: settings and agents are made once, here. */
function createTrinoDriver(config: TrinoConfig, context: DriverContext): ConnectorDriver {
  const settings = resolveTrinoSettings(config);
  // Every socket to the configured host only, at an address the destination guard checked (on
  // each new socket: keep-alive sockets are reused, new ones are checked again).
  const agents = createGuardedAgents(context.destinations, {
    hosts: [new URL(settings.server).hostname],
    maxResponseBytes: TRINO_MAX_RESPONSE_BYTES,
  });
  const sessionContext: TrinoSessionContext = {
    connection: trinoConnectionOptions(settings),
    agents,
    origin: new URL(settings.server).origin,
    logger: context.logger,
  };
  return {
    async createSession() {
      const session = createTrinoSession(sessionContext);
      await session.open(settings.connectTimeoutMs);
      return session;
    },
    async destroy() {
      agents.destroy();
    },
  };
}

/** The `trino` connector plugin (Trino 418+ and Starburst; values bound with EXECUTE IMMEDIATE … USING). */
export const trinoPlugin: ConnectorPlugin<TrinoConfig> = {
  type: 'trino',
  displayName: 'Trino',
  configSchema: trinoConfigSchema,
  dialect: trinoDialect,
  // Sessions are HTTP slots, not server connections: the cap is on concurrent queries.
  defaultPool: { max: 8 },
  createDriver: createTrinoDriver,
  mapError: mapTrinoError,
  destinations: (config) => [{ kind: 'url', url: config.server }],
};
