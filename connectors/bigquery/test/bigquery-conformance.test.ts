// The SDK conformance kit through the official driver (@google-cloud/bigquery) against the fake
// BigQuery server, named `localhost` (the kit's rebinding check lets only the destination guard
// resolve it): a generated service-account key whose token_uri is the fake's token endpoint, the
// fixture table written straight into the fake's DuckDB (in dataset `quarry_conf`), results paged
// three rows at a time. Every check runs: `killSessions` revokes every access token the
// fake issued (a session whose token is refused is replaced by one with a fresh token), and
// `nullArrays: 'empty'` because BigQuery returns a NULL array as [].
import { conformanceFixtureSql, describeConnectorConformance } from '@quarry/sdk-connector/conformance';
import { bigqueryPlugin } from '../src/bigquery-plugin.js';
import { type FakeBigquery, startFakeBigquery } from './fake-bigquery-server.js';
import { createTestServiceAccount, type TestServiceAccount } from './test-service-account.js';

const PROJECT = 'quarry-test';
const DATASET = 'quarry_conf';

let fake: FakeBigquery | undefined;
let account: TestServiceAccount | undefined;

function started(): { fake: FakeBigquery; account: TestServiceAccount } {
  if (fake === undefined || account === undefined) throw new Error('the fake BigQuery is not running');
  return { fake, account };
}

/** The connection under test: the fake by name (`localhost`), so the guard resolves it. */
function config() {
  const { fake, account } = started();
  return {
    projectId: PROJECT,
    location: 'US',
    dataset: DATASET,
    apiEndpoint: fake.url,
    credentials: JSON.stringify(account.keyFile),
  };
}

describeConnectorConformance({
  name: 'bigquery',
  plugin: bigqueryPlugin,
  config,
  // The schema allows plain http on loopback names only: `localhost` it is (the kit makes the
  // system resolver fail for it, so only the guard's answer can reach the fake).
  namedWarehouse: () => ({ host: 'localhost', address: '127.0.0.1', config: config() }),
  forbiddenDestinations: (kind) => {
    // Off loopback the key's token endpoint must be Google's (the fake's is loopback).
    const { token_uri: _fakeTokenUri, ...googleKey } = started().account.keyFile;
    const credentials = JSON.stringify(kind === 'loopback' ? started().account.keyFile : googleKey);
    const endpoint = {
      loopback: started().fake.url,
      'link-local': 'https://169.254.169.254',
      private: 'https://10.0.0.1',
    }[kind as string];
    return endpoint === undefined
      ? undefined
      : { projectId: PROJECT, apiEndpoint: endpoint, credentials, maxRetries: 0 };
  },
  // Nothing listens on port 1: both the token endpoint and the API are unreachable.
  unreachableConfig: () => ({
    projectId: PROJECT,
    apiEndpoint: 'http://127.0.0.1:1',
    credentials: { ...started().account.keyFile, token_uri: 'http://127.0.0.1:1/token' },
    connectTimeoutMs: 2_000,
  }),
  setup: async (table) => {
    fake = await startFakeBigquery({
      projectId: PROJECT,
      datasets: [DATASET],
      maxPageRows: 3,
      hostName: 'localhost',
    });
    account = createTestServiceAccount(fake.tokenUri);
    fake.addServiceAccount(account.email, account.publicKeyPem);
    // BigQuery's TIMESTAMP is an instant: DuckDB's TIMESTAMPTZ, with the fake's zone at UTC.
    const fixture = conformanceFixtureSql(table, { columnTypes: { ts: 'timestamptz' } });
    await fake.exec(fixture.createTable, DATASET);
    await fake.exec(fixture.insertRows, DATASET);
  },
  teardown: async () => {
    await fake?.close();
  },
  sql: {
    echo: () => 'SELECT :v AS v',
    // BigQuery has no sleep(): a 10^12-row cross join of generated arrays runs far past 10 s.
    slow: (marker) =>
      `SELECT COUNT(*) AS n FROM UNNEST(GENERATE_ARRAY(1, 1000000)) AS a ` +
      `CROSS JOIN UNNEST(GENERATE_ARRAY(1, 1000000)) AS b /* ${marker} */`,
    inList: (table) => `SELECT id, name FROM ${table} WHERE id IN UNNEST(:ids) ORDER BY id`,
  },
  nullArrays: 'empty',
  runningQueries: async (marker) => started().fake.runningQueries(marker),
  killSessions: async () => started().fake.revokeTokens(),
});
