// What callers and owners see when a warehouse fails (issue: breakers, timeouts). A real gateway
// process reaches the real PostgreSQL and MariaDB warehouses through fault proxies
// (support/fault-proxy.ts), which reset, refuse, blackhole or drip their connections. For each
// fault and each warehouse: every call fails within its time limit + 1 s (503 or 504, never
// later, never a 500), the connection's circuit opens after the configured number of faults,
// calls then fail fast with 503 SOURCE_UNAVAILABLE and a retry_after up to the half-open probe,
// the owner, /readyz (operator) and /metrics show the circuit open, and once the warehouse is
// back one probe closes it. Failed calls are never charged; a caller's bad params and an owner's
// SQL error never count as warehouse faults.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { createFaultProxy, type FaultMode, type FaultProxy } from './support/fault-proxy.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient, type HttpResponse } from './support/http-client.js';
import { deployAnalytic, expectStatus, signUp, type TestAccount } from './support/metering-fixture.js';
import {
  mysqlAvailable,
  pgAvailable,
  serviceUp,
  TEST_MYSQL_URL,
  TEST_PG_URL,
  uniqueSuffix,
} from './support/test-services.js';
import { createMysqlWarehouse, type MysqlWarehouse } from './support/warehouses.js';

const up = serviceUp(await pgAvailable()) && serviceUp(await mysqlAvailable());
const suffix = uniqueSuffix();
const http = createHttpClient();
const ADMIN = `admin-${randomBytes(16).toString('hex')}`;
/** The analytics' time limit. */
const TIMEOUT_MS = 1_000;
const BREAKER_FAILURES = 3;
const BREAKER_OPEN_MS = 1_500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Timed {
  readonly response: HttpResponse;
  readonly ms: number;
}

describe.runIf(up)('warehouse faults: time limits, circuit breakers', () => {
  let store: ControlPlaneSchema;
  let gateway: GatewayProcess;
  let mysqlWarehouse: MysqlWarehouse;
  const proxies: Record<'pg' | 'my', FaultProxy> = {} as Record<'pg' | 'my', FaultProxy>;
  const connectionIds: Record<'pg' | 'my', string> = { pg: '', my: '' };
  let owner: TestAccount;
  let caller: TestAccount;
  let served = 0;

  beforeAll(async () => {
    const pgUrl = new URL(TEST_PG_URL);
    const myUrl = new URL(TEST_MYSQL_URL);
    proxies.pg = await createFaultProxy({
      targetHost: pgUrl.hostname,
      targetPort: Number(pgUrl.port || 5432),
    });
    proxies.my = await createFaultProxy({
      targetHost: myUrl.hostname,
      targetPort: Number(myUrl.port || 3306),
    });
    mysqlWarehouse = await createMysqlWarehouse(`qfault_${suffix}`, randomBytes(12).toString('hex'), 10);
    store = await createControlPlaneSchema(`quarry_e2e_faults_${suffix}`);
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
        QUARRY_ADMIN_TOKEN: ADMIN,
        QUARRY_BREAKER_FAILURES: String(BREAKER_FAILURES),
        QUARRY_BREAKER_OPEN_MS: String(BREAKER_OPEN_MS),
        QUARRY_WAREHOUSE_CONNECT_TIMEOUT_MS: '800',
      },
    });
    owner = await signUp(http, gateway, 'fault-owner', suffix);
    caller = await signUp(http, gateway, 'fault-caller', suffix);
    const pgConnection = expectStatus(
      await http.request(gateway.url, 'POST', '/v1/owner/connections', {
        key: owner.key,
        json: {
          name: 'pg',
          type: 'postgres',
          config: {
            host: '127.0.0.1',
            port: proxies.pg.port,
            user: decodeURIComponent(pgUrl.username) || 'postgres',
            database: pgUrl.pathname.slice(1) || 'test',
          },
        },
      }),
      201,
      'pg connection',
    );
    connectionIds.pg = pgConnection.body.connection.id;
    const myConnection = expectStatus(
      await http.request(gateway.url, 'POST', '/v1/owner/connections', {
        key: owner.key,
        json: {
          name: 'my',
          type: 'mysql',
          config: {
            host: '127.0.0.1',
            port: proxies.my.port,
            user: mysqlWarehouse.user,
            password: mysqlWarehouse.password,
            database: mysqlWarehouse.database,
          },
        },
      }),
      201,
      'mysql connection',
    );
    connectionIds.my = myConnection.body.connection.id;
    const limits = { timeout_ms: TIMEOUT_MS, max_rows: 10 };
    for (const [name, connection, sql] of [
      ['pg-small', 'pg', 'SELECT 1 AS one'],
      ['pg-wide', 'pg', "SELECT repeat('x', 50000) AS s"],
      ['my-small', 'my', 'SELECT 1 AS one'],
      ['my-wide', 'my', "SELECT REPEAT('x', 50000) AS s"],
    ] as const) {
      await deployAnalytic(http, gateway, owner.key, {
        name: `${name}-${suffix}`,
        connection,
        sql,
        limits,
        visibility: 'public',
      });
    }
    await deployAnalytic(http, gateway, owner.key, {
      name: `pg-param-${suffix}`,
      connection: 'pg',
      sql: 'SELECT :n::int AS n',
      params: { n: { type: 'integer', required: true, min: 1, max: 10 } },
      limits,
      visibility: 'public',
    });
    await deployAnalytic(http, gateway, owner.key, {
      name: `pg-broken-${suffix}`,
      connection: 'pg',
      sql: 'SELECT 1 / (random() * 0)::int AS boom',
      limits,
      visibility: 'public',
    });
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await Promise.allSettled([proxies.pg?.close(), proxies.my?.close()]);
    await Promise.allSettled([store?.drop(), mysqlWarehouse?.drop()]);
  }, 60_000);

  async function call(source: string, params: Record<string, unknown> = {}): Promise<Timed> {
    const started = performance.now();
    const response = await http.request(gateway.url, 'POST', '/v1/query', {
      key: caller.key,
      json: { source: `${source}-${suffix}`, params },
      headers: { 'cache-control': 'no-cache' },
    });
    if (response.status === 200) served += 1;
    return { response, ms: performance.now() - started };
  }

  async function circuitOf(which: 'pg' | 'my') {
    const shown = expectStatus(
      await http.request(gateway.url, 'GET', `/v1/owner/connections/${connectionIds[which]}`, {
        key: owner.key,
      }),
      200,
      'owner GET connection',
    );
    return shown.body.circuit as { state: string; consecutive_failures: number; retry_after?: number };
  }

  /** Waits until the warehouse answers again through the probe, and checks the circuit closed. */
  async function recover(which: 'pg' | 'my'): Promise<void> {
    await proxies[which].set({ kind: 'pass' });
    const deadline = performance.now() + BREAKER_OPEN_MS + 5_000;
    for (;;) {
      const { response } = await call(`${which}-small`);
      if (response.status === 200) break;
      expect([503, 504], response.text).toContain(response.status);
      if (performance.now() > deadline) throw new Error(`${which} never recovered: ${response.text}`);
      await sleep(Math.max(50, Math.ceil((response.body.error.retry_after ?? 0.1) * 1000)));
    }
    expect(await circuitOf(which)).toMatchObject({ state: 'closed', consecutive_failures: 0 });
  }

  const faults: readonly { name: string; mode: FaultMode; source: 'small' | 'wide' }[] = [
    { name: 'reset', mode: { kind: 'reset' }, source: 'small' },
    { name: 'refuse', mode: { kind: 'refuse' }, source: 'small' },
    { name: 'blackhole', mode: { kind: 'blackhole' }, source: 'small' },
    { name: 'slow drip', mode: { kind: 'drip', bytesPerSecond: 2_000 }, source: 'wide' },
  ];

  for (const which of ['pg', 'my'] as const) {
    for (const fault of faults) {
      it(`${which}: ${fault.name} fails each call within its time limit + 1 s, opens the circuit, and one probe closes it`, async () => {
        // A warm session in the pool, so the fault also hits one that is open.
        const warm = await call(`${which}-${fault.source}`);
        expect(warm.response.status, warm.response.text).toBe(200);
        await proxies[which].set(fault.mode);

        const failures: Timed[] = [];
        for (let i = 0; i < BREAKER_FAILURES; i++) failures.push(await call(`${which}-${fault.source}`));
        console.log(
          `[faults] ${which} ${fault.name}: ${failures.map((f) => `${f.response.status} in ${Math.round(f.ms)} ms`).join(', ')}`,
        );
        for (const { response, ms } of failures) {
          expect([503, 504], response.text).toContain(response.status);
          expectErrorEnvelope(
            response,
            response.status,
            response.status === 503 ? 'SOURCE_UNAVAILABLE' : 'QUERY_TIMEOUT',
          );
          expect(ms).toBeLessThan(TIMEOUT_MS + 1_000);
        }

        // Open: fail fast, with retry_after up to the probe.
        const fast = await call(`${which}-${fault.source}`);
        expectErrorEnvelope(fast.response, 503, 'SOURCE_UNAVAILABLE');
        expect(fast.ms).toBeLessThan(300);
        const retryAfter = fast.response.body.error.retry_after as number;
        expect(retryAfter).toBeGreaterThan(0);
        expect(retryAfter).toBeLessThanOrEqual(BREAKER_OPEN_MS / 1000);
        expect(Number(fast.response.headers.get('retry-after'))).toBe(Math.ceil(retryAfter));

        const circuit = await circuitOf(which);
        expect(circuit.state).toBe('open');
        expect(circuit.retry_after).toBeGreaterThan(0);
        const ready = await http.request(gateway.url, 'GET', '/readyz', { key: ADMIN });
        // One owner's warehouse failing does not take the gateway out of rotation.
        expect(ready.status).toBe(200);
        expect(ready.body.checks[`connection:${connectionIds[which]}`].message).toMatch(/circuit open/);
        const anonymous = await http.request(gateway.url, 'GET', '/readyz');
        expect(anonymous.text).not.toContain(connectionIds[which]);
        const metrics = (await http.request(gateway.url, 'GET', '/metrics', { key: ADMIN })).text;
        expect(metrics).toContain(
          `quarry_connection_circuit{connection="${connectionIds[which]}",state="open"} 1`,
        );
        // The sessions the fault broke were destroyed, not returned to the pool.
        expect(metrics).not.toMatch(
          new RegExp(`quarry_pool_sessions_idle\\{connection="${connectionIds[which]}"[^}]*\\} [1-9]`),
        );

        await recover(which);
      }, 30_000);
    }
  }

  it("counts neither a caller's bad params nor an owner's SQL error as warehouse faults", async () => {
    for (let i = 0; i < BREAKER_FAILURES + 2; i++) {
      const bad = await call('pg-param', { n: 99 });
      expectErrorEnvelope(bad.response, 400, 'INVALID_PARAMS');
      const broken = await call('pg-broken');
      expectErrorEnvelope(broken.response, 502, 'UPSTREAM_ERROR');
    }
    expect(await circuitOf('pg')).toMatchObject({ state: 'closed', consecutive_failures: 0 });
    const ok = await call('pg-param', { n: 3 });
    expect(ok.response.status, ok.response.text).toBe(200);
  }, 30_000);

  it('charged only the calls it served', async () => {
    const usage = expectStatus(
      await http.request(gateway.url, 'GET', '/v1/account/usage', { key: caller.key }),
      200,
      'usage',
    );
    expect(usage.body.totals.calls).toBe(served);
    expect(gateway.stdout()).not.toContain('"level":50');
  });
});
