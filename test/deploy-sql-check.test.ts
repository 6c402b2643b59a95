// An owner sees what is wrong with their analytic when they deploy it, not when a caller runs it
// (issue 18). A real gateway process, one owner, the same `sales` table in PostgreSQL, MariaDB
// (through a SELECT-only user with a password) and DuckDB: a typo'd table or column is refused
// at deploy with 400 and the warehouse's own message naming it; a DELETE (and in Postgres a
// data-modifying CTE) is refused as not read-only; a good query deploys with the columns it will
// produce, and a dry run says what a deploy would do without saving anything. A connection to a
// dead port is refused when saved, in the driver's words, is saved with ?test=false, and its
// /test answers 503 in those words, never with the connection's password; an analytic on it is
// deployed only unchecked (?check=false).
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import {
  mysqlAvailable,
  pgAvailable,
  serviceUp,
  TEST_PG_URL,
  uniqueSuffix,
} from './support/test-services.js';
import {
  createDuckdbWarehouse,
  createMysqlWarehouse,
  createPostgresWarehouse,
  type DuckdbWarehouse,
  type MysqlWarehouse,
  type PostgresWarehouse,
} from './support/warehouses.js';

const pgUp = serviceUp(await pgAvailable());
const mysqlUp = serviceUp(await mysqlAvailable());
const suffix = uniqueSuffix();
const http = createHttpClient();
const ROWS = 500;

/** A local port with nothing listening on it. */
function deadPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 1));
    });
  });
}

describe.runIf(pgUp && mysqlUp)('deploy checks the SQL against the warehouse', () => {
  let store: ControlPlaneSchema;
  let gateway: GatewayProcess;
  let key: string;
  let pgWarehouse: PostgresWarehouse;
  let mysqlWarehouse: MysqlWarehouse;
  let duckWarehouse: DuckdbWarehouse;
  const pgUrl = new URL(TEST_PG_URL);
  const pgSchema = `quarry_e2e_sqlcheck_${suffix}`;
  /** Each engine's connection name and how its SQL names the sales table. */
  const engines = [
    { engine: 'postgres', connection: 'pg', sales: `${pgSchema}.sales` },
    { engine: 'mariadb', connection: 'maria', sales: 'sales' },
    { engine: 'duckdb', connection: 'duck', sales: 'sales' },
  ] as const;

  const deploy = (name: string, body: Record<string, unknown>) =>
    http.request(gateway.url, 'PUT', `/v1/owner/analytics/${name}`, { key, json: body });

  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_e2e_sqlcheck_cp_${suffix}`);
    pgWarehouse = await createPostgresWarehouse(pgSchema, ROWS);
    mysqlWarehouse = await createMysqlWarehouse(`quarry_sqlcheck_${suffix}`, `pw-${suffix}`, ROWS);
    duckWarehouse = await createDuckdbWarehouse(ROWS);
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
        QUARRY_LOG_LEVEL: 'warn',
      },
    });
    const signUp = await http.request(gateway.url, 'POST', '/v1/accounts', {
      json: { email: `sqlcheck-${suffix}@e2e.quarry.test`, name: 'SQL check' },
    });
    expect(signUp.status, signUp.text).toBe(201);
    key = signUp.body.key.secret;
    const connections = [
      {
        name: 'pg',
        type: 'postgres',
        config: {
          host: pgUrl.hostname,
          port: Number(pgUrl.port || 5432),
          user: decodeURIComponent(pgUrl.username) || 'postgres',
          database: pgUrl.pathname.slice(1),
        },
      },
      {
        name: 'maria',
        type: 'mysql',
        config: {
          host: mysqlWarehouse.host,
          port: mysqlWarehouse.port,
          database: mysqlWarehouse.database,
          user: mysqlWarehouse.user,
          password: mysqlWarehouse.password,
        },
      },
      { name: 'duck', type: 'duckdb', config: { path: duckWarehouse.path } },
    ];
    for (const json of connections) {
      const created = await http.request(gateway.url, 'POST', '/v1/owner/connections', { key, json });
      expect(created.status, created.text).toBe(201);
    }
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.allSettled([
      store?.drop(),
      pgWarehouse?.drop(),
      mysqlWarehouse?.drop(),
      duckWarehouse?.drop(),
    ]);
  }, 60_000);

  it.each(engines)("refuses a typo'd table on $engine with the warehouse's message naming it", async (e) => {
    const res = await deploy(`typo-table-${e.connection}`, {
      connection: e.connection,
      sql: 'SELECT region FROM no_such_table_xyz',
    });
    expectErrorEnvelope(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([
      { field: 'sql', message: expect.stringContaining('no_such_table_xyz') },
    ]);
    expect(res.body.error.message).toContain('no_such_table_xyz');
    const list = await http.request(gateway.url, 'GET', '/v1/owner/analytics', { key });
    expect(list.body.analytics.map((a: { name: string }) => a.name)).not.toContain(
      `typo-table-${e.connection}`,
    );
  });

  it.each(engines)('refuses an unknown column on $engine, naming it', async (e) => {
    const res = await deploy(`typo-column-${e.connection}`, {
      connection: e.connection,
      sql: `SELECT regoin FROM ${e.sales}`,
    });
    expectErrorEnvelope(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details[0].message).toContain('regoin');
  });

  it.each(engines)('refuses a DELETE on $engine as not read-only, and deletes nothing', async (e) => {
    const res = await deploy(`delete-${e.connection}`, {
      connection: e.connection,
      sql: `DELETE FROM ${e.sales}`,
    });
    expectErrorEnvelope(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details[0]).toEqual({
      field: 'sql',
      message: expect.stringContaining('read-only'),
    });
    const count = await deploy(`count-${e.connection}`, {
      connection: e.connection,
      sql: `SELECT count(*) AS n FROM ${e.sales}`,
    });
    expect(count.status, count.text).toBe(200);
    const answer = await http.request(gateway.url, 'POST', '/v1/query', {
      key,
      json: { source: `count-${e.connection}` },
    });
    expect(answer.status, answer.text).toBe(200);
    expect(Number(answer.body.results[0].n)).toBe(ROWS);
  });

  it.each(engines)('deploys a good query on $engine with the columns it will produce', async (e) => {
    const body = {
      connection: e.connection,
      sql: `SELECT region, sum(amount) AS revenue FROM ${e.sales} WHERE year = :year GROUP BY region`,
      params: { year: { type: 'integer', required: true } },
      insights: { shape: 'keyed', key: 'region' },
    };
    const res = await deploy(`revenue-${e.connection}`, body);
    expect(res.status, res.text).toBe(200);
    expect(res.body.outcome).toBe('created');
    expect(res.body.columns.map((c: { name: string }) => c.name)).toEqual(['region', 'revenue']);
    const unchanged = await http.request(
      gateway.url,
      'POST',
      `/v1/owner/analytics/revenue-${e.connection}/dry-run`,
      {
        key,
        json: body,
      },
    );
    expect(unchanged.status, unchanged.text).toBe(200);
    expect(unchanged.body).toMatchObject({ name: `revenue-${e.connection}`, outcome: 'unchanged' });
    // An insights key the query does not return is refused too.
    const badKey = await deploy(`revenue-${e.connection}`, {
      ...body,
      insights: { shape: 'keyed', key: 'country' },
    });
    expectErrorEnvelope(badKey, 400, 'INVALID_REQUEST');
    expect(badKey.body.error.details[0]).toMatchObject({ field: 'insights' });
  });

  it('refuses a data-modifying CTE and a locking read on Postgres', async () => {
    for (const sql of [
      `WITH gone AS (DELETE FROM ${pgSchema}.sales RETURNING id) SELECT count(*) AS n FROM gone`,
      `SELECT id FROM ${pgSchema}.sales FOR UPDATE`,
    ]) {
      const res = await deploy('cte-delete', { connection: 'pg', sql });
      expectErrorEnvelope(res, 400, 'INVALID_REQUEST');
      expect(res.body.error.details[0].message, sql).toContain('read-only');
    }
    const rows = await withPg((c) => c.query(`SELECT count(*)::int AS n FROM ${pgSchema}.sales`));
    expect(rows.rows[0].n).toBe(ROWS);
  });

  it('dry-runs a new analytic without saving it', async () => {
    const res = await http.request(gateway.url, 'POST', '/v1/owner/analytics/dry-new/dry-run', {
      key,
      json: { connection: 'duck', sql: 'SELECT region FROM sales' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ name: 'dry-new', outcome: 'created', columns: [{ name: 'region' }] });
    const get = await http.request(gateway.url, 'GET', '/v1/owner/analytics/dry-new', { key });
    expectErrorEnvelope(get, 404, 'NOT_FOUND');
  });

  it('refuses to save a connection to a dead port in the driver words, unless ?test=false', async () => {
    const password = `pw-${suffix}-not-shown`;
    const json = {
      name: 'dead',
      type: 'postgres',
      config: { host: '127.0.0.1', port: await deadPort(), database: 'x', user: 'x', password },
    };
    const refused = await http.request(gateway.url, 'POST', '/v1/owner/connections', { key, json });
    expectErrorEnvelope(refused, 400, 'INVALID_REQUEST');
    expect(refused.body.error.details[0]).toEqual({
      field: 'config',
      message: expect.stringContaining('ECONNREFUSED'),
    });
    expect(refused.body.error.message).toContain('?test=false');
    expect(refused.text).not.toContain(password);

    const saved = await http.request(gateway.url, 'POST', '/v1/owner/connections?test=false', { key, json });
    expect(saved.status, saved.text).toBe(201);
    const tested = await http.request(
      gateway.url,
      'POST',
      `/v1/owner/connections/${saved.body.connection.id}/test`,
      { key },
    );
    expectErrorEnvelope(tested, 503, 'SOURCE_UNAVAILABLE');
    expect(tested.body.error.message).toContain('ECONNREFUSED');
    expect(tested.text).not.toContain(password);

    // An analytic on it cannot be checked: 503, unless deployed unchecked with ?check=false.
    const analytic = { name: `dead-${suffix}`, connection: 'dead', sql: 'SELECT 1 AS one' };
    const unchecked = await http.request(gateway.url, 'PUT', `/v1/owner/analytics/${analytic.name}`, {
      key,
      json: analytic,
    });
    expectErrorEnvelope(unchecked, 503, 'SOURCE_UNAVAILABLE');
    const deployed = await http.request(
      gateway.url,
      'PUT',
      `/v1/owner/analytics/${analytic.name}?check=false`,
      { key, json: analytic },
    );
    expect(deployed.status, deployed.text).toBe(200);
    expect(deployed.body.outcome).toBe('created');
    expect(deployed.body.columns).toBeUndefined();
    const called = await http.request(gateway.url, 'POST', '/v1/query', {
      key,
      json: { source: analytic.name },
    });
    expectErrorEnvelope(called, 503, 'SOURCE_UNAVAILABLE');
    expect(called.text).not.toContain(password);
  });
});
