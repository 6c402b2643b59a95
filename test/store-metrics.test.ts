// The store as /metrics shows it (issue 37, "What to build" 4; docs/deploy.md, "What to monitor"):
// a gateway process on PostgreSQL, reached through a TCP proxy the test stops and starts again,
// reports its pool in `quarry_store_pool_connections{state}` and counts the store calls that fail
// while PostgreSQL is gone in `quarry_store_errors_total` (what the alert QuarryStoreErrors
// reads). deploy-monitoring.test.ts only checks that the names are exported, which they are
// even when nothing feeds them.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createTcpProxy, type TcpProxy } from './support/tcp-proxy.js';
import { pgAvailable, serviceUp, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A sample's value in Prometheus text (undefined when the series is absent). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe.runIf(up)("the store's pool and failures in /metrics", () => {
  let store: ControlPlaneSchema;
  let proxy: TcpProxy;
  let gateway: GatewayProcess;
  const token = randomBytes(18).toString('base64url');

  const metrics = async () => {
    const res = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    return res.text();
  };
  const readyz = async () => {
    const res = await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(10_000) });
    await res.body?.cancel();
    return res.status;
  };

  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_storemetrics_${suffix}`);
    const direct = new URL(store.databaseUrl);
    proxy = await createTcpProxy({ targetHost: direct.hostname, targetPort: Number(direct.port || 5432) });
    const viaProxy = new URL(store.databaseUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(viaProxy.toString(), randomBytes(32).toString('base64')),
        QUARRY_ADMIN_TOKEN: token,
        QUARRY_STORE_TIMEOUT_MS: '2000',
      },
    });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await proxy?.stop();
    await store?.drop();
  }, 30_000);

  it('reports the pool, and counts the calls that failed while PostgreSQL was gone', async () => {
    expect(await readyz()).toBe(200);
    const before = await metrics();
    expect(sample(before, 'quarry_store_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1);
    expect(sample(before, 'quarry_store_pool_connections{state="idle"}')).toBeGreaterThanOrEqual(0);
    expect(sample(before, 'quarry_store_pool_connections{state="waiting"}')).toBe(0);
    const errorsBefore = sample(before, 'quarry_store_errors_total') ?? 0;

    await proxy.stop();
    try {
      // Each /readyz asks the store; with it gone each is a 503 and a failed store call.
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        statuses.push(await readyz());
        await sleep(100);
      }
      expect(statuses).toEqual([503, 503, 503]);
      // /metrics needs no store: it answers, with the failures counted.
      const during = await metrics();
      expect(sample(during, 'quarry_store_errors_total')).toBeGreaterThanOrEqual(errorsBefore + 3);
    } finally {
      await proxy.start();
    }
    // Back without a restart; the counter keeps what it counted.
    const deadline = Date.now() + 15_000;
    while ((await readyz()) !== 200 && Date.now() < deadline) await sleep(200);
    expect(await readyz()).toBe(200);
    expect(sample(await metrics(), 'quarry_store_errors_total')).toBeGreaterThanOrEqual(errorsBefore + 3);
  }, 60_000);
});
