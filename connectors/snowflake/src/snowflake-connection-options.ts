// The snowflake-sdk 3.3.0 connection options for a validated config: the owner's account,
// credentials and session context, plus the driver settings every Quarry session needs. Kept
// apart from the session so the choices are visible (and tested) in one place.
import type { ConnectionOptions } from 'snowflake-sdk';
import type { SnowflakeConfig } from './snowflake-config.js';

/** snowflake-sdk's connection options (its declared type). */
export type SnowflakeDriverOptions = ConnectionOptions;

/** Name shown as the client application in the account's query and login history. */
const APPLICATION = 'Quarry';

/**
 * The host every request of a connection goes to: the `accessUrl`'s, else the one snowflake-sdk
 * 3.3 derives from the account (`acct[.region].snowflakecomputing.com`, `.cn` for China
 * regions, no region for us-west-2). Result chunks on any other host are refused.
 */
export function snowflakeServiceHost(config: SnowflakeConfig): string {
  if (config.accessUrl !== undefined) return new URL(config.accessUrl).hostname.toLowerCase();
  const dot = config.account.indexOf('.');
  const account = dot > 0 ? config.account.slice(0, dot) : config.account;
  const region = dot > 0 ? config.account.slice(dot + 1) : undefined;
  if (region === undefined || region === 'us-west-2')
    return `${account}.snowflakecomputing.com`.toLowerCase();
  const domain = /^cn-/i.test(region) ? 'snowflakecomputing.cn' : 'snowflakecomputing.com';
  return `${account}.${region}.${domain}`.toLowerCase();
}

/** snowflake-sdk options for one session of `config`. */
export function snowflakeConnectionOptions(config: SnowflakeConfig): SnowflakeDriverOptions {
  const credentials: ConnectionOptions =
    config.privateKey !== undefined
      ? {
          authenticator: 'SNOWFLAKE_JWT',
          privateKey: config.privateKey,
          ...(config.privateKeyPassphrase === undefined
            ? {}
            : { privateKeyPass: config.privateKeyPassphrase }),
        }
      : { password: config.password };
  return {
    account: config.account,
    username: config.username,
    ...credentials,
    ...(config.warehouse === undefined ? {} : { warehouse: config.warehouse }),
    ...(config.database === undefined ? {} : { database: config.database }),
    ...(config.schema === undefined ? {} : { schema: config.schema }),
    ...(config.role === undefined ? {} : { role: config.role }),
    ...(config.accessUrl === undefined ? {} : { accessUrl: config.accessUrl }),
    application: APPLICATION,
    // '' is a client config path that never exists: the driver's "easy logging" then stays off
    // instead of adopting SF_CLIENT_CONFIG_FILE or ~/sf_client_config.json and writing a log file.
    clientConfigFile: '',
    // Without this a NULL fetched as string comes back as the text 'NULL'.
    representNullAsStringNull: false,
    // Integer columns are parsed as big integers, not JS numbers: no precision-loss warning and
    // telemetry per value beyond 2^53 (we read the exact text either way, see fetchAsString).
    jsTreatIntegerAsBigInt: true,
    // The pool retries failed creates with back-off; the driver's own login retries (up to 7,
    // sleeping up to 16 s) would only keep a caller waiting past its time limit.
    sfRetryMaxLoginRetries: 0,
    rowMode: 'array',
    // NUMBER as the service's exact text, VARIANT as its JSON text (parsed by the runtime, so the
    // driver's eval-based fallback parser never runs).
    fetchAsString: ['Number', 'JSON'],
  };
}
