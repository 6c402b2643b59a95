// End to end over real HTTP: two real gateway processes share one control-plane schema on the real
// Postgres; owners connect real Postgres, MariaDB and DuckDB warehouses and callers query them.
// The describes run in order and build on each other (accounts, connections, analytics), the way
// one owner's and two callers' sessions would; the secrets scan at the end reads everything the
// earlier ones left behind.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient, type HttpResponse, type RequestOptions } from './support/http-client.js';
import { createTcpProxy } from './support/tcp-proxy.js';
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
  expectedRevenueCents,
  type MysqlWarehouse,
  mysqlAdminQuery,
  type PostgresWarehouse,
} from './support/warehouses.js';

const pgUp = serviceUp(await pgAvailable());
// MariaDB-only checks are skipped (loudly) when MariaDB is down; the rest still runs.
const mysqlUp = pgUp && serviceUp(await mysqlAvailable());

const ROWS = 3000;
const YEAR = 2024;
const suffix = uniqueSuffix();
const PG_PASSWORD = `pg-pw-${randomBytes(12).toString('hex')}`;
const MYSQL_PASSWORD = `my-pw-${randomBytes(12).toString('hex')}`;
const REVENUE_SQL = `SELECT region, sum(amount) AS revenue
FROM sales
WHERE year = :year AND (:region IS NULL OR region = :region)
GROUP BY region ORDER BY revenue DESC`;
const REVENUE_PARAMS = {
  year: { type: 'integer', required: true, min: 2000, max: 2100 },
  region: { type: 'string', pattern: '^[A-Z]{2}$' },
};

interface Account {
  readonly id: string;
  readonly key: string;
  readonly signUp: HttpResponse;
}

const http = createHttpClient();
let store: ControlPlaneSchema;
let g1: GatewayProcess;
let g2: GatewayProcess;
let pgWarehouse: PostgresWarehouse;
let mysqlWarehouse: MysqlWarehouse | undefined;
let duckWarehouse: DuckdbWarehouse;
let owner: Account;
let bob: Account;
let carol: Account;
/** Every key secret the gateways issued: none may appear anywhere but in its issuing response. */
const issuedSecrets: string[] = [];
/** Connection name → its id, per warehouse type. */
const connectionIds = new Map<string, string>();
const revenueAnalytic = (type: string) => `revenue-${type}-${suffix}`;

function call(gateway: GatewayProcess, method: string, path: string, options?: RequestOptions) {
  return http.request(gateway.url, method, path, options);
}

async function signUp(label: string): Promise<Account> {
  const response = await call(g1, 'POST', '/v1/accounts', {
    json: { email: `${label}-${suffix}@e2e.quarry.test`, name: `${label} ${suffix}` },
  });
  if (response.status !== 201) throw new Error(`sign-up failed: ${response.status} ${response.text}`);
  issuedSecrets.push(response.body.key.secret);
  return { id: response.body.account.id, key: response.body.key.secret, signUp: response };
}

/** Creates an analytic as `owner` and fails loudly when the gateway refuses it. */
async function createAnalytic(definition: Record<string, unknown>): Promise<HttpResponse> {
  const response = await call(g1, 'POST', '/v1/owner/analytics', { key: owner.key, json: definition });
  if (response.status !== 201) throw new Error(`analytic refused: ${response.status} ${response.text}`);
  return response;
}

function cents(value: unknown): number {
  return Math.round(Number(value) * 100);
}

describe.runIf(pgUp)('gateway over HTTP on the real Postgres store', () => {
  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_e2e_${suffix}`);
    const secretKey = randomBytes(32).toString('base64');
    const env = postgresStoreEnv(store.databaseUrl, secretKey);
    // The first gateway migrates the schema; the second then starts on it already current.
    [g1, pgWarehouse, duckWarehouse, mysqlWarehouse] = await Promise.all([
      startGateway({ env }),
      createPostgresWarehouse(`quarry_e2e_wh_${suffix}`, ROWS),
      createDuckdbWarehouse(ROWS),
      mysqlUp
        ? createMysqlWarehouse(`quarry_e2e_${suffix}`, MYSQL_PASSWORD, ROWS)
        : Promise.resolve(undefined),
    ]);
    g2 = await startGateway({ env });
    owner = await signUp('owner');
    bob = await signUp('bob');
    carol = await signUp('carol');
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled([g1?.stop(), g2?.stop()]);
    await Promise.allSettled([
      store?.drop(),
      pgWarehouse?.drop(),
      mysqlWarehouse?.drop(),
      duckWarehouse?.drop(),
    ]);
  }, 60_000);

  describe('1. sign-up, connections, analytics and queries across three warehouses', () => {
    it('signs up a Free account with its first key, shown once', () => {
      const { account, key } = owner.signUp.body;
      expect(account).toMatchObject({ email: `owner-${suffix}@e2e.quarry.test`, plan: expect.any(String) });
      expect(key.secret).toMatch(/^qry_live_/);
      expect(key.secret.startsWith(key.prefix)).toBe(true);
      expect(new Set([owner.key, bob.key, carol.key]).size).toBe(3);
    });

    it('connects postgres, mysql and duckdb warehouses and tests each', async () => {
      const configs: [string, Record<string, unknown>][] = [
        [
          'postgres',
          {
            host: '127.0.0.1',
            port: 5432,
            database: 'test',
            user: 'postgres',
            password: PG_PASSWORD,
            schema: pgWarehouse.schema,
          },
        ],
        ['duckdb', { path: duckWarehouse.path }],
      ];
      if (mysqlWarehouse) {
        const { host, port, database, user, password } = mysqlWarehouse;
        configs.push(['mysql', { host, port, database, user, password }]);
      }
      for (const [type, config] of configs) {
        const created = await call(g1, 'POST', '/v1/owner/connections', {
          key: owner.key,
          json: { name: `wh-${type}`, type, config },
        });
        expect(created.status, created.text).toBe(201);
        expect(created.body.connection).toMatchObject({ name: `wh-${type}`, type });
        // The password is split out as a secret and never echoed.
        expect(created.text).not.toContain(PG_PASSWORD);
        expect(created.text).not.toContain(MYSQL_PASSWORD);
        connectionIds.set(type, created.body.connection.id);
        const tested = await call(g1, 'POST', `/v1/owner/connections/${created.body.connection.id}/test`, {
          key: owner.key,
        });
        expect(tested.status, tested.text).toBe(200);
        expect(tested.body).toMatchObject({ ok: true, latency_ms: expect.any(Number) });
      }
      const listed = await call(g1, 'GET', '/v1/owner/connections', { key: owner.key });
      expect(listed.body.connections.map((c: { type: string }) => c.type).sort()).toEqual(
        configs.map(([t]) => t).sort(),
      );
    });

    it('creates the same public analytic on each connection', async () => {
      for (const type of connectionIds.keys()) {
        const response = await createAnalytic({
          name: revenueAnalytic(type),
          title: `Revenue by region (${type})`,
          connection: `wh-${type}`,
          sql: REVENUE_SQL,
          params: REVENUE_PARAMS,
          insights: { shape: 'keyed', key: 'region' },
          visibility: 'public',
        });
        expect(response.body.analytic).toMatchObject({
          name: revenueAnalytic(type),
          version: 1,
          visibility: 'public',
        });
      }
    });

    it('answers another account by POST and GET, and the three warehouses agree', async () => {
      const expected = expectedRevenueCents(ROWS, YEAR);
      expect(expected.size).toBe(6);
      const [topRegion] = [...expected].sort((a, b) => b[1] - a[1])[0] as [string, number];
      for (const type of connectionIds.keys()) {
        const name = revenueAnalytic(type);
        const posted = await call(g2, 'POST', '/v1/query', {
          key: bob.key,
          json: { source: name, params: { year: YEAR } },
        });
        expect(posted.status, posted.text).toBe(200);
        expect(posted.body.source).toBe(name);
        expect(posted.body.meta).toMatchObject({ row_count: 6, truncated: false, cached: false, version: 1 });
        expect(posted.body.meta.request_id).toBe(posted.headers.get('x-request-id'));
        const got = new Map<string, number>(
          posted.body.results.map((r: { region: string; revenue: unknown }) => [r.region, cents(r.revenue)]),
        );
        expect(got, type).toEqual(expected);
        expect(cents(posted.body.insights[topRegion].revenue)).toBe(expected.get(topRegion));

        // GET coerces the query string by the param schema: "2024" becomes the integer 2024.
        const fetched = await call(g1, 'GET', `/v1/analytics/${name}?year=${YEAR}&region=${topRegion}`, {
          key: bob.key,
        });
        expect(fetched.status, fetched.text).toBe(200);
        expect(fetched.body.results).toHaveLength(1);
        expect(fetched.body.results[0].region).toBe(topRegion);
        expect(cents(fetched.body.results[0].revenue)).toBe(expected.get(topRegion));
      }
    });
  });

  describe('2. every error over HTTP is the one envelope', () => {
    const source = () => revenueAnalytic('duckdb');

    it('400 INVALID_REQUEST for malformed JSON, a missing source and a wrongly typed one', async () => {
      const malformed = await call(g1, 'POST', '/v1/query', {
        key: bob.key,
        raw: '{"source": ',
        headers: { 'content-type': 'application/json' },
      });
      expectErrorEnvelope(malformed, 400, 'INVALID_REQUEST');
      const missing = await call(g1, 'POST', '/v1/query', { key: bob.key, json: { params: { year: YEAR } } });
      expectErrorEnvelope(missing, 400, 'INVALID_REQUEST');
      const wrongType = await call(g1, 'POST', '/v1/query', {
        key: bob.key,
        json: { source: 42, params: [] },
      });
      expectErrorEnvelope(wrongType, 400, 'INVALID_REQUEST');
    });

    it('400 INVALID_PARAMS lists each bad param', async () => {
      const response = await call(g1, 'POST', '/v1/query', {
        key: bob.key,
        json: { source: source(), params: { year: 'soon', region: 'europe', colour: 'red' } },
      });
      expectErrorEnvelope(response, 400, 'INVALID_PARAMS');
      const params = response.body.error.details.map((d: { param: string }) => d.param).sort();
      expect(params).toEqual(['colour', 'region', 'year']);
      const outOfBounds = await call(g1, 'GET', `/v1/analytics/${source()}?year=1999`, { key: bob.key });
      expectErrorEnvelope(outOfBounds, 400, 'INVALID_PARAMS');
      expect(outOfBounds.body.error.details).toEqual([expect.objectContaining({ param: 'year' })]);
      const missing = await call(g1, 'POST', '/v1/query', {
        key: bob.key,
        json: { source: source(), params: {} },
      });
      expectErrorEnvelope(missing, 400, 'INVALID_PARAMS');
      expect(missing.body.error.details).toEqual([expect.objectContaining({ param: 'year' })]);
    });

    it('401 UNAUTHENTICATED with WWW-Authenticate for a missing, malformed or unknown key', async () => {
      const query = { json: { source: source(), params: { year: YEAR } } };
      const forged = `qry_live_${randomBytes(24).toString('hex')}`;
      for (const key of [undefined, 'not-a-key', forged]) {
        const response = await call(g1, 'POST', '/v1/query', {
          ...query,
          ...(key === undefined ? {} : { key }),
        });
        expectErrorEnvelope(response, 401, 'UNAUTHENTICATED');
        expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
    });

    it('403 FORBIDDEN for a key without the needed scope', async () => {
      const issued = await call(g1, 'POST', '/v1/keys', {
        key: bob.key,
        json: { name: 'query only', scopes: ['query'] },
      });
      expect(issued.status, issued.text).toBe(201);
      issuedSecrets.push(issued.body.key.secret);
      const queried = await call(g1, 'POST', '/v1/query', {
        key: issued.body.key.secret,
        json: { source: source(), params: { year: YEAR } },
      });
      expect(queried.status).toBe(200);
      const forbidden = await call(g1, 'GET', '/v1/owner/connections', { key: issued.body.key.secret });
      expectErrorEnvelope(forbidden, 403, 'FORBIDDEN');
    });

    it('404 SOURCE_NOT_FOUND for an unknown analytic, NOT_FOUND for other resources', async () => {
      const unknown = await call(g1, 'POST', '/v1/query', {
        key: bob.key,
        json: { source: `no-such-${suffix}`, params: {} },
      });
      expectErrorEnvelope(unknown, 404, 'SOURCE_NOT_FOUND');
      const byGet = await call(g1, 'GET', `/v1/analytics/no-such-${suffix}`, { key: bob.key });
      expectErrorEnvelope(byGet, 404, 'SOURCE_NOT_FOUND');
      const connection = await call(g1, 'GET', '/v1/owner/connections/nope', { key: owner.key });
      expectErrorEnvelope(connection, 404, 'NOT_FOUND');
      const route = await call(g1, 'GET', '/v1/no-such-route', { key: owner.key });
      expectErrorEnvelope(route, 404, 'NOT_FOUND');
      // Another owner's connection is not found either, rather than forbidden.
      const foreign = await call(g1, 'GET', `/v1/owner/connections/${connectionIds.get('duckdb')}`, {
        key: bob.key,
      });
      expectErrorEnvelope(foreign, 404, 'NOT_FOUND');
    });

    it('405 METHOD_NOT_ALLOWED names the allowed methods', async () => {
      const response = await call(g1, 'DELETE', '/v1/query', { key: bob.key });
      expectErrorEnvelope(response, 405, 'METHOD_NOT_ALLOWED');
      expect(response.headers.get('allow')).toContain('POST');
    });

    it('409 CONFLICT for a duplicate connection name and a duplicate sign-up', async () => {
      const duplicate = await call(g1, 'POST', '/v1/owner/connections', {
        key: owner.key,
        json: { name: 'wh-duckdb', type: 'duckdb', config: { path: duckWarehouse.path } },
      });
      expectErrorEnvelope(duplicate, 409, 'CONFLICT');
      const again = await call(g1, 'POST', '/v1/accounts', {
        json: { email: `owner-${suffix}@e2e.quarry.test`, name: 'again' },
      });
      expectErrorEnvelope(again, 409, 'CONFLICT');
    });

    it('413 PAYLOAD_TOO_LARGE past 64 KiB and 415 UNSUPPORTED_MEDIA_TYPE without JSON', async () => {
      const big = await call(g1, 'POST', '/v1/query', {
        key: bob.key,
        json: { source: source(), params: { year: YEAR, padding: 'x'.repeat(70 * 1024) } },
      });
      expectErrorEnvelope(big, 413, 'PAYLOAD_TOO_LARGE');
      const text = await call(g1, 'POST', '/v1/query', {
        key: bob.key,
        raw: JSON.stringify({ source: source(), params: { year: YEAR } }),
        headers: { 'content-type': 'text/plain' },
      });
      expectErrorEnvelope(text, 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    const warehouseErrors = [
      { type: 'postgres', sqlstate: '21000' },
      { type: 'mysql', sqlstate: '21000' },
    ];
    for (const { type, sqlstate } of warehouseErrors) {
      it.runIf(type !== 'mysql' || mysqlUp)(
        `502 UPSTREAM_ERROR from ${type} leaks nothing of the warehouse`,
        async () => {
          // Accepted at deploy (the warehouse prepares it), failed by the warehouse when it runs:
          // a scalar subquery that returns two rows.
          const table = `secret_table_${type}_${suffix}`;
          const name = `broken-${type}-${suffix}`;
          await createAnalytic({
            name,
            connection: `wh-${type}`,
            sql: `SELECT (SELECT 1 AS ${table} UNION ALL SELECT 2) AS secret_column`,
            visibility: 'public',
          });
          const response = await call(g1, 'POST', '/v1/query', {
            key: bob.key,
            json: { source: name, params: {} },
          });
          expectErrorEnvelope(response, 502, 'UPSTREAM_ERROR');
          // The request id is random and may contain any digits (once, `…3582100000000`), so
          // only the rest of the answer is searched.
          const text = response.text.replace(/"request_id":"[^"]*"/, '');
          for (const leak of [table, 'secret_column', sqlstate, '127.0.0.1', 'localhost', '5432', '3306']) {
            expect(text).not.toContain(leak);
          }
        },
      );
    }

    it('503 SOURCE_UNAVAILABLE when nothing listens at the warehouse address', async () => {
      // The warehouse is up when the connection is saved and the analytic deployed (both check
      // it), then goes away: the proxy in front of PostgreSQL stops.
      const pgUrl = new URL(TEST_PG_URL);
      const proxy = await createTcpProxy({
        targetHost: pgUrl.hostname,
        targetPort: Number(pgUrl.port || 5432),
      });
      const port = proxy.port;
      const created = await call(g1, 'POST', '/v1/owner/connections', {
        key: owner.key,
        json: {
          name: 'wh-down',
          type: 'postgres',
          config: { host: '127.0.0.1', port, database: 'test', user: 'postgres', connectTimeoutMs: 2000 },
        },
      });
      expect(created.status, created.text).toBe(201);
      const name = `down-${suffix}`;
      await createAnalytic({ name, connection: 'wh-down', sql: 'SELECT 1 AS one', visibility: 'public' });
      await proxy.stop();
      const tested = await call(g1, 'POST', `/v1/owner/connections/${created.body.connection.id}/test`, {
        key: owner.key,
      });
      expectErrorEnvelope(tested, 503, 'SOURCE_UNAVAILABLE');
      const response = await call(g1, 'POST', '/v1/query', {
        key: bob.key,
        json: { source: name, params: {} },
      });
      expectErrorEnvelope(response, 503, 'SOURCE_UNAVAILABLE');
      expect(response.body.error.retry_after).toBeGreaterThan(0);
      expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(response.text).not.toContain(String(port));
    });

    it('504 QUERY_TIMEOUT cancels the Postgres query within 1 s', async () => {
      const marker = `e2e_sleep_${suffix}`;
      const name = `sleepy-postgres-${suffix}`;
      await createAnalytic({
        name,
        connection: 'wh-postgres',
        sql: `SELECT pg_sleep(5) AS ${marker}`,
        limits: { timeout_ms: 500 },
        visibility: 'public',
      });
      const response = await call(g1, 'POST', '/v1/query', {
        key: bob.key,
        json: { source: name, params: {} },
      });
      expectErrorEnvelope(response, 504, 'QUERY_TIMEOUT');
      const answered = performance.now();
      let running = -1;
      while (performance.now() - answered < 1000) {
        running = await withPg(async (c) => {
          const r = await c.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%' || $1 || '%'`,
            [marker],
          );
          return r.rows[0].n as number;
        });
        if (running === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(running, 'the pg_sleep still runs in pg_stat_activity 1 s after the 504').toBe(0);
    });

    it.runIf(mysqlUp)('504 QUERY_TIMEOUT cancels the MariaDB query within 1 s', async () => {
      const marker = `e2e_sleep_${suffix}`;
      const name = `sleepy-mysql-${suffix}`;
      await createAnalytic({
        name,
        connection: 'wh-mysql',
        sql: `SELECT SLEEP(5) AS ${marker}`,
        limits: { timeout_ms: 500 },
        visibility: 'public',
      });
      const response = await call(g1, 'POST', '/v1/query', {
        key: bob.key,
        json: { source: name, params: {} },
      });
      expectErrorEnvelope(response, 504, 'QUERY_TIMEOUT');
      const answered = performance.now();
      let running = -1;
      while (performance.now() - answered < 1000) {
        const list =
          await mysqlAdminQuery<{ Command: string; Info: string | null }[]>('SHOW FULL PROCESSLIST');
        running = list.filter((p) => p.Command === 'Query' && (p.Info ?? '').includes(marker)).length;
        if (running === 0) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(running, 'the SLEEP still runs in SHOW PROCESSLIST 1 s after the 504').toBe(0);
    });
  });

  describe('3. versions', () => {
    it('a PATCH makes version 2 and version 1 stays readable', async () => {
      const name = `versioned-${suffix}`;
      const v1 = {
        name,
        title: 'Sales count',
        connection: 'wh-duckdb',
        sql: 'SELECT count(*) AS sales FROM sales WHERE year = :year',
        params: { year: { type: 'integer', required: true } },
        visibility: 'public',
      };
      await createAnalytic(v1);
      const before = await call(g1, 'POST', '/v1/query', {
        key: bob.key,
        json: { source: name, params: { year: YEAR } },
      });
      expect(before.body.meta.version).toBe(1);
      const patched = await call(g1, 'PATCH', `/v1/owner/analytics/${name}`, {
        key: owner.key,
        json: {
          ...v1,
          title: 'Units sold',
          sql: 'SELECT sum(quantity) AS units FROM sales WHERE year = :year',
        },
      });
      expect(patched.status, patched.text).toBe(200);
      expect(patched.body.analytic.version).toBe(2);
      const after = await call(g1, 'POST', '/v1/query', {
        key: bob.key,
        json: { source: name, params: { year: YEAR } },
      });
      expect(after.status, after.text).toBe(200);
      expect(after.body.meta.version).toBe(2);
      expect(after.body.columns.map((c: { name: string }) => c.name)).toEqual(['units']);
      const old = await call(g1, 'GET', `/v1/owner/analytics/${name}?version=1`, { key: owner.key });
      expect(old.status, old.text).toBe(200);
      expect(old.body.analytic).toMatchObject({ version: 1, current_version: 2 });
      expect(old.body.analytic.definition).toMatchObject({ title: 'Sales count', sql: v1.sql });
      const current = await call(g1, 'GET', `/v1/owner/analytics/${name}`, { key: owner.key });
      expect(current.body.analytic.definition.title).toBe('Units sold');
    });
  });

  describe('4. visibility', () => {
    /** An error body with its request id and the analytic's name taken out, for comparison. */
    function normalised(response: HttpResponse, name: string) {
      const { request_id: _id, ...rest } = response.body.error;
      return { status: response.status, ...JSON.parse(JSON.stringify(rest).replaceAll(name, '<name>')) };
    }

    async function notFoundShape(caller: Account, name: string) {
      const posted = await call(g2, 'POST', '/v1/query', {
        key: caller.key,
        json: { source: name, params: {} },
      });
      const fetched = await call(g2, 'GET', `/v1/analytics/${name}`, { key: caller.key });
      return [normalised(posted, name), normalised(fetched, name)];
    }

    it('a private analytic answers another account exactly like a nonexistent one', async () => {
      const name = `private-${suffix}`;
      await createAnalytic({ name, connection: 'wh-duckdb', sql: 'SELECT 1 AS one', visibility: 'private' });
      const own = await call(g2, 'POST', '/v1/query', { key: owner.key, json: { source: name, params: {} } });
      expect(own.status, own.text).toBe(200);
      const hidden = await notFoundShape(bob, name);
      const absent = await notFoundShape(bob, `absent-${suffix}`);
      expect(hidden[0]).toMatchObject({ status: 404, code: 'SOURCE_NOT_FOUND' });
      expect(hidden).toEqual(absent);
    });

    it('a shared analytic answers the accounts it is shared with, and no one else', async () => {
      const name = `shared-${suffix}`;
      await createAnalytic({
        name,
        connection: 'wh-duckdb',
        sql: 'SELECT 1 AS one',
        visibility: 'shared',
        shared_with: [bob.id],
      });
      const allowed = await call(g2, 'POST', '/v1/query', {
        key: bob.key,
        json: { source: name, params: {} },
      });
      expect(allowed.status, allowed.text).toBe(200);
      expect(allowed.body.results).toEqual([{ one: 1 }]);
      const refused = await notFoundShape(carol, name);
      expect(refused[0]).toMatchObject({ status: 404, code: 'SOURCE_NOT_FOUND' });
      expect(refused).toEqual(await notFoundShape(carol, `absent-${suffix}`));
    });
  });

  describe('5. revocation across instances', () => {
    it('a key revoked on instance 1 is refused by instance 2 within 5 s', async () => {
      const issued = await call(g1, 'POST', '/v1/keys', {
        key: owner.key,
        json: { name: 'to revoke', scopes: ['query'] },
      });
      expect(issued.status, issued.text).toBe(201);
      const secret: string = issued.body.key.secret;
      issuedSecrets.push(secret);
      const query = { key: secret, json: { source: revenueAnalytic('duckdb'), params: { year: YEAR } } };
      const used = await call(g2, 'POST', '/v1/query', query);
      expect(used.status, used.text).toBe(200);

      const revoked = await call(g1, 'DELETE', `/v1/keys/${issued.body.key.id}`, { key: owner.key });
      expect(revoked.status, revoked.text).toBe(200);
      expect(revoked.body.key.revoked_at).toBeTruthy();
      const started = performance.now();
      let last: HttpResponse | undefined;
      while (performance.now() - started < 6000) {
        last = await call(g2, 'POST', '/v1/query', query);
        if (last.status !== 200) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const elapsed = performance.now() - started;
      console.log(`[e2e] revoked key refused by the second instance after ${Math.round(elapsed)} ms`);
      expect(last).toBeDefined();
      expectErrorEnvelope(last as HttpResponse, 401, 'UNAUTHENTICATED');
      expect(elapsed).toBeLessThan(5000);
      // And instance 1, where it was revoked, refuses it at once.
      expectErrorEnvelope(await call(g1, 'POST', '/v1/query', query), 401, 'UNAUTHENTICATED');
    });
  });

  describe('5b. cached answers dropped across instances', () => {
    it("an owner's purge on instance 1 makes instance 2 run the query again within 5 s", async () => {
      const name = `cached-${suffix}`;
      await createAnalytic({
        name,
        connection: 'wh-postgres',
        sql: REVENUE_SQL,
        params: REVENUE_PARAMS,
        cache: { ttl: 3600 },
        visibility: 'public',
      });
      const query = { key: bob.key, json: { source: name, params: { year: YEAR } } };
      const first = await call(g2, 'POST', '/v1/query', query);
      expect(first.status, first.text).toBe(200);
      const again = await call(g2, 'POST', '/v1/query', query);
      expect(again.headers.get('x-cache')).toBe('HIT');

      const purged = await call(g1, 'DELETE', `/v1/owner/analytics/${name}/cache`, { key: owner.key });
      expect(purged.status, purged.text).toBe(204);
      const started = performance.now();
      let last: HttpResponse | undefined;
      while (performance.now() - started < 6000) {
        last = await call(g2, 'POST', '/v1/query', query);
        if (last.headers.get('x-cache') !== 'HIT') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const elapsed = performance.now() - started;
      console.log(`[e2e] purged answer dropped by the second instance after ${Math.round(elapsed)} ms`);
      expect(last?.status).toBe(200);
      expect(last?.headers.get('x-cache')).toBe('MISS');
      expect(last?.body.results).toEqual(first.body.results);
      expect(elapsed).toBeLessThan(5000);
      // Someone else's analytic is not yours to purge: answered as if it did not exist.
      expectErrorEnvelope(
        await call(g1, 'DELETE', `/v1/owner/analytics/${name}/cache`, { key: bob.key }),
        404,
        'NOT_FOUND',
      );
    });
  });

  describe('6. secrets at rest, in logs and in responses', () => {
    it('no key secret or warehouse password is stored, logged or answered after it was issued', async () => {
      const dump = await store.dumpText();
      // The scan must have read real data, or it proves nothing.
      expect(dump).toContain(`owner-${suffix}@e2e.quarry.test`);
      expect(dump).toContain(revenueAnalytic('duckdb'));
      const logs = [g1.stdout(), g1.stderr(), g2.stdout(), g2.stderr()].join('\n');
      expect(logs).toContain('"request"');
      expect(logs).toContain(owner.id);
      expect(issuedSecrets.length).toBeGreaterThanOrEqual(5);

      const passwords = [PG_PASSWORD, ...(mysqlWarehouse ? [MYSQL_PASSWORD] : [])];
      for (const secret of [...issuedSecrets, ...passwords]) {
        expect(dump.includes(secret), `secret found in the control-plane schema`).toBe(false);
        expect(logs.includes(secret), `secret found in the gateway logs`).toBe(false);
      }
      // Each key secret was in exactly one response body, the one that issued it.
      for (const secret of issuedSecrets) {
        expect(http.bodies.filter((b) => b.includes(secret))).toHaveLength(1);
      }
      for (const password of passwords) {
        expect(http.bodies.some((b) => b.includes(password))).toBe(false);
      }
    });
  });
});
