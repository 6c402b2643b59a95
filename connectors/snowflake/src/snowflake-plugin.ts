// The Snowflake connector plugin (`type: snowflake`), on snowflake-sdk 3.3.0.
import type { ConnectorPlugin } from '@quarry/sdk-connector';
import { type SnowflakeConfig, snowflakeConfigSchema } from './snowflake-config.js';
import { snowflakeServiceHost } from './snowflake-connection-options.js';
import { snowflakeDialect } from './snowflake-dialect.js';
import { createSnowflakeDriver } from './snowflake-driver.js';
import { mapSnowflakeError } from './snowflake-errors.js';

/** Connects Quarry to a Snowflake account (`type: snowflake`). */
export const snowflakePlugin: ConnectorPlugin<SnowflakeConfig> = {
  type: 'snowflake',
  displayName: 'Snowflake',
  configSchema: snowflakeConfigSchema,
  dialect: snowflakeDialect,
  // A session is a login (hundreds of ms against the real service) and the service keeps it for
  // hours: keep idle ones for 10 minutes. A warehouse runs 8 queries at once by default
  // (MAX_CONCURRENCY_LEVEL) and queues the rest, so more sessions would only queue there.
  defaultPool: { max: 8, idleTimeoutMs: 600_000 },
  createDriver: createSnowflakeDriver,
  mapError: mapSnowflakeError,
  destinations: (config) => [
    { kind: 'url', url: config.accessUrl ?? `https://${snowflakeServiceHost(config)}` },
  ],
};
