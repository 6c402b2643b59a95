// The DuckDB connector plugin: an embedded engine over a database file or Parquet/CSV/JSON
// files, opened read-only in this process. The driver (and DuckDB's native library with it,
// ~18 MiB resident) is imported on the first DuckDB connection: a gateway with none never loads it.
import type { ConnectorPlugin } from '@quarry/sdk-connector';
import { type DuckdbConfig, duckdbConfigSchema, duckdbHostPaths } from './duckdb-config.js';
import { duckdbDialect } from './duckdb-dialect.js';
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
  createDriver: async (config, context) =>
    (await import('./duckdb-driver.js')).createDuckdbDriver(config, context),
  mapError: mapDuckdbError,
  // A database file and `files` are read from the gateway host's disk.
  hostAccess: () => ['files'],
  destinations: (config) => duckdbHostPaths(config).map((path) => ({ kind: 'file', path })),
};
