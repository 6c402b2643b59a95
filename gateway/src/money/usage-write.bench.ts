// PostgreSQL's CPU per durable usage event (run it by hand; it is not a test):
//   npx tsx --conditions=@quarry/source gateway/src/money/usage-write.bench.ts [seconds] [sizes]
// One writer sends batches of served calls (a cache hit's charge: reserved and final in one
// write, the group commit's batch) through `usage.reserveMany`, one batch at a time, for each
// batch size in `sizes` (default 1,4,16,32,64,128), alternating the sizes three times. The CPU
// is the store session's own backend (found by its application_name in pg_stat_activity, read
// from /proc), so other work on the same server does not count. Prints PostgreSQL CPU µs per
// event and per batch, and the write's wall time. A fresh schema in QUARRY_TEST_PG_URL (default
// postgres://postgres@127.0.0.1:5432/test), dropped at the end.
//   RESERVE_FIRST=1: each batch is reserved pending, then committed (`usage.commitMany`, naming
//   the month), as calls of an account near its limit are; the CPU counts both writes.
//   PAST_MONTHS=N: first fills N earlier months' partitions with 100,000 events each, as a
//   ledger keeping QUARRY_LEDGER_RETENTION_MONTHS (13) of them holds.
//   PROBE_SQL / PROBE_OPTIONS: diagnostic SQL run after the migrations, and session settings.
//   PROBE_SQL_B=SQL: a second variant (its own schema and session, SQL run after its migrations)
//   written in turns of 100 ms with the first through the same windows, so both see the same
//   machine; prints B ÷ A per round (bench/README.md, "the store in turns").
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { createSecretBox } from '../security/secret-box.js';
import { createControlPlaneStore } from '../store/control-plane-store.js';
import { migrate } from '../store/migrate.js';
import { createPgClient } from '../store/pg-client.js';
import { periodOf } from './billing-period.js';
import { addMonths } from './ledger-retention.js';
import { createMoneyStore } from './money-store.js';
import type { ReserveRequest } from './usage-repository.js';

const PG_URL = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const seconds = Number(process.argv[2] ?? 3);
const sizes = (process.argv[3] ?? '1,4,16,32,64,128').split(',').map(Number);

/** utime + stime of `pid` in seconds (USER_HZ 100). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

interface Variant {
  readonly name: string;
  readonly schema: string;
  readonly sql: ReturnType<typeof createPgClient>;
  readonly pid: number;
  readonly write: (size: number) => Promise<void>;
}

const reserveFirst = process.env.RESERVE_FIRST === '1';
const pastMonths = Number(process.env.PAST_MONTHS ?? 0);

/** A fresh schema on its own session, migrated, with `probeSql` run after the migrations. */
async function setUp(admin: pg.Client, name: string, probeSql: string | undefined): Promise<Variant> {
  const schema = `quarry_usage_write_bench_${randomBytes(4).toString('hex')}`;
  const app = `qb_${schema}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(PG_URL);
  // PROBE_OPTIONS / PROBE_SQL: settings and statements for a diagnostic variant (not the product's).
  url.searchParams.set('options', `-c search_path=${schema} ${process.env.PROBE_OPTIONS ?? ''}`.trim());
  url.searchParams.set('application_name', app);
  // One connection: every batch runs on the one backend measured.
  const sql = createPgClient(url.toString(), { max: 1 });
  await migrate(sql);
  if (probeSql) await sql.exec(probeSql);
  const store = {
    ...createControlPlaneStore(sql, {
      secretBox: createSecretBox({ keys: { k: randomBytes(32) }, current: 'k' }),
    }),
    ...createMoneyStore(sql),
  };
  const owner = await store.accounts.create({ email: `owner-${schema}@example.com`, name: 'owner' });
  const caller = await store.accounts.create({ email: `caller-${schema}@example.com`, name: 'caller' });
  const analytic = await store.analytics.create({
    accountId: owner.id,
    name: `bench-${schema}`,
    definition: { sql: 'SELECT 1', params: {} },
    visibility: 'public',
  });
  const period = periodOf(new Date());
  for (let k = pastMonths; k >= 1; k--) {
    const past = addMonths(period, -k);
    await store.usage.prepareMonths([past]);
    await sql.query(
      `INSERT INTO usage_events (request_id, account_id, period, analytic_id, analytic_name, version, owner_id,
                                 origin, millicredits, owner_millicredits, platform_millicredits, status, completed_at)
       SELECT 'req_past_' || $1::text || '_' || g, 'acc_' || (g % 400), $1::text, 'ana', 'ana', 1, 'own',
              'owner', 0, 0, 0, 'ok', now()
         FROM generate_series(1, 100000) AS g`,
      [past],
    );
  }
  if (pastMonths > 0) await sql.exec('ANALYZE usage_events');
  let seq = 0;
  const served = (): ReserveRequest => ({
    requestId: `req_${process.pid.toString(16)}_${(seq++).toString(16).padStart(12, '0')}`,
    accountId: caller.id,
    keyId: 'key_bench',
    period,
    plan: 'free',
    limit: 1_000_000_000,
    budget: null,
    creditValueMicroUsd: 0,
    analyticId: analytic.id,
    analyticName: analytic.name,
    version: analytic.version,
    ownerId: owner.id,
    origin: 'free',
    credits: 1,
    served: reserveFirst ? undefined : { latencyMs: 1.5 },
  });
  const write = async (size: number) => {
    const calls = Array.from({ length: size }, served);
    const outcomes = await store.usage.reserveMany(calls);
    for (const outcome of outcomes) if (outcome instanceof Error || !outcome.ok) throw outcome;
    if (reserveFirst) {
      const commits = await store.usage.commitMany(
        calls.map((c) => ({ requestId: c.requestId, latencyMs: 1.5, period: c.period })),
      );
      if (commits.some((c) => c !== 'committed')) throw new Error(`commit: ${commits.join(', ')}`);
    }
  };
  // Warm the session (plans, the function's cache).
  for (let i = 0; i < 50; i++) await write(8);
  const [pid] = (
    await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [app])
  ).rows.map((r) => r.pid);
  if (pid === undefined) throw new Error('the store session was not found');
  return { name, schema, sql, pid, write };
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const variants: Variant[] = [];
  try {
    variants.push(await setUp(admin, 'A', process.env.PROBE_SQL));
    // PROBE_SQL_B: a second variant, measured in the same windows as the first, in turns of
    // 100 ms, so that both see the same machine; each backend's CPU counts only its own turns.
    if (process.env.PROBE_SQL_B !== undefined)
      variants.push(await setUp(admin, 'B', process.env.PROBE_SQL_B));
    const results = new Map<string, { perEvent: number[]; perBatch: number[]; ms: number[] }>();
    for (let round = 0; round < 3; round++) {
      for (const size of sizes) {
        const deadline = performance.now() + seconds * 1000;
        const batches = variants.map(() => 0);
        const busyMs = variants.map(() => 0);
        const cpu0 = variants.map((v) => cpuSeconds(v.pid));
        while (performance.now() < deadline) {
          for (const [i, v] of variants.entries()) {
            const t0 = performance.now();
            const turnEnd = t0 + (variants.length > 1 ? 100 : seconds * 1000);
            while (performance.now() < turnEnd && performance.now() < deadline) {
              await v.write(size);
              batches[i] = (batches[i] as number) + 1;
            }
            busyMs[i] = (busyMs[i] as number) + performance.now() - t0;
          }
        }
        for (const [i, v] of variants.entries()) {
          const cpu = cpuSeconds(v.pid) - (cpu0[i] as number);
          const n = batches[i] as number;
          const key = `${v.name} ${size}`;
          const r = results.get(key) ?? { perEvent: [], perBatch: [], ms: [] };
          r.perEvent.push((cpu * 1e6) / (n * size));
          r.perBatch.push((cpu * 1e6) / n);
          r.ms.push((busyMs[i] as number) / n);
          results.set(key, r);
        }
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    console.log(
      `one writer${variants.length > 1 ? ' per variant (A: PROBE_SQL, B: PROBE_SQL_B, in turns)' : ''}, ${seconds} s windows, 3 rounds${reserveFirst ? ', reserved then committed' : ''}${pastMonths > 0 ? `, ${pastMonths} past months` : ''}; medians (the store backend's own CPU):`,
    );
    console.log(`${variants.length > 1 ? 'variant ' : ''}batch  PG µs/event  PG µs/batch  write ms`);
    for (const [key, r] of results) {
      const [name, size] = key.split(' ');
      console.log(
        `${variants.length > 1 ? `${name?.padEnd(7)} ` : ''}${size?.padStart(5)}  ${median(r.perEvent).toFixed(1).padStart(11)}  ${median(r.perBatch).toFixed(0).padStart(11)}  ${median(r.ms).toFixed(2).padStart(8)}`,
      );
    }
    if (variants.length > 1) {
      console.log('B ÷ A, PG µs per event, per round:');
      for (const size of sizes) {
        const a = results.get(`A ${size}`)?.perEvent ?? [];
        const b = results.get(`B ${size}`)?.perEvent ?? [];
        console.log(
          `${String(size).padStart(5)}  ${b.map((x, i) => (x / (a[i] as number)).toFixed(2)).join(', ')}`,
        );
      }
    }
  } finally {
    for (const v of variants) {
      await v.sql.close();
      await admin.query(`DROP SCHEMA ${v.schema} CASCADE`);
    }
    await admin.end();
  }
}

await main();
