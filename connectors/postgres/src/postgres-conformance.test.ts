// The SDK conformance kit against the local Postgres. The fixture table is written by a separate
// admin connection (the connector itself is read-only); the connector runs under a unique
// application_name so the kit can find and kill exactly its sessions.
import { lookup } from 'node:dns/promises';
import { conformanceFixtureSql, describeConnectorConformance } from '@quarry/sdk-connector/conformance';
import { postgresPlugin } from './postgres-plugin.js';
import { adminQuery, pgAvailable, TEST_PG_URL, uniqueSuffix } from './postgres-test-server.js';

const appName = `quarry_pg_conf_${uniqueSuffix()}`;
const NAMED_HOST = 'warehouse.quarry.invalid';

describeConnectorConformance({
  name: 'postgres',
  plugin: postgresPlugin,
  describes: true,
  config: () => ({ connectionString: TEST_PG_URL, applicationName: appName }),
  // The same server by a name no DNS knows: only the kit's destination guard resolves it.
  namedWarehouse: async () => {
    const url = new URL(TEST_PG_URL);
    const { address } = await lookup(url.hostname.replace(/^\[(.*)\]$/, '$1'));
    url.hostname = NAMED_HOST;
    return { host: NAMED_HOST, address, config: { connectionString: url.href, applicationName: appName } };
  },
  unreachableConfig: () => ({
    host: '127.0.0.1',
    port: 1,
    database: 'test',
    user: 'quarry',
    password: 'conformance-secret-pw',
    connectTimeoutMs: 2000,
  }),
  forbiddenDestinations: (kind) =>
    ({
      loopback: { connectionString: TEST_PG_URL, connectTimeoutMs: 2000 },
      'link-local': { host: '169.254.169.254', database: 'test', user: 'quarry', connectTimeoutMs: 2000 },
      // libpq's `?host=` wins over the URL's host: the declared and checked host must be it.
      private: { connectionString: 'postgres://postgres@8.8.8.8/test?host=10.0.0.1' },
      'unix-socket': { connectionString: 'postgres://postgres@8.8.8.8/test?host=%2Fvar%2Frun%2Fpostgresql' },
    })[kind as string],
  available: pgAvailable,
  setup: async (table) => {
    const fixture = conformanceFixtureSql(table);
    await adminQuery(fixture.createTable);
    await adminQuery(fixture.insertRows);
  },
  teardown: async (table) => {
    await adminQuery(conformanceFixtureSql(table).dropTable);
  },
  sql: {
    echo: () => 'SELECT :v AS v',
    slow: (marker) => `SELECT pg_sleep(10) /* ${marker} */`,
    inList: (table) => `SELECT id, name FROM ${table} WHERE id = ANY(:ids) ORDER BY id`,
  },
  runningQueries: async (marker) => {
    const { rows } = await adminQuery(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid() AND state = 'active'`,
      [marker],
    );
    return rows[0].n as number;
  },
  killSessions: async () => {
    await adminQuery('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
      appName,
    ]);
  },
});
