// The SDK's conformance kit run against the MySQL connector on the test server (MariaDB 10.11
// here). The connector works in a database of its own, created per run, so `killSessions` can
// kill exactly the connector's connections (PROCESSLIST `DB`) without touching other engineers'
// tests on the same server; the admin connection has no default database and is never killed.
import { lookup } from 'node:dns/promises';
import { conformanceFixtureSql, describeConnectorConformance } from '@quarry/sdk-connector/conformance';
import { mysqlPlugin } from './mysql-plugin.js';
import {
  connectMysqlAdmin,
  ident,
  type MysqlAdmin,
  mysqlAvailable,
  mysqlTestTarget,
  uniqueSuffix,
} from './mysql-test-server.js';

const DATABASE = `quarry_conf_mysql_${uniqueSuffix()}`;
const DB = ident(DATABASE);

let admin: MysqlAdmin | undefined;

async function adminConnection(): Promise<MysqlAdmin> {
  admin ??= await connectMysqlAdmin();
  return admin;
}

describeConnectorConformance({
  name: 'mysql',
  plugin: mysqlPlugin,
  describes: true,
  available: mysqlAvailable,
  config: () => ({ ...mysqlTestTarget(DATABASE), connectTimeoutMs: 3_000 }),
  // The same server by a name no DNS knows: only the kit's destination guard resolves it.
  namedWarehouse: async () => {
    const target = mysqlTestTarget(DATABASE);
    const { address } = await lookup(target.host);
    const host = 'warehouse.quarry.invalid';
    return { host, address, config: { ...target, host, connectTimeoutMs: 3_000 } };
  },
  // The config schema has no socketPath: a unix socket cannot be named at all.
  forbiddenDestinations: (kind) =>
    ({
      loopback: { ...mysqlTestTarget(DATABASE), connectTimeoutMs: 3_000 },
      'link-local': { host: '169.254.169.254', database: 'test', user: 'root' },
      private: { host: '192.168.0.10', database: 'test', user: 'root' },
    })[kind as string],
  unreachableConfig: () => ({
    host: '127.0.0.1',
    port: 1,
    database: DATABASE,
    user: 'quarry_reader',
    password: 'conformance-secret-pw',
    connectTimeoutMs: 2_000,
  }),
  setup: async (table) => {
    const a = await adminConnection();
    await a.query(`CREATE DATABASE ${DB} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
    // TIMESTAMP stops at 2038 and shifts by time zone: DATETIME(3) holds the fixture's UTC
    // wall-clock times exactly; BOOLEAN is TINYINT(1), reported as boolean.
    const fixture = conformanceFixtureSql(`${DB}.${ident(table)}`, { columnTypes: { ts: 'datetime(3)' } });
    await a.query(fixture.createTable);
    await a.query(fixture.insertRows);
  },
  teardown: async () => {
    const a = await adminConnection();
    await a.query(`DROP DATABASE IF EXISTS ${DB}`);
    await a.close();
    admin = undefined;
  },
  // A bound boolean selected back is a TINYINT (not TINYINT(1)): 1/0, reported as integer.
  echoTypes: { boolean: 'integer' },
  sql: {
    echo: (type, array) => {
      if (array) return undefined; // MySQL has no array values; arrays are proven by inList
      // Safe integers are bound as numbers (DOUBLE on the wire): the cast reports the type.
      if (type === 'integer') return 'SELECT CAST(:v AS SIGNED) AS v';
      if (type === 'date') return 'SELECT CAST(:v AS DATE) AS v';
      if (type === 'timestamp') return 'SELECT CAST(:v AS DATETIME(3)) AS v';
      return 'SELECT :v AS v';
    },
    slow: (marker) => `SELECT SLEEP(10) AS s /* ${marker} */`,
    inList: (table) => `SELECT id FROM ${table} WHERE id IN (:ids) ORDER BY id`,
    count: (table) => `SELECT count(*) AS n FROM ${table}`,
  },
  runningQueries: async (marker) => {
    const a = await adminConnection();
    // MariaDB shows a prepared statement's execution as COMMAND 'Execute', MySQL as 'Query'.
    const rows = await a.query<{ n: number | string }>(
      `SELECT count(*) AS n FROM information_schema.PROCESSLIST
       WHERE INFO LIKE ? AND ID <> CONNECTION_ID() AND COMMAND IN ('Query', 'Execute')`,
      [`%${marker}%`],
    );
    return Number(rows[0]?.n ?? 0);
  },
  killSessions: async () => {
    const a = await adminConnection();
    const rows = await a.query<{ ID: number | string }>(
      'SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()',
      [DATABASE],
    );
    for (const row of rows) {
      try {
        await a.query(`KILL ${Number(row.ID)}`);
      } catch {
        // already gone
      }
    }
  },
});
