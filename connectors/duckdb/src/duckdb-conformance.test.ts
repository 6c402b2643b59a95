// The SDK conformance kit against DuckDB. The fixture is a database file in a temp dir, written
// by a separate read-write instance that is closed before the connector opens it read-only.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { conformanceFixtureSql, describeConnectorConformance } from '@quarry/sdk-connector/conformance';
import { duckdbPlugin } from './duckdb-plugin.js';

let dir: string | undefined;

async function databaseFile(): Promise<string> {
  dir ??= await mkdtemp(join(tmpdir(), 'quarry-duckdb-conformance-'));
  return join(dir, 'fixture.duckdb');
}

describeConnectorConformance({
  name: 'duckdb',
  plugin: duckdbPlugin,
  describes: true,
  config: async () => ({ path: await databaseFile(), threads: 2 }),
  // An embedded engine reaches no network: its only destination is the host's disk.
  forbiddenDestinations: (kind) =>
    kind === 'host-file' && dir !== undefined ? { path: join(dir, 'fixture.duckdb') } : undefined,
  // A database file that does not exist is DuckDB's "unreachable warehouse".
  unreachableConfig: async () => ({ path: join(await databaseFile(), '..', 'missing', 'nowhere.duckdb') }),
  setup: async (table) => {
    const writer = await DuckDBInstance.create(await databaseFile());
    const connection = await writer.connect();
    try {
      const fixture = conformanceFixtureSql(table);
      await connection.run(fixture.createTable);
      await connection.run(fixture.insertRows);
    } finally {
      connection.closeSync();
      writer.closeSync();
    }
  },
  teardown: async () => {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  },
  sql: {
    echo: () => 'SELECT :v AS v',
    // No sleep() in DuckDB: hashing 10^12 rows keeps every thread busy for far longer than 10 s.
    slow: (marker) => `SELECT sum(hash(range)) AS h FROM range(1000000000000) /* ${marker} */`,
    inList: (table) => `SELECT id, name FROM ${table} WHERE id = ANY(:ids) ORDER BY id`,
  },
});
