// The control-plane store failing under load. A real gateway process reaches its store (the real
// PostgreSQL, a schema of its own) through a fault proxy (support/fault-proxy.ts), while callers
// keep sending cache hits and misses. The store is restarted (every connection reset, new ones
// refused for 3 s) and then blackholed for 3 s, each time mid-load. Throughout: no answer is a
// 5xx other than 503 (and every 503 carries retry_after), every 200 has exactly its usage event
// in the ledger and no event exists for a call that was not answered 200, and calls are served
// again within 5 s of the store coming back, without a restart.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { createFaultProxy, type FaultMode, type FaultProxy } from './support/fault-proxy.js';
import { type GatewayProcess, postgresStoreEnv, startGateway } from './support/gateway-process.js';
import { createHttpClient, type HttpResponse } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  signUp,
  type TestAccount,
  tally,
} from './support/metering-fixture.js';
import { pgAvailable, serviceUp, TEST_PG_URL, uniqueSuffix } from './support/test-services.js';

const up = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
const http = createHttpClient();
const WORKERS = 6;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answered {
  readonly response: HttpResponse;
  readonly requestId: string | null;
  readonly at: number;
}

describe.runIf(up)('the control-plane store failing mid-load', () => {
  let store: ControlPlaneSchema;
  let proxy: FaultProxy;
  let gateway: GatewayProcess;
  const callers: TestAccount[] = [];

  beforeAll(async () => {
    const pgUrl = new URL(TEST_PG_URL);
    proxy = await createFaultProxy({ targetHost: pgUrl.hostname, targetPort: Number(pgUrl.port || 5432) });
    store = await createControlPlaneSchema(`quarry_e2e_storefault_${suffix}`);
    const viaProxy = new URL(store.databaseUrl);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    gateway = await startGateway({
      env: {
        ...postgresStoreEnv(viaProxy.toString(), randomBytes(32).toString('base64')),
        QUARRY_STORE_TIMEOUT_MS: '1000',
        QUARRY_LOG_LEVEL: 'warn',
      },
    });
    const owner = await signUp(http, gateway, 'store-owner', suffix);
    await connectTestPostgres(http, gateway, owner.key, 'pg');
    await deployAnalytic(http, gateway, owner.key, {
      name: `hit-${suffix}`,
      connection: 'pg',
      sql: 'SELECT 1 AS one',
      cache: { ttl: 3600 },
      visibility: 'public',
    });
    await deployAnalytic(http, gateway, owner.key, {
      name: `miss-${suffix}`,
      connection: 'pg',
      sql: 'SELECT :n::int AS n',
      params: { n: { type: 'integer', required: true, min: 0, max: 1000000 } },
      visibility: 'public',
    });
    for (const label of ['a', 'b'])
      callers.push(await signUp(http, gateway, `store-caller-${label}`, suffix));
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await proxy?.close();
    await store?.drop();
  }, 60_000);

  /** Cuts the store with `mode` for `ms`, mid-load; returns every answer and when the store came back. */
  async function cutMidLoad(
    mode: FaultMode,
    ms: number,
  ): Promise<{ answers: Answered[]; restoredAt: number }> {
    const answers: Answered[] = [];
    let done = false;
    let n = 0;
    const workers = Array.from({ length: WORKERS }, async (_, w) => {
      const caller = callers[w % callers.length] as TestAccount;
      while (!done) {
        n += 1;
        const hit = n % 2 === 0;
        const response = await http.request(gateway.url, 'POST', '/v1/query', {
          key: caller.key,
          json: hit ? { source: `hit-${suffix}`, params: {} } : { source: `miss-${suffix}`, params: { n } },
        });
        answers.push({ response, requestId: response.headers.get('x-request-id'), at: performance.now() });
      }
    });
    await sleep(1_500);
    await proxy.set(mode);
    // The workers' calls in flight at the cut may all be in one usage write, held in doubt until
    // the store answers (money/in-doubt-metering.ts), and a worker sends nothing new meanwhile:
    // fresh calls made during the cut show how the store's absence is answered.
    const probes: Promise<void>[] = [];
    const cutEnds = performance.now() + ms;
    while (performance.now() < cutEnds) {
      n += 1;
      const body =
        n % 2 === 0 ? { source: `hit-${suffix}`, params: {} } : { source: `miss-${suffix}`, params: { n } };
      const caller = callers[n % callers.length] as TestAccount;
      probes.push(
        http.request(gateway.url, 'POST', '/v1/query', { key: caller.key, json: body }).then((response) => {
          answers.push({ response, requestId: response.headers.get('x-request-id'), at: performance.now() });
        }),
      );
      await sleep(250);
    }
    await proxy.set({ kind: 'pass' });
    const restoredAt = performance.now();
    await sleep(6_000);
    done = true;
    await Promise.all([...workers, ...probes]);
    return { answers, restoredAt };
  }

  /** `refusals`: whether calls must have been refused (a store that refuses connections answers at once). */
  async function check(name: string, mode: FaultMode, refusals: boolean): Promise<void> {
    // A clean slate: the ledger is compared call by call with this phase's answers only (even
    // when an earlier phase failed before it could clean up).
    await withPg((c) =>
      c.query(`DELETE FROM ${store.schema}.usage_events WHERE account_id = ANY($1)`, [
        callers.map((x) => x.id),
      ]),
    );
    const { answers, restoredAt } = await cutMidLoad(mode, 3_000);
    const counts = tally(answers.map((a) => a.response));
    const firstBack = answers.find((a) => a.at > restoredAt && a.response.status === 200);
    const backMs = firstBack === undefined ? Number.POSITIVE_INFINITY : firstBack.at - restoredAt;
    console.log(
      `[store] ${name}: ${JSON.stringify(counts)}; served again ${Math.round(backMs)} ms after the store`,
    );

    // Never a 5xx but 503, and a 503 always says when to retry.
    const bad = answers.filter((a) => a.response.status >= 500 && a.response.status !== 503);
    expect(bad.map((a) => `${a.response.status} ${a.response.text}`)).toEqual([]);
    for (const a of answers.filter((x) => x.response.status === 503)) {
      expect(a.response.body.error.code).toBe('SOURCE_UNAVAILABLE');
      expect(a.response.body.error.retry_after).toBeGreaterThan(0);
    }
    // A blackholed store holds the calls whose usage writes are in doubt until it answers again
    // (money/in-doubt-metering.ts): they are then served, not refused.
    if (refusals) expect(counts['503 SOURCE_UNAVAILABLE'] ?? 0).toBeGreaterThan(0);
    expect(backMs).toBeLessThanOrEqual(5_000);

    // The ledger against the answers: an event for every 200, none for anything else.
    const served = new Set(answers.filter((a) => a.response.status === 200).map((a) => a.requestId));
    const refused = new Set(answers.filter((a) => a.response.status !== 200).map((a) => a.requestId));
    const events = await withPg(async (c) => {
      const result = await c.query<{ request_id: string; status: string }>(
        `SELECT request_id, status FROM ${store.schema}.usage_events WHERE account_id = ANY($1)`,
        [callers.map((x) => x.id)],
      );
      return result.rows;
    });
    const final = events.filter((e) => e.status === 'ok').map((e) => e.request_id);
    const servedWithoutEvent = [...served].filter((id) => !final.includes(id as string));
    const eventWithoutServed = final.filter((id) => !served.has(id));
    expect(servedWithoutEvent, 'served calls without a usage event').toEqual([]);
    expect(
      eventWithoutServed.map(
        (id) => `${id} (${refused.has(id) ? 'answered with an error' : 'never answered'})`,
      ),
      'usage events of calls not served',
    ).toEqual([]);
    expect(gateway.child.exitCode).toBeNull();
  }

  it('restarted (connections reset, refused for 3 s): only 503s, ledger = 200s, back within 5 s', async () => {
    await check('restart', { kind: 'refuse' }, true);
  }, 60_000);

  it('blackholed for 3 s: only 503s, ledger = 200s, back within 5 s', async () => {
    await check('blackhole', { kind: 'blackhole' }, false);
  }, 60_000);
});
