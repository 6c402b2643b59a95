// @quarry/connector-trino: the Trino connector plugin. The gateway loads a connector by module
// specifier and takes its `plugin` export.
export { type TrinoConfig, trinoConfigSchema } from './trino-config.js';
export { trinoDialect } from './trino-dialect.js';
export { mapTrinoError, trinoQueryError } from './trino-errors.js';
export { trinoPlugin, trinoPlugin as plugin } from './trino-plugin.js';
