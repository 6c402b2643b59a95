// The MySQL/MariaDB connector plugin: config schema, dialect, error mapping, and the driver that
// opens one mysql2 connection per session with the driver options Quarry needs (exact BIGINT and
// DECIMAL as strings, dates as strings in UTC, no multi-statements, array rows, no LOCAL INFILE).
// The session module (and mysql2 with it) is imported on a connection's first session: a gateway
// with no MySQL connection never loads it.
import { connect } from 'node:net';
import type { CheckedHost, ConnectorDriver, ConnectorPlugin, DriverContext } from '@quarry/sdk-connector';
import type { ConnectionOptions } from 'mysql2';
import { type MysqlConfig, mysqlConfigSchema } from './mysql-config.js';
import { mysqlDialect } from './mysql-dialect.js';
import { mapMysqlError } from './mysql-errors.js';

/**
 * Prepared statements mysql2 keeps per connection (its default is 16,000). The server's global
 * `max_prepared_stmt_count` (16,382 by default) is shared by every connection, so a pool of
 * sessions must not each hold thousands.
 */
const MAX_PREPARED_STATEMENTS = 100;

/** The mysql2 connection options for a validated config. */
export function mysqlConnectionOptions(config: MysqlConfig): ConnectionOptions {
  // A verified certificate must also name the configured host (mysql2 checks that only with
  // verifyIdentity); the socket goes to the checked address, TLS still talks to the name.
  const ssl =
    config.ssl === true
      ? { rejectUnauthorized: true, verifyIdentity: true }
      : config.ssl === false || config.ssl === undefined
        ? undefined
        : { ...config.ssl, verifyIdentity: config.ssl.rejectUnauthorized !== false };
  return {
    host: config.host,
    port: config.port,
    database: config.database,
    user: config.user,
    password: config.password,
    ...(ssl === undefined ? {} : { ssl }),
    connectTimeout: config.connectTimeoutMs ?? 10_000,
    // Exact 64-bit integers and decimals (as strings), and DATE/DATETIME as text, not local-time Dates.
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    timezone: 'Z',
    multipleStatements: false,
    rowsAsArray: true,
    maxPreparedStatements: MAX_PREPARED_STATEMENTS,
    // Never offer to send local files to the server (a hostile server could ask for any file).
    flags: ['-LOCAL_FILES'],
  };
}

/**
 * The options of one session: mysql2 keeps `host` (the name, for TLS) but its socket comes from
 * `stream`, connected to the address the guard checked, so it never resolves the name again.
 */
export function pinnedConnectionOptions(options: ConnectionOptions, checked: CheckedHost): ConnectionOptions {
  return {
    ...options,
    stream: () => connect({ host: checked.address, port: checked.port, noDelay: true }),
  };
}

/** Creates the driver for one connection: each session is one mysql2 connection. */
export function createMysqlDriver(config: MysqlConfig, context: DriverContext): ConnectorDriver {
  const connection = mysqlConnectionOptions(config);
  return {
    async createSession() {
      // Checked again for every session: a name may resolve somewhere else by now.
      const checked = await context.destinations.checkHost(config.host, config.port);
      const { createMysqlSession } = await import('./mysql-session.js');
      return createMysqlSession({
        connection: pinnedConnectionOptions(connection, checked),
        logger: context.logger,
      });
    },
  };
}

/** The MySQL/MariaDB connector plugin (type `mysql`). */
export const mysqlPlugin: ConnectorPlugin<MysqlConfig> = {
  type: 'mysql',
  displayName: 'MySQL / MariaDB',
  configSchema: mysqlConfigSchema,
  dialect: mysqlDialect,
  createDriver: createMysqlDriver,
  mapError: mapMysqlError,
  destinations: (config) => [{ kind: 'host', host: config.host, port: config.port }],
};
