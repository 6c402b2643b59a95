// The Trino driver: settings and guarded agents made once per connection, a trino-client session
// per pool slot. Its own module so that trino-plugin.ts loads trino-client (about 20 MiB resident)
// only when a Trino connection is first used.
import { type ConnectorDriver, createGuardedAgents, type DriverContext } from '@quarry/sdk-connector';
import { TRINO_MAX_RESPONSE_BYTES, trinoConnectionOptions } from './trino-client.js';
import { resolveTrinoSettings, type TrinoConfig } from './trino-config.js';
import { createTrinoSession, type TrinoSessionContext } from './trino-session.js';

/** Creates the driver for one validated config: settings and agents are made once, here. */
export function createTrinoDriver(config: TrinoConfig, context: DriverContext): ConnectorDriver {
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
