// A third-party connector registered by configuration only (issue 6, item 5): a real gateway
// process on the embedded store loads `quarry-connector-sqlite` because QUARRY_CONNECTORS names
// it, lists it, and serves an owner's SQLite file over HTTP: connection, test, analytic with
// params, GET and POST queries, INVALID_PARAMS, and a QUERY_TIMEOUT after which it still answers.
// A connection whose file was deleted after creation answers 503 SOURCE_UNAVAILABLE until the
// file is back. A gateway told to load a module that is not a connector plugin (or has no plugin
// export) refuses to start: exit code 2, the message alone, no stack, no store created.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import initSqlJs from 'sql.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, runGatewayToExit, startGateway } from './support/gateway-process.js';
import { createHttpClient, type RequestOptions } from './support/http-client.js';

const http = createHttpClient();
let dir: string;
let gateway: GatewayProcess;
let key: string;
let shopPath: string;

/** The owner's data: six sales, five of them in 2024. */
const SALES = [
  [1, 'EU', 2024, 1250, 1, '2024-01-05', '2024-01-05 09:30:00.000'],
  [2, 'US', 2024, 990, 0, '2024-02-29', '2024-02-29 23:59:59.999'],
  [3, 'EU', 2024, 4000, 1, '2024-03-10', '2024-03-10 12:00:00.250'],
  [4, 'JP', 2024, 100, 0, '2024-04-01', '2024-04-01 00:00:00.000'],
  [5, 'US', 2024, 5, 1, '2024-05-20', '2024-05-20 18:45:00.000'],
  [6, 'EU', 2023, 700, 1, '2023-12-31', '2023-12-31 23:00:00.000'],
] as const;

const SALES_SQL = `SELECT id, region, amount_cents / 100.0 AS amount, paid, sold_on, created_at
FROM sales
WHERE year = :year AND (:region IS NULL OR region = :region)
ORDER BY id`;

/** Writes the owner's SQLite file with sql.js (the connector itself only reads). */
async function writeShop(path: string): Promise<void> {
  const SQL = await initSqlJs();
  const db = new SQL.Database();
  db.run(`CREATE TABLE sales (id INTEGER PRIMARY KEY, region TEXT NOT NULL, year INTEGER NOT NULL,
    amount_cents INTEGER NOT NULL, paid BOOLEAN NOT NULL, sold_on DATE NOT NULL, created_at TIMESTAMP NOT NULL)`);
  for (const sale of SALES) db.run('INSERT INTO sales VALUES (?, ?, ?, ?, ?, ?, ?)', [...sale]);
  await writeFile(path, db.export());
  db.close();
}

function call(method: string, path: string, options: RequestOptions = {}) {
  return http.request(gateway.url, method, path, { key, ...options });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

describe('a third-party connector registered by configuration only', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quarry-e2e-sqlite-'));
    shopPath = join(dir, 'shop.sqlite');
    await writeShop(shopPath);
    await mkdir(join(dir, 'data'));
    gateway = await startGateway({
      env: {
        QUARRY_DATA_DIR: join(dir, 'data'),
        QUARRY_DEMO: 'false',
        QUARRY_CONNECTORS: 'quarry-connector-sqlite',
        // A SQLite connection reads the gateway's own disk (the plugin declares `hostAccess:
        // files`): owners may create one only with this operator opt-in.
        QUARRY_ALLOW_HOST_FILES: 'true',
        QUARRY_LOG_LEVEL: 'warn',
        // Generous limits: this test is about the connector, not the meter.
        QUARRY_FREE_CALLS: '1000',
        QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 1000, window_seconds: 60, burst: 1000 } }),
      },
      readyTimeoutMs: 90_000,
    });
    const signUp = await http.request(gateway.url, 'POST', '/v1/accounts', {
      json: { email: 'sqlite-owner@e2e.quarry.test', name: 'SQLite owner' },
    });
    expect(signUp.status, signUp.text).toBe(201);
    key = signUp.body.key.secret;
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it('lists sqlite among the connector types, with its config schema', async () => {
    const response = await call('GET', '/v1/connectors');
    expect(response.status, response.text).toBe(200);
    const types = response.body.connectors.map((c: { type: string }) => c.type);
    expect(types).toEqual(expect.arrayContaining(['postgres', 'mysql', 'duckdb', 'sqlite']));
    const sqlite = response.body.connectors.find((c: { type: string }) => c.type === 'sqlite');
    expect(sqlite).toMatchObject({ display_name: 'SQLite', secret_fields: [] });
    expect(sqlite.config_schema).toMatchObject({
      type: 'object',
      required: ['path'],
      additionalProperties: false,
      properties: {
        path: { type: 'string', description: expect.stringContaining('SQLite') },
        maxFileBytes: { type: 'integer', default: 128 * 1024 * 1024 },
      },
    });
  });

  it('creates a sqlite connection on the owner file and tests it; a missing file is refused', async () => {
    const created = await call('POST', '/v1/owner/connections', {
      json: { name: 'shop', type: 'sqlite', config: { path: shopPath } },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.connection).toMatchObject({ name: 'shop', type: 'sqlite' });
    const tested = await call('POST', `/v1/owner/connections/${created.body.connection.id}/test`);
    expect(tested.status, tested.text).toBe(200);
    expect(tested.body).toMatchObject({ ok: true, latency_ms: expect.any(Number) });

    const missing = await call('POST', '/v1/owner/connections', {
      json: { name: 'nowhere', type: 'sqlite', config: { path: join(dir, 'nowhere.sqlite') } },
    });
    expectErrorEnvelope(missing, 400, 'INVALID_REQUEST');
    expect(missing.body.error.details).toEqual([
      expect.objectContaining({ param: 'path', message: 'no file exists at this path' }),
    ]);
  });

  it('answers an analytic with params by GET and POST, with typed columns, rows and meta', async () => {
    const analytic = await call('POST', '/v1/owner/analytics', {
      json: {
        name: 'sqlite-sales',
        connection: 'shop',
        sql: SALES_SQL,
        params: {
          year: { type: 'integer', required: true, min: 2000, max: 2100 },
          region: { type: 'string', pattern: '^[A-Z]{2}$' },
        },
        limits: { timeout_ms: 5000, max_rows: 4 },
        price: 2,
      },
    });
    expect(analytic.status, analytic.text).toBe(201);

    // GET coerces the query string by the param schema: "2024" becomes the integer 2024.
    const fetched = await call('GET', '/v1/analytics/sqlite-sales?year=2024&region=EU');
    expect(fetched.status, fetched.text).toBe(200);
    expect(fetched.body.columns).toEqual([
      { name: 'id', type: 'integer' },
      { name: 'region', type: 'string' },
      { name: 'amount', type: 'number' },
      { name: 'paid', type: 'boolean' },
      { name: 'sold_on', type: 'date' },
      { name: 'created_at', type: 'timestamp' },
    ]);
    expect(fetched.body.results).toEqual([
      {
        id: 1,
        region: 'EU',
        amount: 12.5,
        paid: true,
        sold_on: '2024-01-05',
        created_at: '2024-01-05T09:30:00.000Z',
      },
      {
        id: 3,
        region: 'EU',
        amount: 40,
        paid: true,
        sold_on: '2024-03-10',
        created_at: '2024-03-10T12:00:00.250Z',
      },
    ]);
    // The owner calls its own analytic: free (origin owner), whatever its price.
    expect(fetched.body.meta).toMatchObject({ row_count: 2, truncated: false, cached: false, credits: 0 });
    expect(fetched.body.meta.request_id).toBe(fetched.headers.get('x-request-id'));

    // Five sales in 2024, max_rows 4: the first four by id, and truncated.
    const posted = await call('POST', '/v1/query', {
      json: { source: 'sqlite-sales', params: { year: 2024 } },
    });
    expect(posted.status, posted.text).toBe(200);
    expect(posted.body.source).toBe('sqlite-sales');
    expect(posted.body.results.map((row: { id: number }) => row.id)).toEqual([1, 2, 3, 4]);
    expect(posted.body.results[1]).toEqual({
      id: 2,
      region: 'US',
      amount: 9.9,
      paid: false,
      sold_on: '2024-02-29',
      created_at: '2024-02-29T23:59:59.999Z',
    });
    expect(posted.body.meta).toMatchObject({ row_count: 4, truncated: true, credits: 0 });
  });

  it('400 INVALID_PARAMS lists each bad param', async () => {
    const fetched = await call('GET', '/v1/analytics/sqlite-sales?year=soon&region=europe');
    expectErrorEnvelope(fetched, 400, 'INVALID_PARAMS');
    expect(fetched.body.error.details.map((d: { param: string }) => d.param).sort()).toEqual([
      'region',
      'year',
    ]);
    const posted = await call('POST', '/v1/query', {
      json: { source: 'sqlite-sales', params: { year: 1999, colour: 'red' } },
    });
    expectErrorEnvelope(posted, 400, 'INVALID_PARAMS');
    expect(posted.body.error.details.map((d: { param: string }) => d.param).sort()).toEqual([
      'colour',
      'year',
    ]);
  });

  it('504 QUERY_TIMEOUT past limits.timeout_ms, and the gateway and the connection still answer', async () => {
    const slow = await call('POST', '/v1/owner/analytics', {
      json: {
        name: 'sqlite-slow',
        connection: 'shop',
        sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) SELECT count(*) AS n FROM c',
        limits: { timeout_ms: 500 },
      },
    });
    expect(slow.status, slow.text).toBe(201);
    const timedOut = await call('POST', '/v1/query', { json: { source: 'sqlite-slow', params: {} } });
    expectErrorEnvelope(timedOut, 504, 'QUERY_TIMEOUT');

    const health = await http.request(gateway.url, 'GET', '/healthz');
    expect(health.status).toBe(200);
    const again = await call('GET', '/v1/analytics/sqlite-sales?year=2023');
    expect(again.status, again.text).toBe(200);
    expect(again.body.results).toEqual([
      {
        id: 6,
        region: 'EU',
        amount: 7,
        paid: true,
        sold_on: '2023-12-31',
        created_at: '2023-12-31T23:00:00.000Z',
      },
    ]);
  });

  it('503 SOURCE_UNAVAILABLE when the file of a saved connection is deleted, 200 again once it is back', async () => {
    const path = join(dir, 'vanishing.sqlite');
    await writeShop(path);
    const created = await call('POST', '/v1/owner/connections', {
      json: { name: 'vanishing', type: 'sqlite', config: { path } },
    });
    expect(created.status, created.text).toBe(201);
    const analytic = await call('POST', '/v1/owner/analytics', {
      json: {
        name: 'vanishing-sales',
        connection: 'vanishing',
        sql: 'SELECT count(*) AS n FROM sales WHERE year = :year',
        params: { year: { type: 'integer', required: true } },
      },
    });
    expect(analytic.status, analytic.text).toBe(201);
    await unlink(path);

    // Never opened before: the connector now fails its config check (no file), which is the
    // source being unavailable, not the caller's request being invalid.
    const gone = await call('POST', '/v1/query', {
      json: { source: 'vanishing-sales', params: { year: 2024 } },
    });
    expectErrorEnvelope(gone, 503, 'SOURCE_UNAVAILABLE');
    expect(gone.body.error.retry_after).toBeGreaterThan(0);
    expect(gone.headers.get('retry-after')).toBe(String(Math.ceil(gone.body.error.retry_after)));
    expect(gone.text).not.toContain(path);
    // The owner's test says why.
    const tested = await call('POST', `/v1/owner/connections/${created.body.connection.id}/test`);
    expectErrorEnvelope(tested, 503, 'SOURCE_UNAVAILABLE');
    expect(tested.body.error.details).toEqual([
      expect.objectContaining({ param: 'path', message: 'no file exists at this path' }),
    ]);

    await writeShop(path);
    const back = await call('POST', '/v1/query', {
      json: { source: 'vanishing-sales', params: { year: 2024 } },
    });
    expect(back.status, back.text).toBe(200);
    expect(back.body.results).toEqual([{ n: 5 }]);
  });

  it('exits with code 2 and only the message, before creating a store, when a connector module is bad', async () => {
    const notAPlugin = pathToFileURL(join(dir, 'not-a-plugin.mjs')).href;
    await writeFile(new URL(notAPlugin), "export const plugin = { name: 'x' };\n");
    const noExport = pathToFileURL(join(dir, 'no-export.mjs')).href;
    await writeFile(new URL(noExport), 'export const sqlitePlugin = {};\nexport const version = 1;\n');
    // Fresh data dirs: plugins load before the store opens, so a failed start leaves none behind.
    const run = async (specifier: string) => {
      const dataDir = await mkdtemp(join(dir, 'refused-'));
      const result = await runGatewayToExit({
        QUARRY_DATA_DIR: dataDir,
        QUARRY_DEMO: 'false',
        QUARRY_CONNECTORS: `quarry-connector-sqlite,${specifier}`,
        QUARRY_LOG_LEVEL: 'warn',
      });
      return { ...result, dataDirEntries: await readdir(dataDir) };
    };
    const [invalid, missing] = await Promise.all([run(notAPlugin), run(noExport)]);

    for (const { code, stderr, dataDirEntries } of [invalid, missing]) {
      expect(code, stderr).toBe(2);
      // The message alone: no stack frames, no error class name.
      expect(stderr).not.toMatch(/^\s+at /m);
      expect(stderr).not.toContain('PluginLoadError');
      expect(dataDirEntries).toEqual([]);
    }
    expect(invalid.stderr.trim()).toMatch(
      new RegExp(
        `^${escapeRegExp(`Connector module "${notAPlugin}" does not export a valid Quarry connector plugin: `)}`,
      ),
    );
    for (const problem of ['`type`', '`configSchema`', '`dialect.placeholders`', '`createDriver`']) {
      expect(invalid.stderr).toContain(problem);
    }
    expect(missing.stderr.trim()).toBe(
      `Connector module "${noExport}" has neither a \`plugin\` nor a default export ` +
        '(it exports sqlitePlugin, version); export its ConnectorPlugin as `plugin`.',
    );
    // …whereas a gateway that starts fills its data dir: the empty ones above mean something.
    expect(existsSync(join(dir, 'data', 'pglite'))).toBe(true);
  }, 90_000);
});
