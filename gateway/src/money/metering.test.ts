// Metering's choice between reserving a call before the warehouse is asked and charging it once
// served (money/metering.ts), against the real store: embedded PGlite and the real PostgreSQL
// at QUARRY_TEST_PG_URL, a fresh schema per run. What is checked is what the ledger and the
// counter hold at each step, and that the quota is never over-admitted either way.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../auth/principal.js';
import type { CatalogEntry } from '../catalog/catalog.js';
import { ApiError } from '../errors/api-error.js';
import { createSecretBox } from '../security/secret-box.js';
import { type ControlPlaneStore, createControlPlaneStore } from '../store/control-plane-store.js';
import { migrate } from '../store/migrate.js';
import type { SqlClient } from '../store/sql-client.js';
import { storeBackends } from '../store/testing/store-backends.js';
import { createMetering, type Metering, type MeteringOptions } from './metering.js';
import { createMoneyStore, type MoneyStore } from './money-store.js';
import { createPlanCatalog, type Plan } from './plan-catalog.js';

const backends = await storeBackends('metering', 'quarry_metering_mode');
const secretBox = createSecretBox({ keys: { k1: randomBytes(32) }, current: 'k1' });
const unique = () => randomBytes(4).toString('hex');
const NOW = new Date('2031-03-14T12:00:00Z');
const PERIOD = '2031-03';

const plan = (id: string, includedCalls: number | null): Plan => ({
  id,
  name: id,
  included_credits: includedCalls,
  monthly_price_cents: 0,
  credit_price_cents: 0,
});
const PLANS = createPlanCatalog([
  plan('free', 3),
  plan('big', 1_000),
  plan('edge', 120),
  { ...plan('payg', null), credit_price_cents: 50 },
]);

for (const { backend, available } of backends) {
  describe.skipIf(!available)(`metering on ${backend.name}`, () => {
    let sql: SqlClient;
    let store: ControlPlaneStore & MoneyStore;

    beforeAll(async () => {
      sql = await backend.fresh();
      await migrate(sql);
      store = { ...createControlPlaneStore(sql, { secretBox }), ...createMoneyStore(sql) };
    });
    afterAll(() => backend.teardown());

    const meteringWith = (options: Partial<MeteringOptions> = {}): Metering =>
      createMetering({ usage: store.usage, plans: PLANS, now: () => NOW, ...options });

    /** A caller on `planId` with a key, and an analytic of another account priced at 1 credit. */
    const world = async (planId: string) => {
      const caller = await store.accounts.create({ email: `c-${unique()}@example.com`, name: 'caller' });
      const owner = await store.accounts.create({ email: `o-${unique()}@example.com`, name: 'owner' });
      const analytic = await store.analytics.create({
        accountId: owner.id,
        name: `an-${unique()}`,
        definition: { sql: 'SELECT 1', params: {} },
        visibility: 'public',
      });
      const principal: Principal = {
        accountId: caller.id,
        keyId: `key_${unique()}`,
        scopes: ['query'],
        plan: planId,
        rateLimit: { unlimited: true },
        rateLimitBucket: 'test',
        origin: 'api',
        credential: 'api_key',
      } as Principal;
      const entry = {
        analyticId: analytic.id,
        name: analytic.name,
        version: analytic.version,
        ownerId: owner.id,
        definition: { sql: 'SELECT 1', params: {}, price: 1 },
        pricing: { price: 1 },
      } as unknown as CatalogEntry;
      return { caller, principal, entry };
    };
    const requestId = () => `req_${randomBytes(16).toString('hex')}`;
    const ledger = async (accountId: string) =>
      (
        await sql.query<{ request_id: string; status: string; credits: number }>(
          'SELECT request_id, status, millicredits / 1000 AS credits FROM usage_events WHERE account_id = $1 ORDER BY request_id',
          [accountId],
        )
      ).map((e) => ({ ...e, credits: Number(e.credits) }));
    const counter = (accountId: string) => store.usage.counter(accountId, PERIOD);

    it('reserves first while it does not know the headroom, then charges after once it does', async () => {
      const metering = meteringWith();
      const { caller, principal, entry } = await world('big');
      const firstId = requestId();
      const first = await metering.begin(principal, entry, firstId);
      expect(first.reserved).toBe(true);
      // Reserved before the warehouse: a pending event and a counted unit.
      expect(await ledger(caller.id)).toEqual([{ request_id: firstId, status: 'pending', credits: 1 }]);
      expect(await counter(caller.id)).toBe(1);
      expect(await first.commit(5)).toMatchObject({ credits: 1, limit: 1_000, remaining: 999 });

      const secondId = requestId();
      const second = await metering.begin(principal, entry, secondId);
      expect(second.reserved).toBe(false);
      // Nothing written while the warehouse runs.
      expect((await ledger(caller.id)).map((e) => e.request_id)).toEqual([firstId]);
      expect(await counter(caller.id)).toBe(1);
      expect(await second.commit(7)).toMatchObject({ credits: 1, limit: 1_000, remaining: 998 });
      // One write made it final and counted.
      expect(await ledger(caller.id)).toContainEqual({ request_id: secondId, status: 'ok', credits: 1 });
      expect(await counter(caller.id)).toBe(2);
    });

    it('a charged-after call that fails writes nothing and takes no unit', async () => {
      const metering = meteringWith();
      const { caller, principal, entry } = await world('payg');
      await (await metering.begin(principal, entry, requestId())).commit(1); // learns the budget's headroom
      const call = await metering.begin(principal, entry, requestId());
      expect(call.reserved).toBe(false);
      await call.release();
      await call.release();
      expect(await ledger(caller.id)).toHaveLength(1);
      expect(await counter(caller.id)).toBe(1);
      // And it cannot be charged after its release.
      await expect(call.commit(1)).rejects.toThrow(/settled/);
      expect(await ledger(caller.id)).toHaveLength(1);
    });

    it('Pay as you Go is charged after once its budget leaves ample headroom; Free always reserves first', async () => {
      const metering = meteringWith();
      const payg = await world('payg');
      // The default budget (100 USD) buys 200 credits: after the first call, 199 ≥ the margin.
      const first = await metering.begin(payg.principal, payg.entry, requestId());
      expect(first.reserved).toBe(true);
      expect(await first.commit(1)).toMatchObject({ credits: 1, limit: 200, remaining: 199 });
      expect((await metering.begin(payg.principal, payg.entry, requestId())).reserved).toBe(false);
      const free = await world('free');
      for (let i = 0; i < 3; i++) {
        const call = await metering.begin(free.principal, free.entry, requestId());
        expect(call.reserved).toBe(true);
        await call.commit(1);
      }
      const refused = await metering.begin(free.principal, free.entry, requestId()).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).code).toBe('QUOTA_EXCEEDED');
      expect(await counter(free.caller.id)).toBe(3);
    });

    it('goes back to reserving first once the headroom, less the calls in flight, is under the margin', async () => {
      const metering = meteringWith({ reserveMargin: 100 });
      const { caller, principal, entry } = await world('edge'); // 120 calls
      await (await metering.begin(principal, entry, requestId())).commit(1); // remaining 119
      const inFlight = [];
      for (let i = 0; i < 19; i++) inFlight.push(await metering.begin(principal, entry, requestId()));
      expect(inFlight.every((c) => c.reserved === false)).toBe(true);
      // 119 left, 19 in flight: 100, still at the margin.
      const atMargin = await metering.begin(principal, entry, requestId());
      expect(atMargin.reserved).toBe(false);
      // 20 in flight now: 99 < 100.
      const under = await metering.begin(principal, entry, requestId());
      expect(under.reserved).toBe(true);
      await Promise.all([...inFlight, atMargin, under].map((c) => c.commit(1)));
      expect(await counter(caller.id)).toBe(22);
      expect((await ledger(caller.id)).every((e) => e.status === 'ok')).toBe(true);
    });

    it('never over-admits: charged-after calls racing past the limit are refused and recorded nowhere', async () => {
      // Margin 0: every call after the first is charged after, even the ones past the limit.
      const metering = meteringWith({ reserveMargin: 0 });
      const { caller, principal, entry } = await world('free'); // 3 calls
      await (await metering.begin(principal, entry, requestId())).commit(1);
      const calls = await Promise.all(
        Array.from({ length: 2 }, () => metering.begin(principal, entry, requestId())),
      );
      // Headroom 2 ≥ margin 0 minus in-flight: admitted to run; a third would see -1 < 0.
      expect(calls.map((c) => c.reserved)).toEqual([false, false]);
      // Six more: the first still charged after, the rest reserve first (and are refused there
      // or take the units the charged-after calls then lose).
      const more = await Promise.allSettled(
        Array.from({ length: 6 }, () => metering.begin(principal, entry, requestId())),
      );
      const admitted = [...calls, ...more.flatMap((m) => (m.status === 'fulfilled' ? [m.value] : []))];
      const outcomes = [
        ...more.filter((m) => m.status === 'rejected'),
        ...(await Promise.allSettled(admitted.map((c) => c.commit(1)))),
      ];
      const served = outcomes.filter((o) => o.status === 'fulfilled');
      expect(served).toHaveLength(2);
      for (const o of outcomes) {
        if (o.status === 'rejected') expect((o.reason as ApiError).code).toBe('QUOTA_EXCEEDED');
      }
      expect(await counter(caller.id)).toBe(3);
      const events = await ledger(caller.id);
      expect(events).toHaveLength(3);
      expect(events.every((e) => e.status === 'ok')).toBe(true);
    });

    it('with reserveAhead "always" every call reserves first', async () => {
      const metering = meteringWith({ reserveAhead: 'always' });
      const { principal, entry } = await world('payg');
      for (let i = 0; i < 3; i++) {
        const call = await metering.begin(principal, entry, requestId());
        expect(call.reserved).toBe(true);
        await call.commit(1);
      }
    });

    it("a reserved call's commit and release name the month it was reserved in", async () => {
      const commits: unknown[] = [];
      const releases: unknown[][] = [];
      const usage = {
        ...store.usage,
        commitMany: (inputs: Parameters<typeof store.usage.commitMany>[0]) => {
          commits.push(...inputs.map((i) => ({ requestId: i.requestId, period: i.period })));
          return store.usage.commitMany(inputs);
        },
        release: (id: string, period?: string) => {
          releases.push([id, period]);
          return store.usage.release(id, period);
        },
      };
      const metering = meteringWith({ reserveAhead: 'always', usage });
      const { caller, principal, entry } = await world('big');
      const served = requestId();
      await (await metering.begin(principal, entry, served)).commit(1);
      const failed = requestId();
      await (await metering.begin(principal, entry, failed)).release();
      expect(commits).toEqual([{ requestId: served, period: PERIOD }]);
      expect(releases).toEqual([[failed, PERIOD]]);
      expect(await ledger(caller.id)).toEqual([{ request_id: served, status: 'ok', credits: 1 }]);
      expect(await counter(caller.id)).toBe(1);
    });

    it('a commit or release given another month finds nothing there and records nothing as served', async () => {
      const { caller, principal, entry } = await world('big');
      const metering = meteringWith({ reserveAhead: 'always' });
      const id = requestId();
      const call = await metering.begin(principal, entry, id);
      expect(call.reserved).toBe(true);
      expect(await store.usage.commitMany([{ requestId: id, latencyMs: 1, period: '2031-02' }])).toEqual([
        'missing',
      ]);
      expect(await store.usage.release(id, '2031-02')).toBe('missing');
      expect(await ledger(caller.id)).toEqual([{ request_id: id, status: 'pending', credits: 1 }]);
      await expect(store.usage.release(id, 'March')).rejects.toThrow(RangeError);
      await call.commit(1);
      expect(await ledger(caller.id)).toEqual([{ request_id: id, status: 'ok', credits: 1 }]);
    });

    it('a marketplace try-it call is charged after, free, and counts against no quota', async () => {
      const metering = meteringWith();
      const { caller, principal, entry } = await world('free');
      const call = await metering.begin({ ...principal, origin: 'marketplace' }, entry, requestId());
      expect(call.reserved).toBe(false);
      expect(call.credits).toBe(0);
      expect(await call.commit(1)).toMatchObject({ credits: 0, limit: null, remaining: null });
      expect(await ledger(caller.id)).toEqual([expect.objectContaining({ status: 'ok', credits: 0 })]);
      expect(await counter(caller.id)).toBe(0);
    });
  });
}
