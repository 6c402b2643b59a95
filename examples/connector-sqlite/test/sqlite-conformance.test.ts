// The SDK conformance kit against the SQLite connector. The fixture is a database file written
// with sql.js in a temp dir before the connector opens it. Where SQLite's typing differs from the
// kit's defaults, the options below say so, each with its reason.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import type { ConnectorPlugin } from '@quarry/sdk-connector';
import {
  CONFORMANCE_COLUMNS,
  CONFORMANCE_ROWS,
  describeConnectorConformance,
} from '@quarry/sdk-connector/conformance';
import type { SqliteConfig } from '../src/sqlite-config.js';
import { createSqliteDriver } from '../src/sqlite-driver.js';
import { sqlitePlugin } from '../src/sqlite-plugin.js';
import { spawnSqliteWorker } from '../src/sqlite-session.js';
import { type FixtureStatement, tempDir, writeSqliteFile } from './sqlite-files.js';

const dir = await tempDir('quarry-sqlite-conformance-');
const fixturePath = join(dir.dir, 'fixture.sqlite');
const unreachablePath = join(dir.dir, 'corrupt.sqlite');

/**
 * Every open session's worker (from its first reply, "ready", on), so killSessions can stop them
 * from outside, the way a server drops established connections.
 */
const workers = new Set<Worker>();

/** The plugin as shipped, except that the test keeps a handle on each worker it starts. */
const plugin: ConnectorPlugin<SqliteConfig> = {
  ...sqlitePlugin,
  createDriver: (config, context) =>
    createSqliteDriver(config, context, {
      spawnWorker: (start) => {
        const worker = spawnSqliteWorker(start);
        worker.once('message', () => workers.add(worker));
        worker.once('exit', () => workers.delete(worker));
        return worker;
      },
    }),
};

/** SQLite declared types for the fixture; `amount` is TEXT (see columnTypes below). */
const DECLARED: Readonly<Record<string, string>> = {
  id: 'INTEGER NOT NULL',
  name: 'VARCHAR(200)',
  amount: 'TEXT',
  big: 'BIGINT',
  ratio: 'DOUBLE PRECISION',
  flag: 'BOOLEAN',
  day: 'DATE',
  ts: 'TIMESTAMP',
  note: 'TEXT',
};

function fixtureStatements(table: string): FixtureStatement[] {
  const names = CONFORMANCE_COLUMNS.map((column) => column.name);
  const insert = `INSERT INTO ${table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`;
  return [
    `CREATE TABLE ${table} (${names.map((name) => `${name} ${DECLARED[name]}`).join(', ')})`,
    ...CONFORMANCE_ROWS.map(
      (row): FixtureStatement => [
        insert,
        [
          row.id,
          row.name,
          row.amount,
          // sql.js binds a bigint as its text; the BIGINT column's affinity stores it as an exact INTEGER.
          row.big === null ? null : row.big.toString(),
          row.ratio,
          row.flag === null ? null : Number(row.flag),
          row.day,
          // SQLite's own timestamp text: UTC, `YYYY-MM-DD HH:MM:SS.SSS`.
          row.ts === null ? null : row.ts.replace('T', ' ').replace('Z', ''),
          row.note,
        ],
      ],
    ),
  ];
}

describeConnectorConformance({
  name: 'sqlite',
  plugin,
  config: () => ({ path: fixturePath }),
  forbiddenDestinations: (kind) => (kind === 'host-file' ? { path: fixturePath } : undefined),
  // A file that starts like a SQLite database but is not one: SQLite cannot open it, which is an
  // embedded engine's "unreachable warehouse" (a missing file is refused earlier, by the config).
  unreachableConfig: async () => {
    await writeFile(
      unreachablePath,
      Buffer.concat([Buffer.from('SQLite format 3\u0000'), Buffer.alloc(4096, 0xab)]),
    );
    return { path: unreachablePath };
  },
  setup: (table) => writeSqliteFile(fixturePath, fixtureStatements(table)),
  teardown: () => dir.remove(),
  killSessions: async () => {
    await Promise.all([...workers].map((worker) => worker.terminate()));
  },
  sql: {
    echo: (type, array) => {
      // SQLite has no array type: arrays are proven through inList.
      if (array) return undefined;
      // sql.js binds whole numbers within 32 bits as INTEGER and others as REAL: the casts give the
      // declared type the kit expects for integers and doubles.
      if (type === 'integer') return 'SELECT CAST(:v AS INTEGER) AS v';
      if (type === 'number') return 'SELECT CAST(:v AS REAL) AS v';
      // A timestamp is bound as SQLite's `YYYY-MM-DD HH:MM:SS.SSS` text (UTC); strftime renders the
      // same instant in the kit's ISO form, so the echo proves the instant survived the binding.
      if (type === 'timestamp') return `SELECT strftime('%Y-%m-%dT%H:%M:%fZ', :v) AS v`;
      return 'SELECT :v AS v';
    },
    // No sleep() in SQLite: counting to 10^10 in a recursive CTE runs for minutes.
    slow: (marker) =>
      `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) ` +
      `SELECT count(*) AS n FROM c /* ${marker} */`,
    inList: (table) => `SELECT id, name FROM ${table} WHERE id IN (:ids) ORDER BY id`,
  },
  columnTypes: {
    // SQLite has no exact decimal: a DECIMAL column has NUMERIC affinity and keeps 15 significant
    // digits (9999999999999999.99 becomes 1e16), so exact amounts live in TEXT and are strings.
    amount: 'string',
  },
  echoTypes: {
    // No boolean, date or timestamp storage classes: a bound boolean is the INTEGER 1/0, a date and
    // a timestamp are TEXT. Only columns declared BOOLEAN/DATE/TIMESTAMP report those types.
    boolean: 'integer',
    date: 'string',
    timestamp: 'string',
  },
});
