// The SQLite connector plugin: a database file on the gateway host, read through sql.js
// (SQLite compiled to WebAssembly, no native build) in one worker thread per session.
import type { ConnectorPlugin } from '@quarry/sdk-connector';
import { type SqliteConfig, sqliteConfigSchema } from './sqlite-config.js';
import { sqliteDialect } from './sqlite-dialect.js';
import { createSqliteDriver } from './sqlite-driver.js';
import { mapSqliteError } from './sqlite-errors.js';

/** Connects Quarry to a SQLite database file (`type: sqlite`). */
export const sqlitePlugin: ConnectorPlugin<SqliteConfig> = {
  type: 'sqlite',
  displayName: 'SQLite',
  configSchema: sqliteConfigSchema,
  dialect: sqliteDialect,
  // A session is a worker thread holding a copy of the file: a few run queries in parallel, and
  // an idle one is worth keeping (opening reads the whole file again).
  defaultPool: { max: 4, idleTimeoutMs: 300_000 },
  createDriver: (config, context) => createSqliteDriver(config, context),
  mapError: mapSqliteError,
  // The database file is read from the gateway host's disk: owners get it only with the
  // operator's opt-in (QUARRY_ALLOW_HOST_FILES); the driver checks it again (sqlite-driver.ts).
  hostAccess: () => ['files'],
  destinations: (config) => [{ kind: 'file', path: config.path }],
};
