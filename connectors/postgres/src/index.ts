// @quarry/connector-postgres: the PostgreSQL connector plugin. The gateway loads a connector by
// module specifier and takes its `plugin` export.

export type { PostgresConfig } from './postgres-config.js';
export { postgresConfigSchema } from './postgres-config.js';
export { postgresDialect } from './postgres-dialect.js';
export { mapPostgresError } from './postgres-errors.js';
export { postgresPlugin, postgresPlugin as plugin } from './postgres-plugin.js';
