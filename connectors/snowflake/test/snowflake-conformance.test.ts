// The SDK's conformance kit against the Snowflake connector, through the official driver
// (snowflake-sdk 3.3.0) and its real wire protocol, served by the fake Snowflake service
// (fake-snowflake-server.ts) with DuckDB behind it. The fake answers with the 333333 "in progress"
// shape after 200 ms and pages results past 3 rows into chunks, so the slow query is cancelled
// through the driver's polling path and every fixture read downloads chunks. The SQL is what an owner would write for Snowflake (snowflake-conformance-sql.ts).
import { conformanceFixtureSql, describeConnectorConformance } from '@quarry/sdk-connector/conformance';
import { snowflakePlugin } from '../src/snowflake-plugin.js';
import { type FakeSnowflakeServer, startFakeSnowflake } from './fake-snowflake-server.js';
import { snowflakeConformanceSql } from './snowflake-conformance-sql.js';

const PASSWORD = 'conformance-secret-pw';
let fake: FakeSnowflakeServer | undefined;

function server(): FakeSnowflakeServer {
  if (fake === undefined) throw new Error('the fake Snowflake server is not running (see setup)');
  return fake;
}

/** The fake by name: `localhost` (the kit's rebinding check lets only the guard resolve it). */
function byName(url: string): string {
  return url.replace('//127.0.0.1:', '//localhost:');
}

function config() {
  return {
    account: server().account,
    username: 'quarry_reader',
    password: PASSWORD,
    warehouse: 'QUARRY_WH',
    database: 'QUARRY',
    schema: 'PUBLIC',
    role: 'QUARRY_READER',
    accessUrl: byName(server().url),
  };
}

describeConnectorConformance({
  name: 'snowflake',
  plugin: snowflakePlugin,
  config,
  // `accessUrl` allows plain http on loopback names only: `localhost` it is.
  namedWarehouse: () => ({ host: 'localhost', address: '127.0.0.1', config: config() }),
  forbiddenDestinations: (kind) => {
    const accessUrl = {
      loopback: server().url,
      'link-local': 'https://169.254.169.254',
      private: 'https://10.0.0.1',
    }[kind as string];
    return accessUrl === undefined
      ? undefined
      : { account: server().account, username: 'quarry_reader', password: PASSWORD, accessUrl };
  },
  // Nothing listens on port 1: the login request is refused at once.
  unreachableConfig: () => ({
    account: 'quarry_test',
    username: 'quarry_reader',
    password: PASSWORD,
    accessUrl: 'http://127.0.0.1:1',
  }),
  setup: async (table) => {
    fake = await startFakeSnowflake({
      users: { quarry_reader: { password: PASSWORD } },
      holdMs: 200,
      inlineRows: 3,
      chunkRows: 2,
      // Chunks on the service host as the connection names it.
      chunkOrigin: byName,
    });
    const fixture = conformanceFixtureSql(table);
    await fake.run(fixture.createTable);
    await fake.run(fixture.insertRows);
  },
  teardown: async () => {
    await fake?.close();
    fake = undefined;
  },
  sql: snowflakeConformanceSql,
  runningQueries: async (marker) => server().runningQueries(marker),
  killSessions: async () => server().killSessions(),
});
