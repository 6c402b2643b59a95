// Two builds of the gateway measured in the same minutes: a change on the hot path against the
// code before it. On a shared two-core machine one `bench:profile` window reads ±20% from the
// next, more than most changes move, so comparing runs made minutes apart tells nothing. Here both
// gateways run at once over one store and warehouse, and short windows alternate A B, B A, … (the
// other side idles meanwhile); each window's gateway CPU per request is read from its own
// process, and the figures are medians of the paired ratios B ÷ A. Half the pairs run with A as
// the instance started first and half with B (each phase starts both afresh): two copies of one
// build have read 0.86 in one single-phase run and 0.96 in the next, so each build is measured
// on both instances, and the two phases' medians are combined (multiplied, square-rooted).
//
//   npm run bench:ab -w @quarry/bench -- --save NAME
//     keeps the bundle of the working tree as it is now (`npm start`'s build) under NAME;
//   npm run bench:ab -w @quarry/bench -- --a NAME --b NAME [--scenario hit|cheap] [--pairs 12]
//       [--seconds 2] [--warmup 8] [--connections 64]
//     measures them. A typical use: `--save before`, make the change, `--save after`, then
//     `--a before --b after`.
//
// Saved builds live in node_modules/.cache/quarry-ab/NAME (beside the packages the bundle imports).
// A bundle keeps its modules' own source paths (scripts/start-bundle.mjs), so both builds read
// migrations, templates and the console from the working tree: compare changes to code, not to
// those files. The load generator is pinned to core 0 and both gateways to core 1 where
// `taskset` can, as in `bench:profile`.
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildGatewayBundle } from '../../scripts/start-bundle.mjs';
import { ANALYTICS, createBenchWorld, gatewayEnv, provision, SALES_YEAR } from './bench-world.js';
import type { HttpTarget } from './http-load.js';
import { runHttpWindow } from './http-load.js';
import { median, quantile } from './latency-stats.js';
import type { LoadWindow } from './load-window.js';
import { usedPairs } from './paired-load.js';
import { canPin, pinSelf, REPO_ROOT, startService } from './service-process.js';

const SAVED = join(REPO_ROOT, 'node_modules', '.cache', 'quarry-ab');

function savedEntry(name: string): string {
  if (!/^[\w.-]+$/.test(name))
    throw new Error(`a saved build's name is letters, digits, ".", "_" or "-": ${name}`);
  return join(SAVED, name, 'gateway-server.mjs');
}

async function save(name: string): Promise<void> {
  const { file } = await buildGatewayBundle();
  const dir = join(SAVED, name);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  // The entry, its chunks and maps: chunks are named by content, so the whole folder is copied.
  await cp(join(file, '..'), dir, { recursive: true });
  console.log(`saved the working tree's build as ${name} (${dir})`);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const flag = (name: string, fallback?: string) => {
    const i = argv.indexOf(name);
    const value = i >= 0 ? argv[i + 1] : fallback;
    if (value === undefined) throw new Error(`${name} is required`);
    return value;
  };
  if (argv.includes('--save')) return save(flag('--save'));
  const [nameA, nameB] = [flag('--a'), flag('--b')];
  const scenario = flag('--scenario', 'hit');
  if (scenario !== 'hit' && scenario !== 'cheap') throw new Error('--scenario is hit or cheap');
  const pairs = Number(flag('--pairs', '12'));
  const seconds = Number(flag('--seconds', '2'));
  const warmup = Number(flag('--warmup', '8'));
  const connections = Number(flag('--connections', '64'));
  const pgUrl = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const pinned = canPin(1) ? pinSelf(0) : undefined;
  const dir = await mkdtemp(join(tmpdir(), 'quarry-ab-'));
  const world = await createBenchWorld(pgUrl);
  // One environment for both: the same store and the same secret key, as instances of one deployment.
  const env = gatewayEnv(world, 'warn');
  const start = (name: string, instance: number) =>
    startService({
      entry: 'gateway/src/server.ts',
      bundle: savedEntry(name),
      env,
      cpu: pinned === undefined ? undefined : 1,
      logFile: join(dir, `gateway-${instance}-${name}.log`),
    });
  let key: string | undefined;
  const [source, params] =
    scenario === 'hit' ? [ANALYTICS.revenueCached, { year: SALES_YEAR }] : [ANALYTICS.lookup, { id: 42 }];
  const us = (cpu: number, rps: number) => (cpu * 1e6) / rps;
  const rows: Pair[] = [];
  try {
    // Two phases: A on the first instance and B on the second, then the other way round, so
    // that whatever one instance costs apart from the build (it migrated the store; background
    // work) falls on both builds.
    for (const phase of [1, 2] as const) {
      const [first, second] = phase === 1 ? [nameA, nameB] : [nameB, nameA];
      const one = await start(first, 1);
      const two = await start(second, 2).catch(async (error: unknown) => {
        await one.stop();
        throw error;
      });
      try {
        // One caller and its analytics, made once: the second instance and phase read them from
        // the shared store.
        key ??= await provision(one.url, world, 1000);
        const targetOf = (url: string): HttpTarget => ({
          url: `${url}/v1/query`,
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ source, params }),
        });
        const [a, b] = phase === 1 ? [one, two] : [two, one];
        const targetA = targetOf(a.url);
        const targetB = targetOf(b.url);
        // V8 keeps optimising a gateway's hot path for seconds after its first requests.
        for (let i = 0; i < 2; i++) {
          await runHttpWindow(targetA, { connections, seconds: warmup / 2 });
          await runHttpWindow(targetB, { connections, seconds: warmup / 2 });
        }
        // Pairs alternate which side goes first, so that whatever a window leaves behind (a
        // collection owed, the store's autovacuum) falls on A and B alike.
        const windowOf = async (side: 'a' | 'b') =>
          (side === 'a'
            ? await runHttpWindow(targetA, { connections, seconds, serverPid: a.pid })
            : await runHttpWindow(targetB, { connections, seconds, serverPid: b.pid })
          ).window;
        for (let pair = 1; pair <= Math.ceil(pairs / 2); pair++) {
          const firstSide = pair % 2 === 1 ? 'a' : 'b';
          const w1 = await windowOf(firstSide);
          const w2 = await windowOf(firstSide === 'a' ? 'b' : 'a');
          const [wa, wb] = firstSide === 'a' ? [w1, w2] : [w2, w1];
          const row: Pair = {
            phase,
            pair,
            a: wa,
            b: wb,
            dropped: wa.steal > 0.05 || wb.steal > 0.05 || wa.failures + wb.failures > 0,
            gateway: us(wb.serverCpu, wb.reqPerSec) / us(wa.serverCpu, wa.reqPerSec),
            postgres: us(wb.postgresCpu, wb.reqPerSec) / us(wa.postgresCpu, wa.reqPerSec),
          };
          rows.push(row);
          process.stderr.write(
            `  phase ${phase} pair ${pair}: A ${us(wa.serverCpu, wa.reqPerSec).toFixed(1)} µs/req (${wa.reqPerSec.toFixed(0)} req/s), ` +
              `B ${us(wb.serverCpu, wb.reqPerSec).toFixed(1)} µs/req (${wb.reqPerSec.toFixed(0)} req/s), B ÷ A ${row.gateway.toFixed(3)}` +
              `${wa.failures + wb.failures > 0 ? `, failures A ${wa.failures} B ${wb.failures}` : ''}${row.dropped ? ' (dropped)' : ''}\n`,
          );
        }
      } finally {
        await Promise.all([one.stop(), two.stop()]);
      }
    }
    report(rows, { scenario, seconds, connections, nameA, nameB });
  } finally {
    await world.drop();
    pinned?.();
  }
}

interface Pair {
  readonly phase: 1 | 2;
  readonly pair: number;
  readonly a: LoadWindow;
  readonly b: LoadWindow;
  readonly dropped: boolean;
  /** B's gateway CPU per request over A's. */
  readonly gateway: number;
  /** PostgreSQL's CPU per request in B's window over A's. */
  readonly postgres: number;
}

function report(
  rows: readonly Pair[],
  run: { scenario: string; seconds: number; connections: number; nameA: string; nameB: string },
): void {
  const kept = usedPairs(rows);
  const quartiles = (xs: readonly number[]) =>
    `${quantile(xs, 0.25).toFixed(3)}–${quantile(xs, 0.75).toFixed(3)}`;
  const phaseMedian = (phase: 1 | 2) => median(kept.filter((r) => r.phase === phase).map((r) => r.gateway));
  const [m1, m2] = [phaseMedian(1), phaseMedian(2)];
  const gateway = kept.map((r) => r.gateway);
  console.log(
    `${run.scenario}: B (${run.nameB}) ÷ A (${run.nameA}), ${kept.length} pairs of ${run.seconds} s windows at ${run.connections} connections` +
      `${kept.length < rows.length ? ` (${rows.length - kept.length} dropped: steal or failures)` : ''}`,
  );
  console.log(
    `gateway CPU per request: median ${median(gateway).toFixed(3)} (quartiles ${quartiles(gateway)}); ` +
      `by phase ${m1.toFixed(3)} (A started first) and ${m2.toFixed(3)} (B first), together ${Math.sqrt(m1 * m2).toFixed(3)}`,
  );
  console.log(
    `PostgreSQL's CPU per request: median ${median(kept.map((r) => r.postgres)).toFixed(3)}; ` +
      `req/s: median ${median(kept.map((r) => r.b.reqPerSec / r.a.reqPerSec)).toFixed(3)}`,
  );
}

await main();
