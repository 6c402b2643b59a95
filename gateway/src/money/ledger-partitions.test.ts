// The partitioned ledger (migration 017): moving a store with data from the unpartitioned table
// loses nothing and every total stays equal; months are created ahead, an event of a month nobody
// prepared is kept (default partition) and moved into its month later; closed months past the
// retention lose their raw events but not their rollups, statements or usage pages.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../errors/store-error.js';
import type { Logger } from '../observability/logger.js';
import { createSecretBox } from '../security/secret-box.js';
import { createControlPlaneStore } from '../store/control-plane-store.js';
import { loadMigrations, migrate } from '../store/migrate.js';
import type { SqlExecutor } from '../store/sql-client.js';
import { storeBackends } from '../store/testing/store-backends.js';
import { addMonths, createLedgerMaintenance } from './ledger-retention.js';
import { createMoneyStore } from './money-store.js';
import { type LedgerDrift, ledgerDriftSql } from './testing/ledger-drift.js';

const backends = await storeBackends('ledger partitions', 'quarry_ledger');
const secretBox = createSecretBox({ keys: { k1: randomBytes(32) }, current: 'k1' });
const silent = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as unknown as Logger;

/** Per period: events, served calls and the sum of every amount column, as text (exact). */
const TOTALS = `SELECT period::text AS period, count(*)::text AS events,
                       count(*) FILTER (WHERE status = 'ok')::text AS served,
                       sum(millicredits)::text AS mc, sum(owner_millicredits)::text AS omc,
                       sum(platform_millicredits)::text AS pmc, sum(value_musd)::text AS val,
                       sum(owner_musd)::text AS omusd, sum(platform_musd)::text AS pmusd,
                       count(DISTINCT request_id)::text AS ids
                  FROM usage_events GROUP BY period ORDER BY period`;

/**
 * Writes `n` events per period the way the unpartitioned ledger held them: 2 owners, 4 accounts,
 * 3 analytics, every origin, a tenth still pending, and (the first period) splits from before 009
 * that the 800-a-credit check would refuse.
 */
async function seedOldLedger(db: SqlExecutor, periods: readonly string[], n: number) {
  // As a store from before 009 holds them: rows the check (added NOT VALID by 009) never saw.
  await db.query('ALTER TABLE usage_events DROP CONSTRAINT usage_events_owner_800_per_credit');
  for (const [p, period] of periods.entries()) {
    await db.query(
      `INSERT INTO usage_events (request_id, account_id, key_id, period, plan, analytic_id, analytic_name, version,
                                 owner_id, origin, millicredits, owner_millicredits, platform_millicredits,
                                 value_musd, owner_musd, platform_musd, status, latency_ms, reserved_at, completed_at)
       SELECT 'req_old_' || $1::text || '_' || g, 'acc_' || (g % 4), NULL, $2::text,
              CASE WHEN g % 7 = 0 THEN NULL ELSE 'smb' END,
              'ana_' || (g % 3), 'analytic-' || (g % 3), 1, 'own_' || (g % 3 % 2),
              o.origin, o.mc, CASE WHEN $4::boolean AND g % 5 = 0 THEN o.mc * 7 / 10 ELSE o.mc * 8 / 10 END,
              o.mc - CASE WHEN $4::boolean AND g % 5 = 0 THEN o.mc * 7 / 10 ELSE o.mc * 8 / 10 END,
              o.val, o.val * 80 / 100, o.val - o.val * 80 / 100,
              CASE WHEN g % 10 = 0 THEN 'pending' ELSE 'ok' END, 12.5,
              ($2::text || '-01')::timestamptz + (g % 27) * interval '1 day' + (g % 13) * interval '1 hour',
              CASE WHEN g % 10 = 0 THEN NULL ELSE ($2::text || '-01')::timestamptz + (g % 27) * interval '1 day' END
         FROM generate_series(1, $3::integer) AS g,
              LATERAL (SELECT CASE g % 4 WHEN 0 THEN 'paid' WHEN 1 THEN 'free' WHEN 2 THEN 'marketplace' ELSE 'owner' END
                                AS origin) AS k,
              LATERAL (SELECT k.origin,
                              CASE WHEN k.origin IN ('paid', 'free') THEN (1 + g % 9) * 1000 ELSE 0 END::bigint AS mc,
                              CASE WHEN k.origin = 'paid' THEN (1 + g % 9) * 196000 ELSE 0 END::bigint AS val) AS o`,
      [String(p), period, n, p === 0],
    );
  }
  await db.query(
    'ALTER TABLE usage_events ADD CONSTRAINT usage_events_owner_800_per_credit CHECK (owner_millicredits * 10 = millicredits * 8) NOT VALID',
  );
}

for (const { backend, available } of backends) {
  describe.skipIf(!available)(`ledger partitions on ${backend.name}`, () => {
    afterAll(() => backend.teardown());

    it('moving a store with data to the partitioned ledger loses nothing: totals, rollups, statements and usage pages equal the old sums', async () => {
      const db = await backend.fresh();
      const all = await loadMigrations();
      const upTo = all.findIndex((m) => m.name.startsWith('017_'));
      expect(upTo).toBeGreaterThan(0);
      await migrate(db, { migrations: all.slice(0, upTo) });
      const periods = ['2025-09', '2025-10', '2026-01'];
      await seedOldLedger(db, periods, backend.name === 'postgres' ? 4000 : 1500);
      const before = await db.query(TOTALS);
      const ownerLines = `SELECT owner_id, (reserved_at AT TIME ZONE 'UTC')::date::text AS day, analytic_name, origin,
                                 count(*)::text AS calls, sum(value_musd)::text AS val, sum(owner_musd)::text AS omusd
                            FROM usage_events WHERE status = 'ok' GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`;
      const linesBefore = await db.query(ownerLines);
      expect(before).toHaveLength(3);

      await migrate(db);

      expect(await db.query(TOTALS)).toEqual(before);
      expect(await db.query(ownerLines)).toEqual(linesBefore);
      expect(await db.query<LedgerDrift>(ledgerDriftSql())).toEqual([]);
      const money = createMoneyStore(db);
      // Each month in its own partition, this month and two ahead prepared.
      const months = await money.usage.ledgerMonths();
      for (const period of periods) expect(months).toContain(period);
      const now = new Date().toISOString().slice(0, 7);
      for (const k of [0, 1, 2]) expect(months).toContain(addMonths(now, k));
      const [inDefault] = await db.query<{ n: number }>(
        'SELECT count(*)::integer AS n FROM usage_events_default',
      );
      expect(inDefault?.n).toBe(0);

      // The statement and the usage page read the rollups: equal to the old raw sums.
      const [own] = await db.query<{ calls: string; omusd: string }>(
        `SELECT count(*)::text AS calls, sum(owner_musd)::text AS omusd FROM usage_events
          WHERE owner_id = 'own_0' AND period = '2025-10' AND status = 'ok'`,
      );
      const statement = await money.statements.ownerStatement('own_0', '2025-10');
      expect(String(statement.totals.calls)).toBe(own?.calls);
      expect(String(statement.totals.ownerMicroUsd)).toBe(own?.omusd);
      const [acc] = await db.query<{ calls: string; mc: string; val: string }>(
        `SELECT count(*)::text AS calls, sum(millicredits)::text AS mc, sum(value_musd)::text AS val FROM usage_events
          WHERE account_id = 'acc_0' AND period = '2025-09' AND status = 'ok' AND origin IN ('paid', 'free')`,
      );
      const usage = await money.usage.usageFor('acc_0', '2025-09');
      expect([usage.totals.calls, usage.totals.millicredits, usage.totals.valueMicroUsd].map(String)).toEqual(
        [acc?.calls, acc?.mc, acc?.val],
      );

      // Legacy splits stay as recorded; a new event of a copied month is still checked.
      await expect(
        db.query(
          `INSERT INTO usage_events (request_id, account_id, period, analytic_id, analytic_name, version, owner_id,
                                     origin, millicredits, owner_millicredits, platform_millicredits, status)
           VALUES ('req_bad', 'acc_0', '2025-09', 'ana_0', 'analytic-0', 1, 'own_0', 'free', 1000, 700, 300, 'pending')`,
        ),
      ).rejects.toThrow(/owner_800_per_credit/);
    }, 120_000);

    it("counts a paying caller once, on its last paid day: a new day moves it, the owner's own calls never count", async () => {
      const db = await backend.fresh();
      await migrate(db);
      const roll = (day: string, account: string, origin: string, owner = 'own_a') =>
        db.query(
          `SELECT quarry_roll_up(ARRAY['2026-05'], ARRAY[$1::date], ARRAY[$2], ARRAY[$4], ARRAY['ana_a'], ARRAY['a'],
                                 ARRAY['smb'], ARRAY[$3], ARRAY[1::bigint], ARRAY[1000::bigint], ARRAY[800::bigint],
                                 ARRAY[200::bigint], ARRAY[196000::bigint], ARRAY[156800::bigint], ARRAY[39200::bigint])`,
          [day, account, origin, owner],
        );
      await roll('2026-05-01', 'acc_x', 'paid');
      await roll('2026-05-01', 'acc_x', 'paid');
      await roll('2026-05-03', 'acc_y', 'paid');
      await roll('2026-05-04', 'acc_x', 'paid');
      await roll('2026-05-02', 'acc_x', 'paid'); // an older day never moves it back
      await roll('2026-05-04', 'acc_z', 'free');
      const days = await db.query<{ day: string; callers: number }>(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day, callers::integer AS callers FROM usage_analytic_caller_days
          WHERE analytic_id = 'ana_a' AND callers <> 0 ORDER BY day`,
      );
      expect(days).toEqual([
        { day: '2026-05-03', callers: 1 },
        { day: '2026-05-04', callers: 1 },
      ]);
      const [owner] = await db.query<{ calls: number; mc: number }>(
        `SELECT sum(calls)::integer AS calls, sum(millicredits)::integer AS mc FROM usage_owner_days
          WHERE analytic_id = 'ana_a' AND origin = 'paid'`,
      );
      expect(owner).toEqual({ calls: 5, mc: 5000 });
    });

    it('an unprepared month lands in the default partition and moves into its own when created; closed months past the retention lose raw events, not sums', async () => {
      const db = await backend.fresh();
      await migrate(db);
      const store = createControlPlaneStore(db, { secretBox });
      const money = createMoneyStore(db);
      const caller = await store.accounts.create({ email: `c-${Date.now()}@example.com`, name: 'c' });
      const owner = await store.accounts.create({ email: `o-${Date.now()}@example.com`, name: 'o' });
      const analytic = await store.analytics.create({
        accountId: owner.id,
        name: 'ranked',
        definition: { sql: 'SELECT 1' },
        visibility: 'public',
      });
      let seq = 0;
      const serve = async (period: string, credits: number) => {
        const result = await money.usage.reserveMany([
          {
            requestId: `req_${period}_${seq++}`,
            accountId: caller.id,
            keyId: null,
            period,
            plan: 'smb',
            limit: null,
            budget: null,
            creditValueMicroUsd: 196_000,
            analyticId: analytic.id,
            analyticName: analytic.name,
            version: analytic.version,
            ownerId: owner.id,
            origin: 'paid',
            credits,
            served: { latencyMs: 1 },
          },
        ]);
        expect(result[0]).toMatchObject({ ok: true });
      };
      // Three months far ahead (no partition yet): the events go to the default partition.
      const [old, kept, open] = ['2031-01', '2031-03', '2031-04'];
      for (const period of [old!, kept!, open!])
        for (const credits of [1, 2, 3]) await serve(period, credits);
      const defaultCount = async () =>
        (await db.query<{ n: number }>('SELECT count(*)::integer AS n FROM usage_events_default'))[0]?.n;
      expect(await defaultCount()).toBe(9);
      await money.statements.closePeriod(old!);
      await money.statements.closePeriod(kept!);
      const frozen = await money.statements.ownerStatement(owner.id, old!);
      const usageBefore = await money.usage.usageFor(caller.id, old!);

      // A tick "in 2031-05" with 2 months of retention: creates 2031-05..07, then keeps 2031-03 on.
      const ledger = createLedgerMaintenance({
        usage: money.usage,
        closedAt: (p) => money.statements.closedAt(p),
        retentionMonths: 2,
        logger: silent,
        now: () => new Date('2031-05-10T00:00:00Z'),
      });
      // The months with events get their partitions first (as a tick in those months would have).
      expect(await money.usage.prepareMonths([old!, kept!, open!])).toEqual([old, kept, open]);
      expect(await defaultCount()).toBe(0);
      expect(await money.usage.prepareMonths([old!])).toEqual([]);
      expect(await db.query<LedgerDrift>(ledgerDriftSql())).toEqual([]);

      const ticked = await ledger.tick();
      expect(ticked.created).toEqual(['2031-05', '2031-06', '2031-07']);
      expect(ticked.dropped).toEqual([old]);
      const months = await money.usage.ledgerMonths();
      expect(months).not.toContain(old);
      expect(months).toContain(kept);
      expect(months).toContain(open);
      const events = await db.query<{ period: string }>(
        'SELECT DISTINCT period::text AS period FROM usage_events',
      );
      expect(events.map((e) => e.period).sort()).toEqual([kept, open]);
      // The dropped month's statement and usage page are what they were.
      expect(await money.statements.ownerStatement(owner.id, old!)).toEqual(frozen);
      expect(await money.usage.usageFor(caller.id, old!)).toEqual(usageBefore);
      expect(usageBefore.totals.calls).toBe(3);
      expect(usageBefore.totals.millicredits).toBe(6_000);
      // Nothing more to drop; an open month's raw events are never dropped by hand either.
      expect((await ledger.tick()).dropped).toEqual([]);
      await expect(money.usage.dropMonth(open!)).rejects.toSatisfy((e) => isStoreError(e, 'CONFLICT'));
      await expect(money.usage.prepareMonths(['2031-13'])).rejects.toThrow(RangeError);
    }, 120_000);
  });
}
