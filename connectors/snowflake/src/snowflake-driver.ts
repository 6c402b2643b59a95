// The Snowflake driver of one owner connection: loads snowflake-sdk on first use, routes its logs
// to this connection's logger, and opens one service session (one login) per pooled session.
import { EventEmitter } from 'node:events';
import { type ConnectorDriver, createGuardedAgents, type DriverContext } from '@quarry/sdk-connector';
import type { SnowflakeConfig } from './snowflake-config.js';
import { snowflakeConnectionOptions, snowflakeServiceHost } from './snowflake-connection-options.js';
import { attachSdkLogger } from './snowflake-logging.js';
import { loadSnowflakeSdk } from './snowflake-sdk.js';
import { createSnowflakeSession, type SessionHealth } from './snowflake-session.js';

/**
 * The largest response the driver reads: a result chunk is at most ~16 MB compressed (Snowflake
 * sizes them far below that); a hostile service cannot fill the gateway's heap with one answer.
 */
export const SNOWFLAKE_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** Creates the driver for one validated config. */
export async function createSnowflakeDriver(
  config: SnowflakeConfig,
  context: DriverContext,
): Promise<ConnectorDriver> {
  const sdk = await loadSnowflakeSdk();
  // Every request of the driver (login, queries, result chunks, telemetry) goes through guarded
  // agents: only to the service host, at a checked address, with a bounded response. The SDK's
  // `agentClass` hook replaces its own agents (and their OCSP lookups to hosts a certificate names).
  const serviceHost = snowflakeServiceHost(config);
  const refusals = new EventEmitter();
  refusals.setMaxListeners(0); // one listener per running query
  const agents = createGuardedAgents(context.destinations, {
    hosts: [serviceHost],
    maxResponseBytes: SNOWFLAKE_MAX_RESPONSE_BYTES,
    // The SDK retries a failed chunk download for minutes: running queries fail at once instead.
    onRefused: (error) => refusals.emit('refused', error),
  });
  const connection = {
    ...snowflakeConnectionOptions(config),
    agentClass: (options: { readonly protocol?: string }) =>
      options.protocol === 'http:' ? agents.http : agents.https,
  };
  const health: SessionHealth = { epoch: 0 };
  const detachLogger = attachSdkLogger(context.logger);
  return {
    async createSession() {
      // Refused here with a clear message, before the SDK's login (which reports any network
      // failure as "could not connect"); the agents check every socket again.
      await context.destinations.checkHost(serviceHost, 443);
      return createSnowflakeSession({ sdk, connection, health, refusals });
    },
    async destroy() {
      detachLogger();
      agents.destroy();
    },
  };
}
