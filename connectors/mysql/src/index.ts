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
export {
  createMysqlSession,
  type MysqlFlavour,
  type MysqlSession,
  type MysqlSessionOptions,
} from './mysql-session.js';
