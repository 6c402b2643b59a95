// Every statement that reads the raw ledger (usage_events) finds its rows through an index, on a
// month of many accounts and owners: an account's recent calls, a commit, a release, the reaper,
// the close's in-flight count. The statements are the repositories' own, caught on their way to
// the database and explained there with their parameters. The ledger's indexes cost every served
// call an entry each (migration 028 dropped the two nothing read); this is what keeps one that a
// read needs from going the same way.
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../store/migrate.js';
import type { SqlExecutor } from '../store/sql-client.js';
import { storeBackends } from '../store/testing/store-backends.js';
import { periodOf } from './billing-period.js';
import { createMoneyStore } from './money-store.js';

const backends = await storeBackends('ledger reads', 'quarry_ledger_reads');

interface Caught {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** `db`, with every statement that reads usage_events (inserts aside) noted in `caught`. */
function catching(db: SqlExecutor, caught: Caught[]): SqlExecutor {
  const note = (sql: string, params: readonly unknown[] | undefined) => {
    if (/\busage_events\b/.test(sql) && !/^\s*INSERT\b/i.test(sql))
      caught.push({ sql, params: params ?? [] });
  };
  return {
    kind: db.kind,
    query(sql, params, options) {
      note(sql, params);
      return db.query(sql, params, options);
    },
    exec: (script) => db.exec(script),
    transaction: (fn) => db.transaction((tx) => fn(catching(tx, caught))),
  };
}

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

function* nodes(plan: PlanNode): Generator<PlanNode> {
  yield plan;
  for (const child of plan.Plans ?? []) yield* nodes(child);
}

/** Every node of the plan `db` makes for a caught statement, with its parameters. */
async function planOf(db: SqlExecutor, { sql, params }: Caught): Promise<PlanNode[]> {
  const [explained] = await db.query<{ 'QUERY PLAN': readonly { Plan: PlanNode }[] }>(
    `EXPLAIN (FORMAT JSON) ${sql}`,
    params,
  );
  const plan = explained?.['QUERY PLAN'][0]?.Plan;
  expect(plan, sql).toBeDefined();
  return [...nodes(plan as PlanNode)];
}

/** The partition that holds `period`'s raw events. */
const partitionOf = (period: string) => `usage_events_p${period.replace('-', '_')}`;

for (const { backend, available } of backends) {
  describe.skipIf(!available)(`reads of the ledger on ${backend.name}`, () => {
    afterAll(() => backend.teardown());

    it('each one reads a month of 40 accounts and 8 owners by an index, never a whole scan', async () => {
      const db = await backend.fresh();
      await migrate(db);
      const period = periodOf(new Date());
      const rows = backend.name === 'postgres' ? 60_000 : 20_000;
      // One in 500 still pending (calls in flight), the rest served over the month's first days.
      await db.query(
        `INSERT INTO usage_events (request_id, account_id, key_id, period, plan, analytic_id, analytic_name, version,
                                   owner_id, origin, millicredits, owner_millicredits, platform_millicredits,
                                   value_musd, owner_musd, platform_musd, status, latency_ms, reserved_at, completed_at)
         SELECT 'req_' || g, 'acc_' || (g % 40), NULL, $1::text, 'smb', 'ana_' || (g % 24), 'analytic-' || (g % 24), 1,
                'own_' || (g % 8), 'paid', 1000, 800, 200, 196000, 156800, 39200,
                CASE WHEN g % 500 = 0 THEN 'pending' ELSE 'ok' END, 12.5,
                now() - (g % 600) * interval '1 minute',
                CASE WHEN g % 500 = 0 THEN NULL ELSE now() - (g % 600) * interval '1 minute' END
           FROM generate_series(1, $2::integer) AS g`,
        [period, rows],
      );
      await db.exec('ANALYZE usage_events');
      const caught: Caught[] = [];
      const money = createMoneyStore(catching(db, caught));
      expect(await createMoneyStore(db).usage.ledgerMonths()).toContain(period);
      const filled = partitionOf(period);
      const now = new Date();
      const listed = await money.calls.list({
        accountId: 'acc_7',
        since: new Date(now.getTime() - 86_400_000),
        until: now,
        limit: 50,
      });
      expect(listed).toHaveLength(50);
      expect(await money.usage.commitMany([{ requestId: 'req_500', latencyMs: 3 }])).toEqual(['committed']);
      expect(await money.usage.release('req_1000')).toBe('released');
      expect(await money.usage.release('req_1')).toBe('committed');
      expect(await money.usage.reapStale(86_400_000)).toBe(0);
      await expect(money.statements.closePeriod(period)).rejects.toThrow(/in flight/);
      expect(caught.length).toBeGreaterThanOrEqual(6);

      const scans: string[] = [];
      for (const statement of caught) {
        for (const node of await planOf(db, statement)) {
          if (node['Node Type'] === 'Seq Scan' && node['Relation Name'] === filled) {
            scans.push(statement.sql.replace(/\s+/g, ' ').slice(0, 160));
          }
        }
      }
      expect(scans).toEqual([]);
    }, 120_000);

    it("a reserved call's commit and release read the month it was reserved in, no other", async () => {
      const db = await backend.fresh();
      await migrate(db);
      const period = periodOf(new Date());
      await db.query(
        `INSERT INTO usage_events (request_id, account_id, period, analytic_id, analytic_name, version, owner_id,
                                   origin, millicredits, owner_millicredits, platform_millicredits, status)
         SELECT 'req_' || g, 'acc_1', $1::text, 'ana_1', 'analytic-1', 1, 'own_1', 'owner', 0, 0, 0, 'pending'
           FROM generate_series(1, 4) AS g`,
        [period],
      );
      const caught: Caught[] = [];
      const money = createMoneyStore(catching(db, caught));
      // This month and two ahead at least (and the default partition).
      expect((await createMoneyStore(db).usage.ledgerMonths()).length).toBeGreaterThanOrEqual(3);
      expect(await money.usage.commitMany([{ requestId: 'req_1', latencyMs: 3, period }])).toEqual([
        'committed',
      ]);
      expect(await money.usage.release('req_2', period)).toBe('released');
      expect(await money.usage.release('req_1', period)).toBe('committed');
      expect(caught.length).toBeGreaterThanOrEqual(3);
      for (const statement of caught) {
        const read = (await planOf(db, statement))
          .map((node) => node['Relation Name'])
          .filter((name) => name?.startsWith('usage_events_') === true);
        expect(new Set(read), statement.sql).toEqual(new Set([partitionOf(period)]));
      }
    }, 120_000);
  });
}
