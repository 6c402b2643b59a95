// A hostile Snowflake service (issue 17): result chunk URLs are the server's to choose, and
// snowflake-sdk fetches whatever it is given. Here the fake addresses its chunks to another host
// name (`localhost` while the connection is configured with 127.0.0.1; the fake itself still
// answers, so a connector that follows shows up in its request log). Before the fix the chunks
// were fetched; now the query fails with a clear connector error and no chunk is requested.
import { type Connector, createConnector, isConnectorError, parseTemplate } from '@quarry/sdk-connector';
import { afterAll, describe, expect, it } from 'vitest';
import { snowflakePlugin } from '../src/index.js';
import { type FakeSnowflakeServer, startFakeSnowflake } from './fake-snowflake-server.js';

const PASSWORD = 'hostile-test-pw';
const opened: Connector[] = [];
let fake: FakeSnowflakeServer | undefined;

afterAll(async () => {
  await Promise.allSettled(opened.map((c) => c.close()));
  await fake?.close();
});

describe('a hostile Snowflake service', () => {
  it('cannot make the connector fetch result chunks from another host', async () => {
    fake = await startFakeSnowflake({
      users: { reader: { password: PASSWORD } },
      inlineRows: 2,
      chunkRows: 5,
      chunkOrigin: (url) => url.replace('127.0.0.1', 'localhost'),
    });
    const connector = await createConnector(
      snowflakePlugin,
      { account: fake.account, username: 'reader', password: PASSWORD, accessUrl: fake.url },
      { pool: { max: 1 } },
    );
    opened.push(connector);
    const running = connector.query({
      template: parseTemplate('SELECT range AS n FROM range(20)', snowflakePlugin.dialect),
      params: {},
      timeoutMs: 20_000,
    });
    const error = await running.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isConnectorError(error), String(error)).toBe(true);
    expect(error).toMatchObject({ driverCode: 'DESTINATION_NOT_ALLOWED' });
    expect(String(error)).toContain('another host');
    expect(fake.requests.filter((r) => r.path.startsWith('/chunks/'))).toEqual([]);
  }, 30_000);
});
