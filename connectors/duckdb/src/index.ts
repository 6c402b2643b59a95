// @quarry/connector-duckdb: the DuckDB connector plugin. The gateway loads it by module
// specifier and takes its `plugin` export.
export { type DuckdbConfig, duckdbConfigSchema } from './duckdb-config.js';
export { duckdbDialect } from './duckdb-dialect.js';
export { duckdbPlugin, duckdbPlugin as plugin } from './duckdb-plugin.js';
