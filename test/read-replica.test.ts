// QUARRY_READ_DATABASE_URL end to end, on the real PostgreSQL. Three gateway processes share one
// control-plane schema: P on the primary alone; R with a "replica" that is the same database
// through a role that may only SELECT (so anything written through it would fail), its pool
// named by `application_name`; F with a replica URL on a port nothing listens on. Owners'
// statements (JSON, CSV), usage pages (JSON, CSV), recent calls and the marketplace's pages answer
// the same bodies on all three; taking SELECT away from the replica's role breaks exactly those
// pages on R while calls, sign-ups, keys and deploys go on (they are the primary's); F serves them
// from the primary, says so once, counts it in /metrics and is ready but degraded on /readyz.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { freePort, type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import {
  connectTestPostgres,
  currentPeriod,
  deployAnalytic,
  expectStatus,
  signUp,
  type TestAccount,
} from './support/metering-fixture.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
const http = createHttpClient();
const ADMIN_TOKEN = `replica-admin-${randomBytes(8).toString('hex')}`;
const READER = `quarry_reader_${suffix}`;
const REPLICA_APP = `quarry-replica-${suffix}`;
const FALLBACK_LOG = 'the read replica does not answer';

/** `url` with another user, password and application_name. */
function withRole(url: string, user: string, password: string | undefined, app: string): string {
  const parsed = new URL(url);
  parsed.username = user;
  if (password !== undefined) parsed.password = password;
  parsed.searchParams.set('application_name', app);
  return parsed.toString();
}

describe.runIf(up)('QUARRY_READ_DATABASE_URL: the heavy read-only pages on a read replica', () => {
  let store: ControlPlaneSchema;
  let primaryOnly: GatewayProcess;
  let withReplica: GatewayProcess;
  let replicaDown: GatewayProcess;
  let owner: TestAccount;
  let caller: TestAccount;
  const analytic = `rep-${suffix}`;

  /** The pages the replica serves, each with the key that reads it. */
  const pages = () => {
    const period = currentPeriod();
    return [
      { path: `/v1/owner/statements?period=${period}`, key: owner.key },
      { path: `/v1/owner/statements?period=${period}&format=csv`, key: owner.key },
      { path: `/v1/account/usage?period=${period}`, key: caller.key },
      { path: `/v1/account/usage?period=${period}&format=csv`, key: caller.key },
      { path: '/v1/account/calls', key: caller.key },
      { path: '/v1/marketplace/listings?sort=popular', key: undefined },
      { path: `/v1/marketplace/listings/${analytic}`, key: undefined },
    ];
  };

  /** A page's status and body, with the instance's own address taken out (the listing's curl). */
  async function read(gateway: GatewayProcess, page: { path: string; key: string | undefined }) {
    const response = await http.request(gateway.url, 'GET', page.path, page.key ? { key: page.key } : {});
    return { status: response.status, body: response.text.replaceAll(gateway.url, 'ORIGIN') };
  }

  const grantReader = () =>
    withPg(async (c) => {
      await c.query(`GRANT USAGE ON SCHEMA ${store.schema} TO ${READER}`);
      await c.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${store.schema} TO ${READER}`);
    });
  const revokeReader = () =>
    withPg((c) => c.query(`REVOKE SELECT ON ALL TABLES IN SCHEMA ${store.schema} FROM ${READER}`));

  async function metric(gateway: GatewayProcess, name: string): Promise<number> {
    const response = await http.request(gateway.url, 'GET', '/metrics', { key: ADMIN_TOKEN });
    const line = response.text.split('\n').find((l) => l.startsWith(`${name} `));
    if (line === undefined) throw new Error(`${name} is not in /metrics`);
    return Number(line.split(' ')[1]);
  }

  async function call(gateway: GatewayProcess, n: number) {
    return http.request(gateway.url, 'POST', '/v1/query', {
      key: caller.key,
      json: { source: analytic, params: { n } },
    });
  }

  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_e2e_replica_${suffix}`);
    const secret = randomBytes(32).toString('base64');
    const env = {
      ...postgresStoreEnv(store.databaseUrl, secret),
      QUARRY_ADMIN_TOKEN: ADMIN_TOKEN,
      QUARRY_LOG_LEVEL: 'info',
      QUARRY_STORE_TIMEOUT_MS: '2000',
    };
    // P migrates the schema; the reader's grant then covers every table the migrations made.
    primaryOnly = await startGateway({ env });
    owner = await signUp(http, primaryOnly, 'replica-owner', suffix);
    caller = await signUp(http, primaryOnly, 'replica-caller', suffix);
    await connectTestPostgres(http, primaryOnly, owner.key, 'pg');
    await deployAnalytic(http, primaryOnly, owner.key, {
      name: analytic,
      connection: 'pg',
      sql: 'SELECT :n::int AS n',
      params: { n: { type: 'integer', required: true, min: 0, max: 1000 } },
      visibility: 'public',
      price: 2,
    });
    expectStatus(
      await http.request(primaryOnly.url, 'PUT', `/v1/owner/analytics/${analytic}/listing`, {
        key: owner.key,
        json: { category: 'tests', description: 'Echoes n.', example_params: { n: 1 } },
      }),
      200,
      'publish',
    );
    for (let n = 0; n < 3; n += 1) expectStatus(await call(primaryOnly, n), 200, 'call');
    const password = randomBytes(12).toString('hex');
    await withPg((c) => c.query(`CREATE ROLE ${READER} LOGIN PASSWORD '${password}'`));
    await grantReader();
    const readerUrl = withRole(store.databaseUrl, READER, password, REPLICA_APP);
    [withReplica, replicaDown] = await Promise.all([
      startGateway({ env: { ...env, QUARRY_READ_DATABASE_URL: readerUrl, QUARRY_READ_POOL_SIZE: '1' } }),
      freePort().then((closed) => {
        const nowhere = new URL(readerUrl);
        nowhere.hostname = '127.0.0.1';
        nowhere.port = String(closed);
        return startGateway({ env: { ...env, QUARRY_READ_DATABASE_URL: nowhere.toString() } });
      }),
    ]);
  }, 180_000);

  afterAll(async () => {
    await Promise.allSettled([primaryOnly?.stop(), withReplica?.stop(), replicaDown?.stop()]);
    await store?.drop();
    await withPg(async (c) => {
      await c.query(`DROP OWNED BY ${READER}`).catch(() => {});
      await c.query(`DROP ROLE IF EXISTS ${READER}`);
    }).catch(() => {});
  }, 60_000);

  it('answers statements, usage, calls and the marketplace through the replica, the same as the primary', async () => {
    for (const page of pages()) {
      const primary = await read(primaryOnly, page);
      expect(primary.status, `${page.path} on the primary`).toBe(200);
      expect(await read(withReplica, page), page.path).toEqual(primary);
    }
    // What the pages show is the ledger: the caller's three calls at 2 credits.
    const statement = await http.request(withReplica.url, 'GET', '/v1/owner/statements', { key: owner.key });
    expect(statement.body.totals).toMatchObject({ calls: 3, credits: 6 });
    const usage = await http.request(withReplica.url, 'GET', '/v1/account/usage', { key: caller.key });
    expect(usage.body.totals.calls).toBe(3);
    const calls = await http.request(withReplica.url, 'GET', '/v1/account/calls', { key: caller.key });
    expect(calls.body.items).toHaveLength(3);
    // The replica's pool is the reader's: one connection (QUARRY_READ_POOL_SIZE=1), SELECT-only.
    const backends = await withPg(async (c) => {
      const result = await c.query<{ usename: string }>(
        'SELECT usename FROM pg_stat_activity WHERE application_name = $1',
        [REPLICA_APP],
      );
      return result.rows.map((r) => r.usename);
    });
    expect(backends).toEqual([READER]);
    expect(await metric(withReplica, 'quarry_read_replica_fallbacks_total')).toBe(0);
    expect(await metric(withReplica, 'quarry_read_replica_fallback')).toBe(0);
    const ready = await http.request(withReplica.url, 'GET', '/readyz', { key: ADMIN_TOKEN });
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ok');
    expect(ready.body.checks.read_replica).toEqual({ ok: true });
  });

  it("reads those pages only through the replica's role, and writes nothing through it", async () => {
    await revokeReader();
    try {
      // The role may read nothing now: every replica page fails on R (a statement's error is
      // not an outage: no fallback), while P answers them from the primary.
      for (const page of pages()) {
        expect((await read(withReplica, page)).status, page.path).toBe(500);
        expect((await read(primaryOnly, page)).status, page.path).toBe(200);
      }
      // Authentication, quota, metering, sign-up, keys and deploys are the primary's.
      expectStatus(await call(withReplica, 10), 200, 'call through R');
      const another = await signUp(http, withReplica, 'replica-late', suffix);
      expectStatus(
        await http.request(withReplica.url, 'POST', '/v1/keys', {
          key: another.key,
          json: { name: 'second' },
        }),
        201,
        'key through R',
      );
      await deployAnalytic(http, withReplica, owner.key, {
        name: `rep2-${suffix}`,
        connection: 'pg',
        sql: 'SELECT 2 AS two',
        visibility: 'public',
      });
    } finally {
      await grantReader();
    }
    // Granted again: R reads the calls it metered above (the same database: no lag here).
    const usage = await http.request(withReplica.url, 'GET', '/v1/account/usage', { key: caller.key });
    expect(usage.status).toBe(200);
    expect(usage.body.totals.calls).toBe(4);
    expect(await metric(withReplica, 'quarry_read_replica_fallbacks_total')).toBe(0);
    expect(withReplica.stdout() + withReplica.stderr()).not.toContain(FALLBACK_LOG);
  });

  it('serves the pages from the primary while the replica is down, says so once, and is ready but degraded', async () => {
    for (const page of pages()) {
      const primary = await read(primaryOnly, page);
      expect(await read(replicaDown, page), page.path).toEqual(primary);
    }
    expectStatus(await call(replicaDown, 20), 200, 'call through F');
    const ready = await http.request(replicaDown.url, 'GET', '/readyz', { key: ADMIN_TOKEN });
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('degraded');
    expect(ready.body.checks.read_replica).toMatchObject({ ok: true, degraded: true });
    expect(ready.body.checks.store).toEqual({ ok: true });
    expect(await metric(replicaDown, 'quarry_read_replica_fallback')).toBe(1);
    expect(await metric(replicaDown, 'quarry_read_replica_fallbacks_total')).toBeGreaterThanOrEqual(
      pages().length,
    );
    const output = replicaDown.stdout() + replicaDown.stderr();
    expect(output.split(FALLBACK_LOG).length - 1).toBe(1);
  });
});
