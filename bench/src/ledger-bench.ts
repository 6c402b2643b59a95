// The ledger at scale (docs/scale.md): seeds a store with N usage events shaped like real traffic
// (a few heavy owners, analytics and callers, a long tail; every origin; the last 55 days, so two
// months), then measures what grows with the ledger: an owner's monthly statement (by day and
// analytic), a caller's usage page, the marketplace listing (popularity over 30 days), closing
// the previous month, and ingestion through the batch write the group commit uses
// (UsageRepository.reserveMany of 32 served calls) while those reads run.
//
//   npm run bench:ledger -- --events 1000000,10000000 [--seconds 10] [--gateway <dir>] [--hot-row]
//
// `--hot-row` also measures one account's counter row: 6 concurrent batch writers on one account
// against the same writers spread over 20 accounts.
//
// It makes its own PostgreSQL database (dropped at the end) next to QUARRY_TEST_PG_URL's.
// `--gateway` runs another checkout's gateway code and migrations against the same seed (the
// "before" figures of bench/README.md ran main's). Events are bulk-written with INSERT ... SELECT
// generate_series (what one batch writes, millions of times over); when the schema has the day
// rollups (migration 017) they are filled from those events by the same GROUP BY the migration
// uses, so they equal what the batches would have written.
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { REPO_ROOT } from './service-process.js';

interface Sql {
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>;
  close(): Promise<void>;
}
interface Money {
  readonly usage: {
    usageFor(accountId: string, period: string): Promise<unknown>;
    reserveMany(inputs: readonly unknown[]): Promise<unknown[]>;
  };
  readonly statements: {
    ownerStatement(ownerId: string, period: string): Promise<{ byDay: readonly unknown[] }>;
    closePeriod(period: string): Promise<unknown>;
  };
}
interface Store {
  readonly accounts: { create(input: { email: string; name: string }): Promise<{ id: string }> };
  readonly analytics: {
    create(input: Record<string, unknown>): Promise<{ id: string; name: string; version: number }>;
  };
  readonly listings: {
    publish(ownerId: string, analyticId: string, fields: Record<string, unknown>): Promise<unknown>;
    search(query: Record<string, unknown>): Promise<{ items: readonly unknown[] }>;
  };
}

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? (process.argv[i + 1] as string) : fallback;
};
const SIZES = arg('events', '1000000,10000000')
  .split(',')
  .map((s) => Number(s.replaceAll('_', '')));
const SECONDS = Number(arg('seconds', '10'));
const HOT_ROW = process.argv.includes('--hot-row');
const GATEWAY = resolve(arg('gateway', join(REPO_ROOT, 'gateway')));
const LABEL = arg('label', GATEWAY === resolve(REPO_ROOT, 'gateway') ? 'this checkout' : GATEWAY);
const PG_URL = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const OWNERS = 50;
const ANALYTICS = 200;
const CALLERS = 5_000;
const DAYS = 55;

const load = async <T>(path: string): Promise<T> =>
  (await import(pathToFileURL(join(GATEWAY, 'src', path)).href)) as T;

const periodOf = (d: Date) => d.toISOString().slice(0, 7);

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  return { n: s.length, p50: round(at(0.5)), p95: round(at(0.95)), max: round(s[s.length - 1] ?? 0) };
}
const round = (x: number) => Math.round(x * 10) / 10;

async function timed<T>(fn: () => Promise<T>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

/**
 * Appends `count` events (numbered from `from`): analytic k with weight ~1/(k+1) (a heavy head,
 * owner = k mod 50), caller c with weight ~1/(c+1), 85% paid, 10% free, 4% marketplace, 1%
 * owner, reserved uniformly over the last 55 days, all served.
 */
async function seed(sql: Sql, from: number, count: number) {
  const chunk = 500_000;
  for (let start = from; start < from + count; start += chunk) {
    const n = Math.min(chunk, from + count - start);
    await sql.query(
      `INSERT INTO usage_events (request_id, account_id, key_id, period, plan, analytic_id, analytic_name, version,
                                 owner_id, origin, millicredits, owner_millicredits, platform_millicredits, value_musd,
                                 owner_musd, platform_musd, status, latency_ms, reserved_at, completed_at)
       SELECT 'req_bench_' || lpad(g::text, 10, '0'), 'acc_bench_' || c, NULL,
              to_char(t AT TIME ZONE 'UTC', 'YYYY-MM'), 'smb', a.id, a.name, 1, a.owner_id, o,
              CASE WHEN o IN ('paid', 'free') THEN p * 1000 ELSE 0 END,
              CASE WHEN o IN ('paid', 'free') THEN p * 800 ELSE 0 END,
              CASE WHEN o IN ('paid', 'free') THEN p * 200 ELSE 0 END,
              CASE WHEN o = 'paid' THEN p * 196000 ELSE 0 END,
              CASE WHEN o = 'paid' THEN p * 156800 ELSE 0 END,
              CASE WHEN o = 'paid' THEN p * 39200 ELSE 0 END,
              'ok', 12.5, t, t
         FROM generate_series($1::bigint, $2::bigint) AS g,
              LATERAL (SELECT floor(exp((random() + 0 * g) * ln(${ANALYTICS + 1})))::integer - 1 AS k,
                              floor(exp(random() * ln(${CALLERS + 1})))::integer - 1 AS c,
                              random() AS r, now() - random() * interval '${DAYS} days' AS t) AS x,
              LATERAL (SELECT CASE WHEN x.r < 0.85 THEN 'paid' WHEN x.r < 0.95 THEN 'free'
                                   WHEN x.r < 0.99 THEN 'marketplace' ELSE 'owner' END AS o,
                              1 + (x.k % 5) AS p) AS y,
              bench_analytics a
        WHERE a.k = x.k`,
      [start, start + n - 1],
    );
  }
}

async function hasRollups(sql: Sql): Promise<boolean> {
  const [row] = await sql.query<{ ok: boolean }>(`SELECT to_regclass('usage_owner_days') IS NOT NULL AS ok`);
  return row?.ok === true;
}

/** Rebuilds the rollups from the events (the migration's backfill). */
async function rollUp(sql: Sql) {
  await sql.query(
    'TRUNCATE usage_owner_days, usage_account_days, usage_analytic_callers, usage_analytic_caller_days',
  );
  await sql.query(`INSERT INTO usage_analytic_callers (analytic_id, account_id, last_day)
    SELECT analytic_id, account_id, max((reserved_at AT TIME ZONE 'UTC')::date) FROM usage_events
     WHERE status = 'ok' AND origin = 'paid' AND account_id <> owner_id GROUP BY 1, 2`);
  await sql.query(`INSERT INTO usage_analytic_caller_days (analytic_id, day, callers)
    SELECT analytic_id, last_day, count(*) FROM usage_analytic_callers GROUP BY 1, 2`);
  await sql.query(`INSERT INTO usage_owner_days (owner_id, period, day, analytic_id, analytic_name, plan, origin, calls,
                                 millicredits, owner_millicredits, platform_millicredits, value_musd, owner_musd,
                                 platform_musd)
    SELECT owner_id, period, (reserved_at AT TIME ZONE 'UTC')::date, analytic_id, analytic_name, coalesce(plan, ''),
           origin, count(*), sum(millicredits), sum(owner_millicredits), sum(platform_millicredits), sum(value_musd),
           sum(owner_musd), sum(platform_musd)
      FROM usage_events WHERE status = 'ok' GROUP BY 1, 2, 3, 4, 5, 6, 7`);
  await sql.query(`INSERT INTO usage_account_days (account_id, period, day, analytic_id, analytic_name, owner_id, plan,
                                   origin, calls, millicredits, value_musd, owner_musd, platform_musd)
    SELECT account_id, period, (reserved_at AT TIME ZONE 'UTC')::date, analytic_id, analytic_name, owner_id,
           coalesce(plan, ''), origin, count(*), sum(millicredits), sum(value_musd), sum(owner_musd), sum(platform_musd)
      FROM usage_events WHERE status = 'ok' GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`);
}

async function main() {
  const { createPgClient } = await load<{ createPgClient(u: string, o?: { max?: number }): Sql }>(
    'store/pg-client.ts',
  );
  const { loadMigrations, migrate } = await load<{
    loadMigrations(dir?: string): Promise<unknown>;
    migrate(sql: Sql, o?: { migrations?: unknown }): Promise<unknown>;
  }>('store/migrate.ts');
  const { createControlPlaneStore } = await load<{ createControlPlaneStore(sql: Sql, o: unknown): Store }>(
    'store/control-plane-store.ts',
  );
  const { createMoneyStore } = await load<{ createMoneyStore(sql: Sql): Money }>('money/money-store.ts');
  const { createSecretBox } = await load<{ createSecretBox(o: unknown): unknown }>('security/secret-box.ts');
  const dbName = `quarry_ledger_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const url = new URL(PG_URL);
  url.pathname = `/${dbName}`;
  const sql = createPgClient(url.toString(), { max: 12 });
  const results: Record<string, unknown>[] = [];
  try {
    await migrate(sql, { migrations: await loadMigrations(join(GATEWAY, 'migrations')) });
    const rollups = await hasRollups(sql);
    const store = createControlPlaneStore(sql, {
      secretBox: createSecretBox({ keys: { k1: Buffer.alloc(32, 1) }, current: 'k1' }),
    });
    const money = createMoneyStore(sql);
    // 50 owners with 4 analytics each, every one listed.
    const owners = [];
    for (let o = 0; o < OWNERS; o++)
      owners.push(await store.accounts.create({ email: `owner${o}@bench.example`, name: `Owner ${o}` }));
    await sql.query(
      'CREATE TABLE bench_analytics (k integer PRIMARY KEY, id text, name text, owner_id text)',
    );
    for (let k = 0; k < ANALYTICS; k++) {
      const owner = owners[k % OWNERS] as { id: string };
      const a = await store.analytics.create({
        accountId: owner.id,
        name: `bench-${k}`,
        definition: { sql: 'SELECT 1' },
        visibility: 'public',
      });
      await store.listings.publish(owner.id, a.id, {
        title: `Bench ${k}`,
        category: 'finance',
        price: 1 + (k % 5),
      });
      await sql.query('INSERT INTO bench_analytics VALUES ($1, $2, $3, $4)', [k, a.id, a.name, owner.id]);
    }
    const hot = (await sql.query<{ id: string; name: string; owner_id: string }>(
      'SELECT id, name, owner_id FROM bench_analytics WHERE k < 10 ORDER BY k',
    )) as { id: string; name: string; owner_id: string }[];
    const ingestAccounts: string[] = [];
    for (let i = 0; i < 20; i++)
      ingestAccounts.push(
        (await store.accounts.create({ email: `caller${i}@bench.example`, name: `c${i}` })).id,
      );
    const heavyOwner = (owners[0] as { id: string }).id;
    const heavyCaller = 'acc_bench_0';
    const now = new Date();
    const period = periodOf(now);
    const previous = periodOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)));

    // A running gateway's tick creates each month's partition before it starts (partitioned schema).
    const [partitioned] = await sql.query<{ ok: boolean }>(
      `SELECT to_regproc('quarry_ledger_partition') IS NOT NULL AS ok`,
    );
    if (partitioned?.ok === true) await sql.query('SELECT quarry_ledger_partition($1)', [previous]);
    let seeded = 0;
    for (const target of SIZES) {
      const seedMs = await timed(() => seed(sql, seeded, target - seeded));
      seeded = target;
      // The previous month is re-opened for its close to be measured again at this size.
      await sql.query('DELETE FROM owner_payouts WHERE period = $1', [previous]);
      await sql.query('DELETE FROM owner_statement_lines WHERE period = $1', [previous]);
      await sql.query('DELETE FROM closed_periods WHERE period = $1', [previous]);
      const rollupMs = rollups ? await timed(() => rollUp(sql)) : 0;
      await sql.query('VACUUM ANALYZE');
      const [size] = await sql.query<{ bytes: string; rows: string }>(
        `SELECT pg_total_relation_size(c.oid)::text AS bytes, '' AS rows FROM pg_class c WHERE c.relname = 'usage_events'`,
      );
      const [parts] = await sql.query<{ bytes: string }>(
        `SELECT coalesce(sum(pg_total_relation_size(i.inhrelid)), 0)::text AS bytes FROM pg_inherits i
          WHERE i.inhparent = 'usage_events'::regclass`,
      );
      const ledgerBytes = Number(size?.bytes ?? 0) + Number(parts?.bytes ?? 0);

      // Reads alone: 3 warm-ups, then 15 of each.
      const reads = {
        statement: () => money.statements.ownerStatement(heavyOwner, period),
        usage: () => money.usage.usageFor(heavyCaller, period),
        listing: () => store.listings.search({ sort: 'popular', limit: 20 }),
      };
      const alone: Record<string, ReturnType<typeof stats>> = {};
      for (const [name, fn] of Object.entries(reads)) {
        for (let i = 0; i < 3; i++) await fn();
        const samples: number[] = [];
        for (let i = 0; i < 15; i++) samples.push(await timed(fn));
        alone[name] = stats(samples);
      }

      // Ingestion: 4 writers of 32 served calls a batch (the group commit's write), alone, then
      // while a reader loops over the three reads.
      let seq = 0;
      const ingest = async (seconds: number, withReads: boolean, writers = 4, oneAccount = false) => {
        const deadline = performance.now() + seconds * 1000;
        let calls = 0;
        const batchMs: number[] = [];
        const readMs: Record<string, number[]> = { statement: [], usage: [], listing: [] };
        const writer = async (w: number) => {
          while (performance.now() < deadline) {
            const a = hot[(seq + w) % hot.length] as { id: string; name: string; owner_id: string };
            const account = (
              oneAccount ? ingestAccounts[0] : ingestAccounts[(seq++ + w) % ingestAccounts.length]
            ) as string;
            const batch = Array.from({ length: 32 }, () => ({
              requestId: `req_ingest_${target}_${withReads ? 'r' : 'a'}_${seq++}`,
              accountId: account,
              keyId: null,
              period,
              plan: 'smb',
              limit: null,
              budget: null,
              creditValueMicroUsd: 196_000,
              analyticId: a.id,
              analyticName: a.name,
              version: 1,
              ownerId: a.owner_id,
              origin: 'paid',
              credits: 1,
              served: { latencyMs: 1 },
            }));
            const started = performance.now();
            await money.usage.reserveMany(batch);
            batchMs.push(performance.now() - started);
            calls += batch.length;
          }
        };
        const reader = async () => {
          while (performance.now() < deadline) {
            for (const [name, fn] of Object.entries(reads)) (readMs[name] as number[]).push(await timed(fn));
          }
        };
        const started = performance.now();
        await Promise.all([
          ...Array.from({ length: writers }, (_, w) => writer(w)),
          ...(withReads ? [reader()] : []),
        ]);
        const elapsed = (performance.now() - started) / 1000;
        return {
          callsPerSecond: Math.round(calls / elapsed),
          batch: stats(batchMs),
          reads: withReads
            ? Object.fromEntries(Object.entries(readMs).map(([k, v]) => [k, stats(v)]))
            : undefined,
        };
      };
      const ingestAlone = await ingest(SECONDS, false);
      const ingestWithReads = await ingest(SECONDS, true);
      // Hot row: 6 writers (3 instances' group commits, 2 batches each in flight) on ONE account's
      // counter row, against the same 6 writers spread over 20 accounts.
      const hotRow = HOT_ROW
        ? {
            oneAccount: await ingest(SECONDS, false, 6, true),
            spread: await ingest(SECONDS, false, 6, false),
          }
        : undefined;

      const closeMs = await timed(() => money.statements.closePeriod(previous));
      const statementDays = (await reads.statement()).byDay.length;
      const result = {
        label: LABEL,
        rollups,
        events: target,
        seedSeconds: round(seedMs / 1000),
        rollupSeconds: round(rollupMs / 1000),
        ledgerMegabytes: Math.round(ledgerBytes / 1e6),
        statementDayLines: statementDays,
        ms: alone,
        closePreviousMonthMs: Math.round(closeMs),
        ingestAlone,
        ingestWithReads,
        hotRow,
      };
      results.push(result);
      console.log(`\nledger bench: ${target.toLocaleString('en-US')} events (${LABEL}, rollups: ${rollups})`);
      console.log(
        `  seeded in ${result.seedSeconds} s (+${result.rollupSeconds} s rollups); ledger ${result.ledgerMegabytes} MB`,
      );
      console.log('  read                     p50 ms   p95 ms   p95 under ingestion');
      for (const name of Object.keys(reads)) {
        const a = alone[name] as ReturnType<typeof stats>;
        const under = (ingestWithReads.reads as Record<string, ReturnType<typeof stats>>)[name];
        console.log(
          `  ${name.padEnd(24)} ${String(a.p50).padStart(6)}   ${String(a.p95).padStart(6)}   ${String(under?.p95).padStart(6)}`,
        );
      }
      console.log(`  close ${previous}              ${result.closePreviousMonthMs} ms`);
      console.log(
        `  ingestion (4 writers × 32)  ${ingestAlone.callsPerSecond} calls/s alone, ${ingestWithReads.callsPerSecond} calls/s with reads (batch p95 ${ingestWithReads.batch.p95} ms)`,
      );
      if (hotRow !== undefined)
        console.log(
          `  one account, 6 writers     ${hotRow.oneAccount.callsPerSecond} calls/s (batch p95 ${hotRow.oneAccount.batch.p95} ms); spread over 20 accounts ${hotRow.spread.callsPerSecond} calls/s`,
        );
    }
  } finally {
    await sql.close();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  }
  const dir = join(REPO_ROOT, 'bench', 'results');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `ledger-${new Date().toISOString().replaceAll(':', '-').replace('.', '-')}.json`);
  await writeFile(file, `${JSON.stringify({ seconds: SECONDS, results }, null, 2)}\n`);
  console.log(`\nwrote ${file}`);
}

await main();
