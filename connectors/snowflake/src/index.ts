// @quarry/connector-snowflake: the Snowflake connector plugin. The gateway loads it by module
// specifier and takes its `plugin` export; snowflake-sdk itself is imported only when the first
// Snowflake connection opens.
export { isPemPrivateKey, type SnowflakeConfig, snowflakeConfigSchema } from './snowflake-config.js';
export { snowflakeDialect } from './snowflake-dialect.js';
export { mapSnowflakeError } from './snowflake-errors.js';
export { snowflakePlugin as plugin, snowflakePlugin } from './snowflake-plugin.js';
export { readOnlyViolation } from './snowflake-read-only.js';
