// Loads snowflake-sdk once, lazily: importing it costs about half a second, so registering the
// plugin stays cheap and only the first Snowflake connection pays. Loading also makes the driver
// safe to run inside the gateway:
//
// - SNOWFLAKE_DISABLE_PLATFORM_DETECTION=true is set before the import. Otherwise the module, as
//   it loads, probes the cloud metadata endpoints (169.254.169.254, metadata.google.internal) and
//   AWS STS with whatever credentials the gateway host has, to report the platform in its login
//   telemetry. A gateway must never do that on an owner's behalf.
// - Its process-wide logger is configured to send everything to our loggers (see
//   snowflake-logging.ts), so it never writes ./snowflake.log or to the console. Each session
//   also passes `clientConfigFile: ''`, which keeps the driver's "easy logging" from adopting a
//   client config file (SF_CLIENT_CONFIG_FILE, ~/sf_client_config.json) that would point it back
//   to a log file.
import type SnowflakeSdk from 'snowflake-sdk';
import { routedSdkLogger } from './snowflake-logging.js';

/** The snowflake-sdk module (its default export under ESM). */
export type SnowflakeSdkModule = typeof SnowflakeSdk;

/**
 * The driver's own level for messages routed to us. INFO costs a few lines per session opened and
 * none per query; DEBUG would format (and secret-scan) dozens of lines per query.
 */
const SDK_LOG_LEVEL = 'INFO';

let loading: Promise<SnowflakeSdkModule> | undefined;

async function load(): Promise<SnowflakeSdkModule> {
  process.env.SNOWFLAKE_DISABLE_PLATFORM_DETECTION = 'true';
  const sdk = (await import('snowflake-sdk')).default;
  sdk.configure({ logLevel: SDK_LOG_LEVEL, customLogger: routedSdkLogger, additionalLogToConsole: false });
  return sdk;
}

/** snowflake-sdk, imported and configured on first use; a failed import is retried next time. */
export function loadSnowflakeSdk(): Promise<SnowflakeSdkModule> {
  loading ??= load().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}
