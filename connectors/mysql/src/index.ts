// @quarry/connector-mysql: the MySQL/MariaDB connector. The gateway loads any connector by module
// specifier and takes its `plugin` export.
export { type MysqlConfig, mysqlConfigSchema } from './mysql-config.js';
export { mysqlDialect } from './mysql-dialect.js';
export { mapMysqlError } from './mysql-errors.js';
export {
  createMysqlDriver,
  mysqlConnectionOptions,
  mysqlPlugin,
  mysqlPlugin as plugin,
} from './mysql-plugin.js';
// Types only: the session module (mysql2) loads on a connection's first session.
export type { MysqlFlavour, MysqlSession, MysqlSessionOptions } from './mysql-session.js';
