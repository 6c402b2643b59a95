// The Trino connector plugin: config schema, dialect, pool defaults, and a driver whose sessions
// share one pair of guarded keep-alive HTTP agents (the connector's connections to the coordinator).
// The driver (and trino-client with it) is imported on the first Trino connection, not when the
// plugin is registered: a gateway with no Trino connection never loads it.
import type { ConnectorPlugin } from '@quarry/sdk-connector';
import { type TrinoConfig, trinoConfigSchema } from './trino-config.js';
import { trinoDialect } from './trino-dialect.js';
import { mapTrinoError } from './trino-errors.js';

/** The `trino` connector plugin (Trino 418+ and Starburst; values bound with EXECUTE IMMEDIATE … USING). */
export const trinoPlugin: ConnectorPlugin<TrinoConfig> = {
  type: 'trino',
  displayName: 'Trino',
  configSchema: trinoConfigSchema,
  dialect: trinoDialect,
  // Sessions are HTTP slots, not server connections: the cap is on concurrent queries.
  defaultPool: { max: 8 },
  createDriver: async (config, context) =>
    (await import('./trino-driver.js')).createTrinoDriver(config, context),
  mapError: mapTrinoError,
  destinations: (config) => [{ kind: 'url', url: config.server }],
};
