// Metering across three real gateway processes that share one control-plane schema on the real
// Postgres and the real Redis (docs/design.md §4, issue 4 "Done when"):
//   1. a Free account's monthly quota is never over-admitted, however the calls are spread;
//   2. `kill -9` of one instance under load neither loses nor invents a usage event.
// The ledger (usage_events) and the counters (usage_counters) are read straight from Postgres
// and compared with what the clients saw. The crash is released by the survivors' own reaper:
// for that test the three instances are restarted with a short bound (QUARRY_REAP_AFTER_MS=3000
// instead of 15 min); the test never calls the repository itself.
// The kill lands while every call of the victim is inside the warehouse (seen in
// pg_stat_activity): in flight, reserved, not yet committed. A kill in the microseconds between
// a call's commit and its response reaching the socket would leave a charged event for an answer
// the client never got; no gateway can close that window (see the report of issue 4).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlPlaneSchema, createControlPlaneSchema, withPg } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv } from './support/gateway-process.js';
import { createHttpClient, type HttpResponse } from './support/http-client.js';
import {
  connectTestPostgres,
  currentPeriod,
  deployAnalytic,
  issueKey,
  ledgerDrift,
  ledgerOf,
  quotaCounter,
  secondsToNextMonth,
  setPlan,
  signUp,
  startGateways,
  type TestAccount,
  tally,
} from './support/metering-fixture.js';
import {
  pgAvailable,
  redisAvailable,
  serviceUp,
  TEST_REDIS_URL,
  uniqueSuffix,
} from './support/test-services.js';

const up = serviceUp(await pgAvailable()) && serviceUp(await redisAvailable());

const suffix = uniqueSuffix();
const FREE_CALLS = 30;
const GENEROUS = { limit: 100_000, window_seconds: 60, burst: 100_000 };
const QUICK = `quick-${suffix}`;
const SLOW = `slow-${suffix}`;
const VICTIM = `victim-${suffix}`;
/** A column alias that finds the victim instance's warehouse queries in pg_stat_activity. */
const VICTIM_MARKER = `kill_marker_${suffix}`;
const VICTIM_SLEEP_S = 0.2;

const http = createHttpClient();
let store: ControlPlaneSchema;
let gateways: GatewayProcess[] = [];
let owner: TestAccount;
let env: Record<string, string>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The gateways' error-level log lines (pino level ≥ 50), for failure messages. */
function serverErrors(): string {
  const lines = gateways.flatMap((g) => `${g.stdout()}\n${g.stderr()}`.split('\n'));
  return lines
    .filter((l) => /"level":(5|6)\d/.test(l))
    .slice(0, 5)
    .join('\n')
    .slice(0, 4000);
}

/** Replaces the three gateways with fresh ones on the same store, with `extra` in their environment. */
async function restartGateways(extra: Record<string, string>): Promise<void> {
  await Promise.allSettled(gateways.map((g) => g.stop()));
  gateways = await startGateways(3, { ...env, ...extra });
}

function query(gateway: GatewayProcess, key: string, source: string): Promise<HttpResponse> {
  return http.request(gateway.url, 'POST', '/v1/query', { key, json: { source, params: {} } });
}

describe.runIf(up)('metering across three gateway instances (real Postgres and Redis)', () => {
  beforeAll(async () => {
    store = await createControlPlaneSchema(`quarry_meter_x_${suffix}`);
    env = {
      ...postgresStoreEnv(store.databaseUrl, randomBytes(32).toString('base64')),
      QUARRY_FREE_CALLS: String(FREE_CALLS),
      // Limits far above the load: these tests are about the quota and the ledger.
      QUARRY_RATE_LIMITS: JSON.stringify({ free: GENEROUS, payg: GENEROUS }),
      QUARRY_REDIS_URL: TEST_REDIS_URL,
    };
    gateways = await startGateways(3, env);
    const [g1] = gateways as [GatewayProcess];
    owner = await signUp(http, g1, 'owner', suffix);
    await connectTestPostgres(http, g1, owner.key, 'pg');
    await deployAnalytic(http, g1, owner.key, {
      name: QUICK,
      connection: 'pg',
      sql: 'SELECT 1 AS one',
      visibility: 'public',
      price: 1,
    });
    await deployAnalytic(http, g1, owner.key, {
      name: SLOW,
      connection: 'pg',
      sql: 'SELECT 1 AS one FROM pg_sleep(0.1)',
      visibility: 'public',
    });
    await deployAnalytic(http, g1, owner.key, {
      name: VICTIM,
      connection: 'pg',
      sql: `SELECT 1 AS ${VICTIM_MARKER} FROM pg_sleep(${VICTIM_SLEEP_S})`,
      visibility: 'public',
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(gateways.map((g) => g.stop()));
    await store?.drop();
  }, 60_000);

  it('300 concurrent calls over three instances: exactly 30 served, 270 QUOTA_EXCEEDED, 30 events', async () => {
    const caller = await signUp(http, gateways[0] as GatewayProcess, 'free-caller', suffix);
    const started = performance.now();
    const responses = await Promise.all(
      gateways.flatMap((g) => Array.from({ length: 100 }, () => query(g, caller.key, QUICK))),
    );
    const elapsed = performance.now() - started;
    const counts = tally(responses);
    console.log(`[metering] 300 concurrent calls in ${Math.round(elapsed)} ms: ${JSON.stringify(counts)}`);
    expect(counts, serverErrors()).toEqual({ '200': FREE_CALLS, '429 QUOTA_EXCEEDED': 300 - FREE_CALLS });

    // Every instance took part in both outcomes' decisions (the load really was spread).
    const servedPerInstance = gateways.map((_, i) =>
      responses.slice(i * 100, i * 100 + 100).filter((r) => r.status === 200),
    );
    console.log(`[metering] served per instance: ${servedPerInstance.map((s) => s.length).join(', ')}`);

    const expectedReset = secondsToNextMonth();
    for (const refused of responses.filter((r) => r.status === 429)) {
      expectErrorEnvelope(refused, 429, 'QUOTA_EXCEEDED');
      expect(Math.abs(refused.body.error.retry_after - expectedReset)).toBeLessThan(30);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(
        Math.floor(refused.body.error.retry_after),
      );
    }
    const served = responses.filter((r) => r.status === 200);
    const servedIds = served.map((r) => r.headers.get('x-request-id'));
    expect(new Set(servedIds).size).toBe(FREE_CALLS);
    for (const r of served) {
      expect(r.body.meta.request_id).toBe(r.headers.get('x-request-id'));
      expect(r.body.meta.credits).toBe(1);
    }

    const ledger = await ledgerOf(store.schema, caller.id);
    const ok = ledger.filter((e) => e.status === 'ok');
    expect(ledger).toHaveLength(FREE_CALLS); // nothing pending, nothing extra
    expect(ok.map((e) => e.request_id).sort()).toEqual([...servedIds].sort());
    for (const event of ok) {
      expect(event).toMatchObject({
        origin: 'free',
        millicredits: 1_000,
        owner_millicredits: 800,
        platform_millicredits: 200,
        value_musd: 0,
        owner_id: owner.id,
        analytic_name: QUICK,
        key_id: caller.keyId,
        period: currentPeriod(),
      });
    }
    expect(await quotaCounter(store.schema, caller.id)).toBe(FREE_CALLS * 1_000);
    expect(await ledgerDrift(store.schema)).toEqual([]);

    // The 31st call, later and on any instance, is still refused: the quota is spent for the month.
    for (const g of gateways) expectErrorEnvelope(await query(g, caller.key, QUICK), 429, 'QUOTA_EXCEEDED');
    expect(await quotaCounter(store.schema, caller.id)).toBe(FREE_CALLS * 1_000);
  });

  // Both ways of metering a call (money/metering.ts): `always` reserves every call before the
  // warehouse is asked, so the victim's in-flight calls are pending events the survivors' reaper
  // must release; `near-limit` (the default) runs this Pay as you Go account's calls first and
  // charges each once served, so an in-flight call has written nothing at all.
  it.each([
    ['always', 'reserved first: in-flight calls are pending, then reaped'],
    ['near-limit', 'charged after: in-flight calls left nothing'],
  ] as const)(
    'kill -9 of one instance under load (QUARRY_RESERVE_AHEAD=%s, %s): every served call has its one event, no other call has one',
    async (reserveAhead, _what) => {
      // A reaper bound of 3 s instead of 15 min, so the survivors release the crash's reservations
      // within the test. Only here: under the 300-call burst above, a call may wait seconds for a
      // store connection between its reservation and its commit, and a 3 s bound would reap it
      // (it then fails uncharged with 500 INTERNAL, as designed, but that is not this test's point).
      await restartGateways({ QUARRY_REAP_AFTER_MS: '3000', QUARRY_RESERVE_AHEAD: reserveAhead });
      const [g1, victim, g3] = gateways as [GatewayProcess, GatewayProcess, GatewayProcess];
      const caller = await signUp(http, g1, `payg-caller-${reserveAhead}`, suffix);
      // Pay as you Go: no cap, so every call the load makes is admitted and must be recorded.
      await setPlan(store.schema, caller.id, 'payg');
      // A budget far above the load (10,000 USD: 20,000 credits), so every call is admitted.
      await withPg((c) =>
        c.query(`UPDATE ${store.schema}.accounts SET budget_musd = 10000000000 WHERE id = $1`, [caller.id]),
      );
      // One key per instance: the ledger's key_id tells which instance each event came through.
      const keys = [
        { id: caller.keyId, secret: caller.key },
        await issueKey(http, g1, caller.key, 'victim'),
        await issueKey(http, g1, caller.key, 'third'),
      ];
      const WORKERS = 4;
      interface Lane {
        readonly gateway: GatewayProcess;
        readonly key: { readonly id: string; readonly secret: string };
        readonly source: string;
        readonly responses: HttpResponse[];
        /** Requests that got no response (the connection died with the instance). */
        lost: number;
        inFlight: number;
      }
      const lanes: Lane[] = [g1, victim, g3].map((gateway, i) => ({
        gateway,
        key: keys[i] as { id: string; secret: string },
        source: gateway === victim ? VICTIM : SLOW,
        responses: [],
        lost: 0,
        inFlight: 0,
      }));
      let stopping = false;
      const worker = async (lane: Lane) => {
        while (!stopping) {
          lane.inFlight += 1;
          try {
            lane.responses.push(await query(lane.gateway, lane.key.secret, lane.source));
          } catch {
            lane.lost += 1;
            return; // The instance is gone: this client stops, like a client whose server died.
          } finally {
            lane.inFlight -= 1;
          }
        }
      };
      const load = lanes.flatMap((lane) => Array.from({ length: WORKERS }, () => worker(lane)));
      const victimLane = lanes[1] as Lane;

      await sleep(1500);
      // Kill while every call of the victim is inside the warehouse (all WORKERS sleeping, each with
      // at least 80 ms to go): each is in flight, reserved and not yet answered.
      const deadline = performance.now() + 5000;
      let killed = false;
      while (!killed && performance.now() < deadline) {
        const { n, oldest } = await withPg(async (c) => {
          const r = await c.query<{ n: number; oldest: number | null }>(
            `SELECT count(*)::integer AS n,
                  (extract(epoch FROM max(clock_timestamp() - query_start)) * 1000)::double precision AS oldest
             FROM pg_stat_activity
            WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%' || $1 || '%'`,
            [VICTIM_MARKER],
          );
          return r.rows[0] as { n: number; oldest: number | null };
        });
        if (
          n === WORKERS &&
          victimLane.inFlight === WORKERS &&
          (oldest ?? 1e9) < VICTIM_SLEEP_S * 1000 - 80
        ) {
          victim.child.kill('SIGKILL');
          killed = true;
        }
      }
      expect(killed, 'never found every victim call inside the warehouse').toBe(true);
      const inFlightAtKill = victimLane.inFlight;
      const servedBeforeKill = victimLane.responses.length;
      const exit = await victim.exited;
      expect(exit.signal).toBe('SIGKILL');
      const survivorsAtKill = lanes.map((l) => l.responses.length);
      await sleep(1500);
      stopping = true;
      await Promise.all(load);

      const seen = lanes.flatMap((l) => l.responses);
      // The survivors kept serving: only successes, and more of them after the kill.
      for (const lane of [lanes[0], lanes[2]] as Lane[]) {
        expect(tally(lane.responses)).toEqual({ '200': lane.responses.length });
        expect(lane.lost).toBe(0);
      }
      expect(lanes[0]!.responses.length).toBeGreaterThan(survivorsAtKill[0]!);
      expect(lanes[2]!.responses.length).toBeGreaterThan(survivorsAtKill[2]!);
      expect(tally(victimLane.responses)).toEqual({ '200': servedBeforeKill });
      expect(victimLane.lost).toBe(inFlightAtKill);

      // Right after the crash the victim's in-flight calls are reserved but pending (not charged),
      // or, charged after, not in the ledger at all.
      const afterCrash = await ledgerOf(store.schema, caller.id);
      const pendingAfterCrash = afterCrash.filter((e) => e.status === 'pending');
      expect(pendingAfterCrash.map((e) => e.key_id)).toEqual(
        Array(reserveAhead === 'always' ? inFlightAtKill : 0).fill(keys[1]!.id),
      );

      // The survivors' reaper releases them (bound 3 s, run every 3 s).
      const reapStarted = performance.now();
      let ledger = afterCrash;
      while (ledger.some((e) => e.status === 'pending') && performance.now() - reapStarted < 15_000) {
        await sleep(250);
        ledger = await ledgerOf(store.schema, caller.id);
      }
      const reapMs = performance.now() - reapStarted;
      console.log(
        `[metering] kill -9 (${reserveAhead}): ${inFlightAtKill} calls in flight on the killed instance (${servedBeforeKill} served by it before), ` +
          `${seen.length} served in all, ${pendingAfterCrash.length} pending after the crash, reaped within ${Math.round(reapMs)} ms`,
      );
      expect(ledger.filter((e) => e.status === 'pending')).toEqual([]);

      const servedIds = seen.map((r) => r.headers.get('x-request-id') as string);
      expect(new Set(servedIds).size).toBe(servedIds.length);
      const eventIds = ledger.map((e) => e.request_id);
      // Exactly one ok event per served call (request_id is the key), and none for anything else.
      expect(eventIds.sort()).toEqual([...servedIds].sort());
      for (const lane of lanes) {
        const ids = new Set(lane.responses.map((r) => r.headers.get('x-request-id')));
        const events = ledger.filter((e) => e.key_id === lane.key.id);
        expect(events).toHaveLength(ids.size);
        for (const event of events) expect(ids.has(event.request_id)).toBe(true);
      }
      expect(await quotaCounter(store.schema, caller.id)).toBe(ledger.length * 1_000);
      // The day rollups lost and doubled nothing either: each equals the raw events' sums.
      expect(await ledgerDrift(store.schema)).toEqual([]);
    },
    60_000,
  );
});
