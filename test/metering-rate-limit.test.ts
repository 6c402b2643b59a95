// Per-key rate limits across three real gateway processes sharing Redis (issue 4, item 6):
// the calls admitted for one key stay within its policy whichever instance they reach; when
// Redis goes away mid-run there is no 5xx and each instance keeps limiting on its own; when it
// comes back the limit is shared again within 5 s.
//
// Redis outage: the real Redis on 127.0.0.1:6379 is shared by every engineer's tests and must
// stay up, so the gateways reach it through a small TCP proxy started here
// (support/tcp-proxy.ts). Stopping the proxy closes its listener and destroys every open
// connection: to the gateways that is exactly Redis dying (connections reset, new ones
// refused); restarting it on the same port is Redis coming back.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv } from './support/gateway-process.js';
import { createHttpClient, type HttpResponse } from './support/http-client.js';
import {
  connectTestPostgres,
  deployAnalytic,
  issueKey,
  ledgerOf,
  signUp,
  startGateways,
  type TestAccount,
  tally,
} from './support/metering-fixture.js';
import { createTcpProxy, type TcpProxy } from './support/tcp-proxy.js';
import {
  pgAvailable,
  redisAvailable,
  serviceUp,
  TEST_REDIS_URL,
  uniqueSuffix,
} from './support/test-services.js';

const up = serviceUp(await pgAvailable()) && serviceUp(await redisAvailable());

const suffix = uniqueSuffix();
/** The Free plan's policy here: 20 calls per 10 s, burst 5 (GCRA: one call per T = 0.5 s). */
const POLICY = { limit: 20, window_seconds: 10, burst: 5 };
const T_S = POLICY.window_seconds / POLICY.limit;
/** GCRA's bucket: `burst` calls at once (see gateway/src/rate-limit/gcra.ts). */
const CAPACITY = POLICY.burst;
const INSTANCES = 3;
const WORKERS_PER_INSTANCE = 2;
const SOURCE = `ping-${suffix}`;

const http = createHttpClient();
let store: ControlPlaneSchema;
let proxy: TcpProxy;
let gateways: GatewayProcess[] = [];
let owner: TestAccount;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function query(gateway: GatewayProcess, key: string): Promise<HttpResponse> {
  return http.request(gateway.url, 'POST', '/v1/query', {
    key,
    json: { source: SOURCE, params: {} },
  });
}

/** `r` of the `"default"` item of the IETF RateLimit header: calls left for this key. */
function remaining(response: HttpResponse): number {
  const match = /"default";r=(\d+)/.exec(response.headers.get('ratelimit') ?? '');
  if (!match) throw new Error(`no RateLimit header: ${response.status} ${response.text}`);
  return Number(match[1]);
}

interface Hammered {
  /** Responses per instance, each with the moment (performance.now()) it arrived. */
  readonly perInstance: { response: HttpResponse; at: number }[][];
}

/** Calls `key` from WORKERS_PER_INSTANCE back-to-back clients per instance until `until()` says stop. */
async function hammer(key: string, until: () => boolean): Promise<Hammered> {
  const perInstance = gateways.map(() => [] as { response: HttpResponse; at: number }[]);
  await Promise.all(
    gateways.flatMap((g, i) =>
      Array.from({ length: WORKERS_PER_INSTANCE }, async () => {
        while (!until()) perInstance[i]!.push({ response: await query(g, key), at: performance.now() });
      }),
    ),
  );
  return { perInstance };
}

/** How often each instance has logged falling back to its own limiter so far. */
function fallbacks(): number[] {
  return gateways.map((g) => g.stdout().split('Redis unavailable, limiting per instance').length - 1);
}

/** `remaining` as each instance answers one call of `key`, in instance order. */
async function probe(key: string): Promise<number[]> {
  const seen: number[] = [];
  for (const g of gateways) seen.push(remaining(await query(g, key)));
  return seen;
}

/** A fresh key's bucket is shared when each instance's answer is one below the previous one's. */
const shared = (seen: readonly number[]) =>
  seen.every((r, i) => i === 0 || r === (seen[i - 1] as number) - 1);

/** The most events whose time falls in any window [t, t + windowMs). */
function maxInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= windowMs) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

describe.runIf(up)('rate limits across three instances sharing Redis, and a Redis outage', () => {
  beforeAll(async () => {
    const redis = new URL(TEST_REDIS_URL);
    proxy = await createTcpProxy({ targetHost: redis.hostname, targetPort: Number(redis.port || 6379) });
    store = await createControlPlaneSchema(`quarry_meter_rl_${suffix}`);
    gateways = await startGateways(INSTANCES, {
      ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
      // A quota far above the load: these tests are about the rate limit.
      QUARRY_FREE_CALLS: '1000000',
      QUARRY_RATE_LIMITS: JSON.stringify({ free: POLICY }),
      QUARRY_REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
    });
    const [g1] = gateways as [GatewayProcess];
    owner = await signUp(http, g1, 'owner', suffix);
    await connectTestPostgres(http, g1, owner.key, 'pg');
    await deployAnalytic(http, g1, owner.key, {
      name: SOURCE,
      connection: 'pg',
      sql: 'SELECT 1 AS one',
      visibility: 'public',
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(gateways.map((g) => g.stop()));
    await Promise.allSettled([store?.drop(), proxy?.stop()]);
  }, 60_000);

  it('admits at most the policy in every 10 s window, whichever instances the calls reach', async () => {
    const caller = await signUp(http, gateways[0] as GatewayProcess, 'caller', suffix);
    const started = performance.now();
    const { perInstance } = await hammer(caller.key, () => performance.now() - started > 10_000);
    const all = perInstance.flat();
    const counts = tally(all.map((r) => r.response));
    const admittedPerInstance = perInstance.map((rs) => rs.filter((r) => r.response.status === 200).length);
    console.log(
      `[rate-limit] 10 s over ${INSTANCES} instances: ${JSON.stringify(counts)}, admitted per instance ${admittedPerInstance.join(', ')}`,
    );
    expect(Object.keys(counts).sort()).toEqual(['200', '429 RATE_LIMIT_EXCEEDED']);
    for (const { response } of all.filter((r) => r.response.status === 429)) {
      expectErrorEnvelope(response, 429, 'RATE_LIMIT_EXCEEDED');
      const retryAfter = response.body.error.retry_after;
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(T_S + 0.01);
      expect(Number(response.headers.get('retry-after'))).toBe(Math.ceil(retryAfter));
    }

    // The server's own record: when each admitted call was reserved, by the Postgres clock.
    const times = (await ledgerOf(store.schema, caller.id)).map((e) => e.reserved_ms);
    expect(times).toHaveLength(counts['200'] ?? 0);
    const first = Math.min(...times);
    // GCRA with a bucket of `burst`: a key may spend `burst` at once, then one per T, so no 10 s
    // window holds more than limit + burst (the issue's bound, plus one per instance of tolerance).
    const firstWindow = times.filter((t) => t - first < 10_000).length;
    const afterFirstBurst = times.filter((t) => t - first >= T_S * 1000);
    const steady = maxInWindow(afterFirstBurst, 10_000);
    console.log(
      `[rate-limit] admitted: first 10 s window ${firstWindow}, most in any 10 s window after the opening burst ${steady}, ` +
        `most in any 10 s window ${maxInWindow(times, 10_000)}; fallbacks to memory per instance ${fallbacks().join(', ')}`,
    );
    expect(firstWindow).toBeLessThanOrEqual(POLICY.limit + POLICY.burst + INSTANCES);
    expect(firstWindow).toBeGreaterThanOrEqual(CAPACITY);
    expect(maxInWindow(times, 10_000)).toBeLessThanOrEqual(POLICY.limit + POLICY.burst + INSTANCES);
    expect(steady).toBeLessThanOrEqual(POLICY.limit + POLICY.burst + INSTANCES);
  }, 30_000);

  it('Redis down mid-run: no 5xx, every instance still limits; the shared limit is back within 5 s', async () => {
    const caller = await signUp(http, gateways[0] as GatewayProcess, 'outage-caller', suffix);
    const prober = await signUp(http, gateways[0] as GatewayProcess, 'prober', suffix);
    // Fresh keys, one per probe: a fresh key shows at once whether the instances share its bucket.
    const probeKeys: string[] = [];
    for (let i = 0; i < 17; i++)
      probeKeys.push((await issueKey(http, gateways[0]!, prober.key, `p${i}`)).secret);
    // Before the outage the probe sees one shared bucket...
    expect(await probe(probeKeys.shift() as string)).toEqual([CAPACITY - 1, CAPACITY - 2, CAPACITY - 3]);

    let done = false;
    const run = hammer(caller.key, () => done);
    await sleep(2000);
    await proxy.stop();
    const outageStarted = performance.now();
    await sleep(1500);
    // ...and during it, one bucket per instance (so the probe below can tell the two apart).
    const duringOutage = await probe(probeKeys.shift() as string);
    expect(duringOutage).toEqual([CAPACITY - 1, CAPACITY - 1, CAPACITY - 1]);
    await sleep(2500);
    const outageEnded = performance.now();
    done = true;
    const { perInstance } = await run;

    const all = perInstance.flat();
    const fiveXx = all.filter((r) => r.response.status >= 500);
    expect(fiveXx.map((r) => `${r.response.status} ${r.response.text}`)).toEqual([]);
    expect(Object.keys(tally(all.map((r) => r.response))).sort()).toEqual(['200', '429 RATE_LIMIT_EXCEEDED']);
    const outageSeconds = (outageEnded - outageStarted) / 1000;
    const perInstanceBound = CAPACITY + Math.ceil(outageSeconds / T_S) + 1;
    const during = perInstance.map((rs) => rs.filter((r) => r.at > outageStarted + 100));
    const admittedDuring = during.map((rs) => rs.filter((r) => r.response.status === 200).length);
    const refusedDuring = during.map((rs) => rs.filter((r) => r.response.status === 429).length);
    console.log(
      `[rate-limit] Redis down ${outageSeconds.toFixed(1)} s: admitted per instance ${admittedDuring.join(', ')} ` +
        `(own bound ${perInstanceBound}), refused ${refusedDuring.join(', ')}`,
    );
    for (let i = 0; i < INSTANCES; i++) {
      // Never unlimited: each instance refuses past its own bucket...
      expect(refusedDuring[i]).toBeGreaterThan(0);
      expect(admittedDuring[i]).toBeLessThanOrEqual(perInstanceBound);
      // ...and says so in its log, once.
      expect(gateways[i]!.stdout()).toContain('Redis unavailable, limiting per instance');
    }

    // Redis back: probe with fresh keys until three instances in a row share the bucket (each
    // call's remaining one below the previous instance's).
    await proxy.start();
    const back = performance.now();
    let sharedAfter: number | undefined;
    let rounds = 0;
    for (const key of probeKeys) {
      rounds += 1;
      if (shared(await probe(key))) {
        sharedAfter = performance.now() - back;
        break;
      }
      if (performance.now() - back > 6000) break;
      await sleep(300);
    }
    console.log(
      `[rate-limit] shared limit back ${sharedAfter === undefined ? 'never' : `${Math.round(sharedAfter)} ms`} after Redis returned (${rounds} probes)`,
    );
    expect(sharedAfter, 'the instances never shared a bucket again').toBeDefined();
    expect(sharedAfter as number).toBeLessThan(5000);
    for (const g of gateways) expect(g.stdout()).toContain('Redis is back, limits are shared again');
  }, 40_000);
});
