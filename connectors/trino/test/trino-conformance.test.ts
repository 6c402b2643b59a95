// The SDK's conformance kit through trino-client against the fake coordinator
// (fake-trino-server.ts): every value crosses the real HTTP protocol and is bound by
// EXECUTE IMMEDIATE … USING, executed by DuckDB behind the fake. Basic auth is required by the
// fake, so every request proves the credentials travel.
import { describeConnectorConformance } from '@quarry/sdk-connector/conformance';
import { trinoPlugin } from '../src/trino-plugin.js';
import { type FakeTrino, startFakeTrino } from './fake-trino-server.js';
import { createFixtureSql, runningQueriesOver, slowTrinoQuery } from './trino-test-support.js';

const USER = 'quarry_conformance';
const PASSWORD = 'conformance-secret-pw';

let fake: FakeTrino | undefined;

function server(): FakeTrino {
  if (fake === undefined) throw new Error('the fake Trino was not started (see setup)');
  return fake;
}

describeConnectorConformance({
  name: 'trino',
  plugin: trinoPlugin,
  config: () => ({ server: server().url, user: USER, password: PASSWORD, catalog: 'memory', schema: 'main' }),
  // The fake is named `localhost` (in nextUri too); the kit's rebinding check lets only the
  // destination guard resolve that name.
  namedWarehouse: () => ({
    host: 'localhost',
    address: '127.0.0.1',
    config: { server: server().url, user: USER, password: PASSWORD, catalog: 'memory', schema: 'main' },
  }),
  forbiddenDestinations: (kind) => {
    const url = {
      loopback: server().url,
      'link-local': 'http://169.254.169.254',
      private: 'http://10.0.0.1:8080',
    }[kind as string];
    return url === undefined ? undefined : { server: url, user: USER, connectTimeoutMs: 2_000 };
  },
  unreachableConfig: () => ({
    server: 'http://127.0.0.1:1',
    user: USER,
    password: PASSWORD,
    catalog: 'memory',
    connectTimeoutMs: 2_000,
  }),
  setup: async (table) => {
    fake = await startFakeTrino({ auth: { user: USER, password: PASSWORD }, hostName: 'localhost' });
    for (const statement of createFixtureSql(table, 'duckdb')) await fake.sql(statement);
  },
  teardown: async () => {
    await fake?.close();
    fake = undefined;
  },
  sql: {
    // Trino types a bare parameter by its literal, arrays included: no cast is needed.
    echo: () => 'SELECT :v AS v',
    slow: slowTrinoQuery,
    inList: (table) => `SELECT id FROM ${table} WHERE contains(:ids, id) ORDER BY id`,
    count: (table) => `SELECT count(*) AS n FROM ${table}`,
  },
  runningQueries: (marker) => runningQueriesOver(server().url, { user: USER, password: PASSWORD }, marker),
  notApplicable: {
    killSessions:
      'Trino has no server-side sessions to kill: every query is its own HTTP exchange, so a ' +
      'session is only a slot of the pool (trino-protocol.test.ts proves queries survive a ' +
      'coordinator that drops every connection)',
  },
});
