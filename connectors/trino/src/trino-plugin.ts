// The Trino connector plugin: config schema, dialect, pool defaults, and a driver whose sessions
// share one pair of keep-alive HTTP agents (the connector's connections to the coordinator).
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { ConnectorDriver, ConnectorPlugin, DriverContext } from '@quarry/sdk-connector';
import { trinoConnectionOptions } from './trino-client.js';
import { resolveTrinoSettings, type TrinoConfig, trinoConfigSchema } from './trino-config.js';
import { trinoDialect } from './trino-dialect.js';
import { mapTrinoError } from './trino-errors.js';
import { createTrinoSession, type TrinoSessionContext } from './trino-session.js';

/** Creates the driver for one validated config: settings and agents are made once, here. */
function createTrinoDriver(config: TrinoConfig, context: DriverContext): ConnectorDriver {
  const settings = resolveTrinoSettings(config);
  const agents = {
    http: new HttpAgent({ keepAlive: true }),
    https: new HttpsAgent({ keepAlive: true }),
  };
  const sessionContext: TrinoSessionContext = {
    connection: trinoConnectionOptions(settings),
    agents,
    logger: context.logger,
  };
  return {
    async createSession() {
      const session = createTrinoSession(sessionContext);
      await session.open(settings.connectTimeoutMs);
      return session;
    },
    async destroy() {
      agents.http.destroy();
      agents.https.destroy();
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
};
