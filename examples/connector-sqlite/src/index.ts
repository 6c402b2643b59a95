// quarry-connector-sqlite: an example third-party Quarry connector for SQLite database files.
// It depends only on the public @quarry/sdk-connector API; operators register it by naming this
// package in QUARRY_CONNECTORS, and the gateway takes its `plugin` export.
export { type SqliteConfig, sqliteConfigSchema } from './sqlite-config.js';
export { sqliteDialect } from './sqlite-dialect.js';
export { sqlitePlugin as plugin, sqlitePlugin } from './sqlite-plugin.js';
