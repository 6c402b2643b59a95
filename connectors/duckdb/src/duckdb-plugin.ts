// The DuckDB connector plugin: an embedded engine over a database file or Parquet/CSV/JSON
// files, opened read-only in this process.
import type { ConnectorPlugin } from '@quarry/sdk-connector';
import { type DuckdbConfig, duckdbConfigSchema, duckdbHostPaths } from './duckdb-config.js';
import { duckdbDialect } from './duckdb-dialect.js';
import { createDuckdbDriver } from './duckdb-driver.js';
import { mapDuckdbError } from './duckdb-errors.js';

/** Connects Quarry to a DuckDB database file or to files (`type: duckdb`). */
export const duckdbPlugin: ConnectorPlugin<DuckdbConfig> = {
  type: 'duckdb',
  displayName: 'DuckDB',
  configSchema: duckdbConfigSchema,
  dialect: duckdbDialect,
  // Sessions are in-process connections: cheap to keep, and DuckDB already spreads one query
  // over its threads, so a few concurrent sessions saturate the machine.
  defaultPool: { max: 4, idleTimeoutMs: 300_000 },
  createDriver: createDuckdbDriver,
  mapError: mapDuckdbError,
  // A database file and `files` are read from the gateway host's disk.
  hostAccess: () => ['files'],
  destinations: (config) => duckdbHostPaths(config).map((path) => ({ kind: 'file', path })),
};
