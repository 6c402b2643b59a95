// The Snowflake driver of one owner connection: loads snowflake-sdk on first use, routes its logs
// to this connection's logger, and opens one service session (one login) per pooled session.
import type { ConnectorDriver, DriverContext } from '@quarry/sdk-connector';
import type { SnowflakeConfig } from './snowflake-config.js';
import { snowflakeConnectionOptions } from './snowflake-connection-options.js';
import { attachSdkLogger } from './snowflake-logging.js';
import { loadSnowflakeSdk } from './snowflake-sdk.js';
import { createSnowflakeSession, type SessionHealth } from './snowflake-session.js';

/** Creates the driver for one validated config. */
export async function createSnowflakeDriver(
  config: SnowflakeConfig,
  context: DriverContext,
): Promise<ConnectorDriver> {
  const sdk = await loadSnowflakeSdk();
  const connection = snowflakeConnectionOptions(config);
  const health: SessionHealth = { epoch: 0 };
  const detachLogger = attachSdkLogger(context.logger);
  return {
    createSession: () => createSnowflakeSession({ sdk, connection, health }),
    async destroy() {
      detachLogger();
    },
  };
}
