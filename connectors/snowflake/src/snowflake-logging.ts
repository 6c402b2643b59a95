// Routes snowflake-sdk's log messages into Quarry's logging. The driver keeps one logger for the
// whole process (configured with `snowflake.configure`), and without configuration it writes INFO
// lines to the console and to ./snowflake.log. Its messages name no connection Quarry could
// attribute them to, so they go to the logger of the most recently created Snowflake driver that
// is still open, at debug level (they are diagnostics, never errors of ours), tagged with the
// driver's own level. With no open driver they are dropped.
import type { ConnectorLogger } from '@quarry/sdk-connector';

/** The interface snowflake-sdk's `customLogger` option expects. */
export interface SnowflakeSdkLogger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  debug(message: string): void;
  trace(message: string): void;
}

/** Loggers of the open drivers, oldest first; the last one receives the driver's messages. */
const attached: ConnectorLogger[] = [];

function forward(level: string, message: string): void {
  attached.at(-1)?.debug({ source: 'snowflake-sdk', sdkLevel: level }, String(message));
}

/** The `customLogger` snowflake-sdk is configured with (see snowflake-sdk.ts). */
export const routedSdkLogger: SnowflakeSdkLogger = {
  error: (message) => forward('error', message),
  warn: (message) => forward('warn', message),
  info: (message) => forward('info', message),
  debug: (message) => forward('debug', message),
  trace: (message) => forward('trace', message),
};

/**
 * Makes `logger` the destination of snowflake-sdk's messages until the returned function is
 * called (when the driver is destroyed); the previous destination then takes over again.
 */
export function attachSdkLogger(logger: ConnectorLogger): () => void {
  attached.push(logger);
  let detached = false;
  return () => {
    if (detached) return;
    detached = true;
    const index = attached.lastIndexOf(logger);
    if (index !== -1) attached.splice(index, 1);
  };
}
