// The Trino connector against the fake coordinator, for what the conformance kit cannot see:
// what goes over the wire (EXECUTE IMMEDIATE … USING, per-query headers, auth), paging and
// QUEUED/RUNNING states, errors on any page, the row cap's cancel, no shared-header leakage
// between queries, exact BIGINTs and every Trino type family, server-side time limits, and a
// federated query across two catalogs.
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Connector,
  type ConnectorError,
  createConnector,
  isConnectorError,
  type ParamValues,
  parseTemplate,
  type QueryResult,
} from '@quarry/sdk-connector';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { trinoConnectionOptions } from '../src/trino-client.js';
import { resolveTrinoSettings, trinoConfigSchema } from '../src/trino-config.js';
import { trinoPlugin } from '../src/trino-plugin.js';
import { createTrinoSession } from '../src/trino-session.js';
import { type FakeQuery, type FakeTrino, startFakeTrino } from './fake-trino-server.js';
import { slowTrinoQuery } from './trino-test-support.js';

const USER = 'analyst';
const PASSWORD = 'protocol-secret-pw';
const ROWS = 30;

let fake: FakeTrino;
const open: Connector[] = [];

function config(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    server: fake.url,
    user: USER,
    password: PASSWORD,
    catalog: 'memory',
    schema: 'main',
    ...overrides,
  };
}

async function connect(overrides: Record<string, unknown> = {}, max = 1): Promise<Connector> {
  const connector = await createConnector(trinoPlugin, config(overrides), { pool: { max } });
  open.push(connector);
  return connector;
}

function run(
  connector: Connector,
  sql: string,
  params: ParamValues = {},
  limits: { maxRows?: number; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<QueryResult> {
  return connector.query({
    template: parseTemplate(sql, trinoPlugin.dialect),
    params,
    timeoutMs: 5_000,
    ...limits,
  });
}

async function failure(promise: Promise<unknown>): Promise<ConnectorError> {
  try {
    await promise;
  } catch (error) {
    if (isConnectorError(error)) return error;
    throw error;
  }
  throw new Error('expected a ConnectorError');
}

/** The last query the fake received whose text contains `text`. */
function lastQuery(text: string): FakeQuery {
  const found = fake.queries().filter((q) => q.sql.includes(text));
  const query = found[found.length - 1];
  if (query === undefined) throw new Error(`the fake received no query containing ${text}`);
  return query;
}

beforeAll(async () => {
  fake = await startFakeTrino({ auth: { user: USER, password: PASSWORD }, pageSize: 3 });
  await fake.sql('CREATE TABLE numbers (id INTEGER, label VARCHAR)');
  await fake.sql(
    `INSERT INTO numbers SELECT i, CASE WHEN i = 7 THEN 'it''s' ELSE 'n' || i END FROM range(1, ${ROWS + 1}) t(i)`,
  );
  await fake.sql(
    `CREATE TABLE typed_values AS SELECT
       1 AS id,
       9007199254740993::BIGINT AS big,
       (-9223372036854775807 - 1)::BIGINT AS min_big,
       '12345678901234567890.0123456789'::DECIMAL(38,10) AS dec,
       'NaN'::DOUBLE AS nan,
       1.5::DOUBLE AS dbl,
       TIMESTAMP '2024-01-31 12:34:56.789' AS ts,
       TIMESTAMPTZ '2024-06-30 23:59:59.999+02' AS tstz,
       TIME '12:34:56.789' AS t,
       DATE '2024-02-29' AS d,
       '\\x01\\x02\\xff'::BLOB AS b,
       [1, 9007199254740993]::BIGINT[] AS arr,
       {'x': 1, 'y z': 'a'} AS r,
       MAP {'k': 9007199254740993} AS m,
       '{"a": 9007199254740993, "s": "x"}'::JSON AS j`,
  );
});

afterEach(async () => {
  fake.responseHeaders = {};
  await Promise.all(open.splice(0).map((connector) => connector.close()));
});

afterAll(async () => {
  await fake?.close();
});

describe('trino connector over the Trino protocol (fake coordinator)', () => {
  it('binds values on the server with EXECUTE IMMEDIATE … USING and sends the connection headers', async () => {
    const connector = await connect();
    const result = await run(connector, 'SELECT id FROM numbers WHERE id = :id AND label = :label', {
      id: { type: 'integer', array: false, value: 7 },
      label: { type: 'string', array: false, value: "it's" },
    });
    expect(result.rows).toEqual([{ id: 7 }]);
    const query = lastQuery('WHERE id = ?');
    expect(query.sql).toBe(
      "EXECUTE IMMEDIATE 'SELECT id FROM numbers WHERE id = ? AND label = ?' USING 7, 'it''s'",
    );
    expect(query.headers).toMatchObject({
      'x-trino-user': USER,
      'x-trino-catalog': 'memory',
      'x-trino-schema': 'main',
      'x-trino-source': 'quarry',
      'x-trino-time-zone': 'UTC',
      authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`,
    });
    // The time limit left after opening the session (at most the 5,000 ms asked for).
    const limit = /^query_max_execution_time=(\d+)ms$/.exec(String(query.headers['x-trino-session']));
    expect(Number(limit?.[1])).toBeGreaterThan(0);
    expect(Number(limit?.[1])).toBeLessThanOrEqual(5_000);
    // Every request of the query, polls included, names the configured user, not the OS user.
    const paths = fake.requests.filter((r) => r.path.includes(query.id));
    expect(paths.length).toBeGreaterThan(1);
    for (const request of paths) expect(request.headers['x-trino-user']).toBe(USER);
  });

  it('quotes the template as one string literal, binds LIMIT, and sends a query without params as it is', async () => {
    const connector = await connect();
    const quoted = await run(connector, "SELECT 'it''s' AS s, :v AS v -- a comment", {
      v: { type: 'string', array: false, value: "O'Brien" },
    });
    expect(quoted.rows).toEqual([{ s: "it's", v: "O'Brien" }]);
    expect(lastQuery('a comment').sql).toBe(
      "EXECUTE IMMEDIATE 'SELECT ''it''''s'' AS s, ? AS v -- a comment' USING 'O''Brien'",
    );
    const limited = await run(connector, 'SELECT id FROM numbers ORDER BY id LIMIT :limit', {
      limit: { type: 'integer', array: false, value: 3 },
    });
    expect(limited.rows).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    await run(connector, 'SELECT count(*) AS n FROM numbers /* plain */');
    expect(lastQuery('plain').sql).toBe('SELECT count(*) AS n FROM numbers /* plain */');
  });

  it('follows nextUri through QUEUED, RUNNING and small data pages to FINISHED', async () => {
    const connector = await connect();
    const result = await run(connector, 'SELECT id FROM numbers ORDER BY id /* paged */');
    expect(result.rows.map((row) => row.id)).toEqual(Array.from({ length: ROWS }, (_, i) => i + 1));
    const query = lastQuery('paged');
    expect(query.served).toEqual([
      'QUEUED',
      'RUNNING',
      ...Array.from({ length: ROWS / 3 }, () => 'DATA'),
      'FINISHED',
    ]);
    expect(query.deleted).toBe(false);
  });

  it('stops following nextUri at the row cap and cancels the rest of the query', async () => {
    const connector = await connect();
    const result = await run(
      connector,
      'SELECT id FROM numbers ORDER BY id /* capped */',
      {},
      { maxRows: 4 },
    );
    expect(result.rows.map((row) => row.id)).toEqual([1, 2, 3, 4]);
    expect(result.truncated).toBe(true);
    const query = lastQuery('capped');
    // The runtime asks for maxRows + 1 = 5 rows: two pages of 3, then DELETE, not ten pages.
    expect(query.pagesServed).toBe(2);
    expect(query.deleted).toBe(true);
    expect(fake.requests.some((r) => r.method === 'DELETE' && r.path === `/v1/query/${query.id}`)).toBe(true);
  });

  it('checks every page: a failure after data pages fails the query, without Trino’s text', async () => {
    fake.failAfterPages('fails_late', 2);
    const connector = await connect();
    const error = await failure(run(connector, 'SELECT id FROM numbers ORDER BY id /* fails_late */'));
    expect(error.code).toBe('QUERY_FAILED');
    expect(error.driverCode).toBe('DIVISION_BY_ZERO');
    expect(error.message).not.toMatch(/Division by zero/);
    expect(lastQuery('fails_late').served).toEqual(['QUEUED', 'RUNNING', 'DATA', 'DATA', 'FAILED']);
    // The session survives an ordinary query failure.
    expect((await run(connector, 'SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('reports a failed query page (syntax error, unknown table) as QUERY_FAILED with the errorName', async () => {
    const connector = await connect();
    const syntax = await failure(run(connector, 'SELECT FROM WHERE secret_text'));
    expect(syntax).toMatchObject({ code: 'QUERY_FAILED', driverCode: 'SYNTAX_ERROR' });
    expect(syntax.message).not.toContain('secret_text');
    const missing = await failure(run(connector, 'SELECT * FROM no_such_table'));
    expect(missing).toMatchObject({ code: 'QUERY_FAILED', driverCode: 'TABLE_NOT_FOUND' });
  });

  it('carries no session state from one query to the next (Set-Session, Added-Prepare, Set-Catalog)', async () => {
    const connector = await connect(); // pool max 1: both queries run on the same session
    fake.responseHeaders = {
      'X-Trino-Set-Session': 'leaked_property=true',
      'X-Trino-Added-Prepare': 'leaked_statement=SELECT+1',
      'X-Trino-Set-Catalog': 'leaked_catalog',
      'X-Trino-Set-Schema': 'leaked_schema',
    };
    await run(connector, 'SELECT id FROM numbers WHERE id < 4 /* first */');
    const first = lastQuery('first');
    // trino-client did apply the response headers: the first query's own polls carry them…
    const polls = fake.requests.filter((r) => r.method === 'GET' && r.path.includes(first.id));
    expect(polls.some((r) => r.headers['x-trino-prepared-statement'] === 'leaked_statement=SELECT+1')).toBe(
      true,
    );
    expect(polls.some((r) => r.headers['x-trino-session'] === 'leaked_property=true')).toBe(true);
    // …but the next query starts clean.
    const second = await run(connector, 'SELECT id FROM numbers WHERE id < :n /* second */', {
      n: { type: 'integer', array: false, value: 3 },
    });
    expect(second.rows).toEqual([{ id: 1 }, { id: 2 }]);
    const headers = lastQuery('second').headers;
    expect(headers['x-trino-prepared-statement']).toBeUndefined();
    expect(headers['x-trino-session']).toBe('query_max_execution_time=5000ms');
    expect(headers['x-trino-catalog']).toBe('memory');
    expect(headers['x-trino-schema']).toBe('main');
  });

  it('keeps BIGINT and DECIMAL exact and converts every Trino type family', async () => {
    const connector = await connect();
    const result = await run(connector, 'SELECT * FROM typed_values');
    expect(result.columns.map((c) => [c.name, c.type, c.nativeType])).toEqual([
      ['id', 'integer', 'integer'],
      ['big', 'integer', 'bigint'],
      ['min_big', 'integer', 'bigint'],
      ['dec', 'decimal', 'decimal(38,10)'],
      ['nan', 'number', 'double'],
      ['dbl', 'number', 'double'],
      ['ts', 'timestamp', 'timestamp'],
      ['tstz', 'timestamp', 'timestamp with time zone'],
      ['t', 'time', 'time'],
      ['d', 'date', 'date'],
      ['b', 'bytes', 'varbinary'],
      ['arr', 'array', 'array(bigint)'],
      ['r', 'json', 'row(x integer, "y z" varchar)'],
      ['m', 'json', 'map(varchar, bigint)'],
      ['j', 'json', 'json'],
    ]);
    expect(result.rows).toEqual([
      {
        id: 1,
        big: '9007199254740993',
        min_big: '-9223372036854775808',
        dec: '12345678901234567890.0123456789',
        nan: null,
        dbl: 1.5,
        ts: '2024-01-31T12:34:56.789Z',
        tstz: '2024-06-30T21:59:59.999Z',
        t: '12:34:56.789',
        d: '2024-02-29',
        b: Buffer.from([1, 2, 255]).toString('base64'),
        arr: [1, '9007199254740993'],
        r: { x: 1, 'y z': 'a' },
        m: { k: '9007199254740993' },
        j: { a: '9007199254740993', s: 'x' },
      },
    ]);
  });

  it('enforces the time limit on the server too: query_max_execution_time stops a query nobody cancels', async () => {
    const settings = resolveTrinoSettings(trinoConfigSchema.parse(config()));
    const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent() };
    const session = createTrinoSession({
      connection: trinoConnectionOptions(settings),
      agents,
      origin: new URL(settings.server).origin,
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    try {
      const error = await failure(
        session.execute(
          { sql: slowTrinoQuery('server_limit'), params: [] },
          { timeoutMs: 300, rowLimit: 10, signal: new AbortController().signal },
        ),
      );
      expect(error).toMatchObject({ code: 'QUERY_TIMEOUT', driverCode: 'EXCEEDED_TIME_LIMIT' });
      const query = lastQuery('server_limit');
      expect(query.headers['x-trino-session']).toBe('query_max_execution_time=300ms');
      expect(query).toMatchObject({ state: 'FAILED', deleted: false });
    } finally {
      await session.close();
      agents.http.destroy();
    }
  });

  it('cancels on the server when the caller aborts: DELETE /v1/query/{id}, then QUERY_ABORTED', async () => {
    const connector = await connect();
    const controller = new AbortController();
    const pending = run(connector, slowTrinoQuery('aborted_by_caller'), {}, { signal: controller.signal });
    while (fake.runningQueries('aborted_by_caller') === 0) await sleep(10);
    controller.abort();
    expect(await failure(pending)).toMatchObject({ code: 'QUERY_ABORTED' });
    const query = lastQuery('aborted_by_caller');
    expect(fake.requests.some((r) => r.method === 'DELETE' && r.path === `/v1/query/${query.id}`)).toBe(true);
    while (fake.runningQueries('aborted_by_caller') > 0) await sleep(10);
    expect(lastQuery('aborted_by_caller').state).toBe('FAILED');
  });

  it('refuses wrong credentials with CONNECT_FAILED (HTTP 401), without retrying or echoing them', async () => {
    const connector = await connect({ password: 'wrong-password-123' });
    const error = await failure(connector.test());
    expect(error).toMatchObject({ code: 'CONNECT_FAILED', driverCode: 'HTTP_401', retryable: false });
    expect(`${error.message} ${JSON.stringify(error.details)}`).not.toContain('wrong-password-123');
    expect(error.cause).toBeUndefined();
  });

  it('reports an unavailable coordinator (HTTP 503) as a retryable CONNECT_FAILED', async () => {
    fake.refuseNext(503, 1);
    const connector = await createConnector(trinoPlugin, config(), {
      pool: { max: 1, createRetryBaseMs: 10_000 },
    });
    open.push(connector);
    const error = await failure(connector.test());
    expect(error).toMatchObject({ code: 'CONNECT_FAILED', driverCode: 'HTTP_503', retryable: true });
  });

  it('keeps working after the coordinator drops every connection', async () => {
    const connector = await connect({}, 2);
    expect((await run(connector, 'SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    fake.dropConnections();
    await sleep(50); // let the client see its sockets close
    expect((await run(connector, 'SELECT 2 AS two')).rows).toEqual([{ two: 2 }]);
  });

  it('runs a federated query joining two catalogs through one connection', async () => {
    await fake.sql("ATTACH ':memory:' AS postgresql");
    await fake.sql('CREATE SCHEMA postgresql.public');
    await fake.sql(
      'CREATE TABLE postgresql.public.orders (order_id INTEGER, customer_id INTEGER, order_date DATE, amount DECIMAL(12,2))',
    );
    await fake.sql(
      "INSERT INTO postgresql.public.orders VALUES (1, 10, DATE '2024-01-05', 100.50), (2, 11, DATE '2024-02-01', 20.00), (3, 10, DATE '2023-12-31', 999.00), (4, 12, DATE '2024-03-01', 5.25)",
    );
    await fake.sql("ATTACH ':memory:' AS hive");
    await fake.sql('CREATE SCHEMA hive.sales');
    await fake.sql('CREATE TABLE hive.sales.customers (customer_id INTEGER, region VARCHAR)');
    await fake.sql("INSERT INTO hive.sales.customers VALUES (10, 'EU'), (11, 'US'), (12, 'APAC')");
    const connector = await connect({ catalog: 'postgresql', schema: 'public' });
    const result = await run(
      connector,
      `SELECT c.region, count(*) AS orders, sum(o.amount) AS revenue
       FROM postgresql.public.orders AS o
       JOIN hive.sales.customers AS c ON c.customer_id = o.customer_id
       WHERE o.order_date >= :since AND contains(:regions, c.region)
       GROUP BY c.region
       ORDER BY revenue DESC`,
      {
        since: { type: 'date', array: false, value: '2024-01-01' },
        regions: { type: 'string', array: true, value: ['EU', 'US'] },
      },
    );
    expect(result.rows).toEqual([
      { region: 'EU', orders: 1, revenue: 100.5 },
      { region: 'US', orders: 1, revenue: 20 },
    ]);
  });
});

describe('trino connector with JWT authentication (fake coordinator)', () => {
  it('sends the token as a bearer and refuses a wrong one with CONNECT_FAILED, never echoing it', async () => {
    const jwtFake = await startFakeTrino({ auth: { token: 'header.payload.signature' } });
    const connectors: Connector[] = [];
    try {
      const good = await createConnector(trinoPlugin, {
        server: jwtFake.url,
        user: 'jwt_user',
        accessToken: 'header.payload.signature',
      });
      connectors.push(good);
      const result = await good.query({ template: parseTemplate('SELECT 42 AS answer'), params: {} });
      expect(result.rows).toEqual([{ answer: 42 }]);
      const post = jwtFake.queries().find((q) => q.sql === 'SELECT 42 AS answer');
      expect(post?.headers).toMatchObject({
        authorization: 'Bearer header.payload.signature',
        'x-trino-user': 'jwt_user',
      });
      expect(post?.headers['x-trino-catalog']).toBeUndefined();

      const bad = await createConnector(trinoPlugin, {
        server: jwtFake.url,
        user: 'jwt_user',
        accessToken: 'wrong.token.value',
      });
      connectors.push(bad);
      const error = await failure(bad.test());
      expect(error).toMatchObject({ code: 'CONNECT_FAILED', driverCode: 'HTTP_401' });
      expect(error.message).not.toContain('wrong.token.value');
    } finally {
      await Promise.all(connectors.map((connector) => connector.close()));
      await jwtFake.close();
    }
  });
});
