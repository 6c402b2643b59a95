// Micro-benchmark of metering on the real PostgreSQL (run it by hand; it is not a test):
//   npx tsx --conditions=@quarry/source gateway/src/money/metering.bench.ts [concurrency] [seconds]
// Measures calls per second of one account at `concurrency` callers (default 64), alternating,
// in the same run:
//   one-by-one   usage.reserve + usage.commit per call (what every call did before group commit)
//   group        metering.begin + commit with reserveAhead 'always' (a cache miss reserved first:
//                reserve and commit, each group-committed)
//   after        metering.begin + commit (a cache miss of an account with headroom: charged
//                after it is served, one group-committed write)
//   served       metering.chargeServed (a cache hit: one group-committed write)
//   alerts       the same with the usage alerts hooked to metering (services/usage-alerts.ts)
// and prints the mean batch size and write time of the group-committed runs. Uses a fresh
// schema in QUARRY_TEST_PG_URL (default postgres://postgres@127.0.0.1:5432/test), dropped at the end.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { pino } from 'pino';
import type { Principal } from '../auth/principal.js';
import type { CatalogEntry } from '../catalog/catalog.js';
import { createSecretBox } from '../security/secret-box.js';
import { createUsageAlerts } from '../services/usage-alerts.js';
import { createControlPlaneStore } from '../store/control-plane-store.js';
import { migrate } from '../store/migrate.js';
import { createPgClient } from '../store/pg-client.js';
import { periodOf } from './billing-period.js';
import { createMetering } from './metering.js';
import { createMoneyStore } from './money-store.js';
import { createPlanCatalog } from './plan-catalog.js';

const PG_URL = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const concurrency = Number(process.argv[2] ?? 64);
const seconds = Number(process.argv[3] ?? 3);

async function main(): Promise<void> {
  const schema = `quarry_meter_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const sql = createPgClient(url.toString());
  try {
    await migrate(sql);
    const store = {
      ...createControlPlaneStore(sql, {
        secretBox: createSecretBox({ keys: { k: randomBytes(32) }, current: 'k' }),
      }),
      ...createMoneyStore(sql),
    };
    const account = await store.accounts.create({ email: `bench-${schema}@example.com`, name: 'bench' });
    const analytic = await store.analytics.create({
      accountId: account.id,
      name: `bench-${schema}`,
      definition: { sql: 'SELECT 1', params: {} },
      visibility: 'public',
    });
    const plans = createPlanCatalog([
      {
        id: 'free',
        name: 'Bench',
        included_credits: 1_000_000_000,
        monthly_price_cents: 0,
        credit_price_cents: 0,
      },
    ]);
    const principal = {
      accountId: account.id,
      keyId: 'key_bench',
      scopes: ['query'],
      plan: 'free',
      rateLimit: { unlimited: true },
      rateLimitBucket: 'key:bench',
      origin: 'api',
      credential: 'api_key',
    } as unknown as Principal;
    const entry = {
      analyticId: analytic.id,
      name: analytic.name,
      version: analytic.version,
      ownerId: account.id,
      definition: { price: 1 },
      pricing: { price: 1 },
    } as unknown as CatalogEntry;
    let seq = 0;
    const id = () => `req_bench_${seq++}`;

    const run = async (label: string, call: () => Promise<void>) => {
      const deadline = performance.now() + seconds * 1000;
      let calls = 0;
      const worker = async () => {
        while (performance.now() < deadline) {
          await call();
          calls++;
        }
      };
      const started = performance.now();
      await Promise.all(Array.from({ length: concurrency }, worker));
      const rate = calls / ((performance.now() - started) / 1000);
      return { label, rate };
    };
    const period = periodOf(new Date());
    const oneByOne = () =>
      run('one-by-one reserve+commit', async () => {
        const requestId = id();
        await store.usage.reserve({
          requestId,
          accountId: account.id,
          keyId: null,
          period,
          plan: 'enterprise',
          limit: 1_000_000_000,
          budget: null,
          creditValueMicroUsd: 99_500,
          analyticId: analytic.id,
          analyticName: analytic.name,
          version: analytic.version,
          ownerId: account.id,
          origin: 'paid',
          credits: 1,
        });
        await store.usage.commit(requestId, { latencyMs: 1, status: 'ok' });
      });
    const results: Record<string, number[]> = {};
    const note = (r: { label: string; rate: number }) => {
      results[r.label] = [...(results[r.label] ?? []), r.rate];
    };
    for (let pair = 0; pair < 3; pair++) {
      note(await oneByOne());
      const metering = createMetering({ usage: store.usage, plans, reserveAhead: 'always' });
      note(
        await run('group-committed miss, reserved first (begin+commit)', async () => {
          const call = await metering.begin(principal, entry, id());
          await call.commit(1);
        }),
      );
      const after = createMetering({ usage: store.usage, plans });
      note(
        await run('group-committed miss, charged after (begin+commit)', async () => {
          const call = await after.begin(principal, entry, id());
          await call.commit(1);
        }),
      );
      const served = createMetering({ usage: store.usage, plans });
      note(
        await run('group-committed hit (chargeServed)', async () => {
          await served.chargeServed(principal, entry, id(), 1);
        }),
      );
      // The same, with the usage alerts told of every counted decision (issue 32): what the
      // hook costs a call that is under every threshold, the common case.
      const alerts = createUsageAlerts({ repository: store.webhooks, logger: pino({ level: 'silent' }) });
      const alerted = createMetering({ usage: store.usage, plans, onCounted: (o) => alerts.observe(o) });
      note(
        await run('group-committed hit, usage alerts on', async () => {
          await alerted.chargeServed(principal, entry, id(), 1);
        }),
      );
      const s = served.stats().reserves;
      console.log(
        `pair ${pair + 1}: hit batches ${s.writes}, mean ${(s.items / s.writes).toFixed(1)} calls, mean write ${(s.writeMs / s.writes).toFixed(2)} ms`,
      );
    }
    console.log(`\n${concurrency} concurrent callers, ${seconds} s windows, median of 3 (calls/s):`);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
    const base = median(results['one-by-one reserve+commit'] ?? [1]);
    for (const [label, rates] of Object.entries(results)) {
      const m = median(rates);
      console.log(`${label.padEnd(40)} ${m.toFixed(0).padStart(7)}   × ${(m / base).toFixed(1)}`);
    }
  } finally {
    await sql.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

await main();
