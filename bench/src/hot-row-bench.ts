// One busy account over a fleet (issue 36, "Hot rows"): does one account's counter row cap the
// calls a second the gateway serves it? Three gateway processes share one fresh PostgreSQL store
// (and Redis for their rate limits, as a fleet does); 64 connections are spread round-robin over
// the three, and the same load is sent three ways, alternated in rounds:
//
//   one     every call with ONE account's key on one analytic: every batch of every instance adds
//           to the same counter row (usage_counters) and the same rollup rows, each locked from
//           its update to the batch's commit
//   spread  the same calls with the keys of 20 accounts (request i uses key i mod 20) on the same
//           analytic: 20 counter rows, but every batch mixes accounts, so concurrent batches still
//           meet on rows (and all on the owner's rollup row of that analytic)
//   apart   20 accounts, each on its own copy of the analytic, and each instance calls for its
//           own accounts only (instance k: accounts j with j mod 3 = k): no row is written by two
//           instances' batches, so nothing waits on another instance's row lock
//
// on a cache hit (`hit`) and on a cheap uncached keyed lookup (`cheap`). Each window reports calls
// a second, p50/p99, CPU of the gateways, PostgreSQL and this process (the load generator), the
// group commit's batches (calls per batch, ms per batch, from the instances' /metrics), and what
// the store's sessions waited on (pg_stat_activity sampled every 20 ms: sessions waiting on a row
// lock, on the WAL, or running), with the CPU steal and the load average. If `one` serves about
// what `apart` serves and its sessions rarely wait on locks, the row is not what limits it.
//
// Run: npm run bench:hot-row -w @quarry/bench -- [--seconds 10] [--warmup 3] [--rounds 3]
//        [--connections 64] [--instances 3] [--accounts 20] [--scenarios hit,cheap]
//        [--sides one,spread,apart] [--no-redis] [--log-level warn]
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type BenchWorld,
  createBenchWorld,
  gatewayEnv,
  KV_ROWS,
  post,
  provision,
  SALES_YEAR,
  signUpAccount,
} from './bench-world.js';
import { readCpuTimes, stealFraction } from './cpu-steal.js';
import { type HttpLoadOptions, type HttpTarget, runHttpWindow } from './http-load.js';
import { median } from './latency-stats.js';
import type { MeasuredLoad } from './load-window.js';
import { type SideSummary, summariseSide } from './paired-load.js';
import { startWaitSampler, type WaitProfile } from './pg-wait-sampler.js';
import { REPO_ROOT, type ServiceProcess, startService } from './service-process.js';
import { type UsageWrites, usageWrites } from './usage-writes.js';

const SIDES = ['one', 'spread', 'apart'] as const;
type Side = (typeof SIDES)[number];
const SCENARIOS = ['hit', 'cheap'] as const;
type Scenario = (typeof SCENARIOS)[number];

interface Options {
  readonly seconds: number;
  readonly warmup: number;
  readonly rounds: number;
  readonly connections: number;
  readonly instances: number;
  readonly accounts: number;
  readonly scenarios: readonly Scenario[];
  readonly sides: readonly Side[];
  readonly redisUrl: string | undefined;
  readonly logLevel: string;
}

function optionsFrom(argv: readonly string[]): Options {
  const flag = (name: string, fallback: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && argv[i + 1] !== undefined ? (argv[i + 1] as string) : fallback;
  };
  const list = <T extends string>(name: string, all: readonly T[]): T[] => {
    const picked = flag(name, all.join(',')).split(',');
    const unknown = picked.filter((p) => !all.includes(p as T));
    if (unknown.length > 0)
      throw new Error(`--${name}: unknown ${unknown.join(', ')} (one of ${all.join(', ')})`);
    return picked as T[];
  };
  return {
    seconds: Number(flag('seconds', '10')),
    warmup: Number(flag('warmup', '3')),
    rounds: Number(flag('rounds', '3')),
    connections: Number(flag('connections', '64')),
    instances: Number(flag('instances', '3')),
    accounts: Number(flag('accounts', '20')),
    scenarios: list('scenarios', SCENARIOS),
    sides: list('sides', SIDES),
    redisUrl: argv.includes('--no-redis')
      ? undefined
      : (process.env.QUARRY_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'),
    logLevel: flag('log-level', 'warn'),
  };
}

/** Throws a clear message when nothing listens at the Redis URL. */
async function checkRedis(redisUrl: string): Promise<void> {
  const url = new URL(redisUrl);
  await new Promise<void>((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: url.port === '' ? 6379 : Number(url.port) });
    socket.setTimeout(2000, () => socket.destroy(new Error('timed out')));
    socket.once('connect', () => {
      socket.end();
      resolve();
    });
    socket.once('error', (error) =>
      reject(
        new Error(`Redis at ${redisUrl} is not reachable (${error.message}); pass --no-redis to run without`),
      ),
    );
  });
}

/** The analytics each caller may call: `copies` public copies of the cached aggregate and of the lookup. */
const hitName = (copy: number) => `hotrow-hit-${copy}`;
const cheapName = (copy: number) => `hotrow-cheap-${copy}`;

async function deployPublicCopies(base: string, ownerKey: string, world: BenchWorld, copies: number) {
  const wh = world.warehouseSchema;
  for (let copy = 0; copy < copies; copy++) {
    await post(
      base,
      '/v1/owner/analytics',
      {
        connection: 'bench',
        name: hitName(copy),
        sql: `SELECT region, sum(amount) AS revenue FROM ${wh}.sales WHERE year = :year GROUP BY region ORDER BY revenue DESC`,
        params: { year: { type: 'integer', required: true, min: 2000, max: 2100 } },
        cache: { ttl: 86_400 },
        visibility: 'public',
        price: 1,
      },
      ownerKey,
    );
    await post(
      base,
      '/v1/owner/analytics',
      {
        connection: 'bench',
        name: cheapName(copy),
        sql: `SELECT id, name, score FROM ${wh}.kv WHERE id = :id`,
        params: { id: { type: 'integer', required: true, min: 1, max: KV_ROWS } },
        visibility: 'public',
        price: 1,
      },
      ownerKey,
    );
  }
}

const bodyOf = (scenario: Scenario, copy: number) =>
  JSON.stringify(
    scenario === 'hit'
      ? { source: hitName(copy), params: { year: SALES_YEAR } }
      : { source: cheapName(copy), params: { id: 42 } },
  );

/** One window's figures beside the load's own. */
interface WindowRecord {
  readonly scenario: Scenario;
  readonly side: Side;
  readonly round: number;
  readonly load: MeasuredLoad['window'];
  /** Every call's latency (ms); pooled per side, not written to the JSON. */
  readonly latencies: Float64Array;
  readonly loadAverage: readonly [number, number];
  readonly waits: WaitProfile;
  /** The group commit's writes of all instances over the window, per kind. */
  readonly writes: Readonly<Record<string, UsageWrites>>;
}

/** The instances' group-commit counters summed per kind. */
async function fleetWrites(gateways: readonly ServiceProcess[]): Promise<Record<string, UsageWrites>> {
  const out: Record<string, UsageWrites> = {};
  for (const each of await Promise.all(gateways.map((g) => usageWrites(g.url)))) {
    for (const [kind, w] of Object.entries(each)) {
      const sum = out[kind] ?? { writes: 0, items: 0, seconds: 0 };
      out[kind] = {
        writes: sum.writes + w.writes,
        items: sum.items + w.items,
        seconds: sum.seconds + w.seconds,
      };
    }
  }
  return out;
}

function writesBetween(
  before: Record<string, UsageWrites>,
  after: Record<string, UsageWrites>,
): Record<string, UsageWrites> {
  const out: Record<string, UsageWrites> = {};
  for (const [kind, b] of Object.entries(after)) {
    const a = before[kind] ?? { writes: 0, items: 0, seconds: 0 };
    if (b.writes - a.writes > 0)
      out[kind] = { writes: b.writes - a.writes, items: b.items - a.items, seconds: b.seconds - a.seconds };
  }
  return out;
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : '-');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');

/** Calls per batch and ms per batch of the write that charged the calls (the busiest kind). */
function batchShape(writes: Readonly<Record<string, UsageWrites>>): {
  kind: string;
  perBatch: number;
  ms: number;
} {
  const [kind, w] = Object.entries(writes).sort((a, b) => b[1].items - a[1].items)[0] ?? [
    '-',
    { writes: 0, items: 0, seconds: 0 },
  ];
  return { kind, perBatch: w.items / w.writes, ms: (1000 * w.seconds) / w.writes };
}

async function main(): Promise<void> {
  const options = optionsFrom(process.argv.slice(2));
  const pgUrl = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  if (options.redisUrl !== undefined) await checkRedis(options.redisUrl);
  const dir = await mkdtemp(join(tmpdir(), 'quarry-hot-row-'));
  const world = await createBenchWorld(pgUrl);
  const gateways: ServiceProcess[] = [];
  const windows: WindowRecord[] = [];
  const uptimeAt = () => ({ at: new Date().toISOString(), loadAverage: loadavg(), steal: readCpuTimes() });
  const startedAt = uptimeAt();
  try {
    const env = {
      ...gatewayEnv(world, options.logLevel),
      ...(options.redisUrl === undefined ? {} : { QUARRY_REDIS_URL: options.redisUrl }),
    };
    const start = (i: number) =>
      startService({ entry: 'gateway/src/server.ts', env, logFile: join(dir, `gateway-${i}.log`) });
    // The first instance migrates the store; the others start once it is up.
    gateways.push(await start(0));
    gateways.push(
      ...(await Promise.all(Array.from({ length: options.instances - 1 }, (_, i) => start(i + 1)))),
    );
    const [first] = gateways as [ServiceProcess];
    const ownerKey = await provision(first.url, world, 1000);
    await deployPublicCopies(first.url, ownerKey, world, options.accounts);
    const callers: string[] = [];
    for (let i = 0; i < options.accounts; i++)
      callers.push((await signUpAccount(first.url, world, `hot-row-caller-${i}`)).key);

    const urls = gateways.map((g) => `${g.url}/v1/query`);
    const ports = gateways.map((g) => g.port);
    const accountsOf = gateways.map((_, k) =>
      callers.map((_, j) => j).filter((j) => j % gateways.length === k),
    );
    const headers = (key: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${key}` });
    const loadOf = (scenario: Scenario, side: Side, seconds: number): [HttpTarget, HttpLoadOptions] => {
      const target: HttpTarget = {
        url: urls[0] as string,
        method: 'POST',
        headers: headers(callers[0] as string),
        body: bodyOf(scenario, 0),
      };
      const base = {
        connections: options.connections,
        seconds,
        urls,
        serverPid: gateways.map((g) => g.pid),
      };
      if (side === 'one') return [target, base];
      if (side === 'spread')
        return [target, { ...base, headersFor: (i) => headers(callers[i % callers.length] as string) }];
      // apart: instance k (by port) calls for accounts k, k + n, k + 2n, … only, each its own copy.
      const account = (i: number, port: number) => {
        const mine = accountsOf[ports.indexOf(port)] ?? [];
        return mine[i % mine.length] as number;
      };
      return [
        target,
        {
          ...base,
          headersFor: (i, port) => headers(callers[account(i, port)] as string),
          bodyFor: (i, port) => bodyOf(scenario, account(i, port)),
        },
      ];
    };

    // Every caller's call is counted (origin `free`: a credit of its quota), on every instance.
    for (const scenario of options.scenarios) {
      for (const url of urls) {
        const response = await fetch(url, {
          method: 'POST',
          headers: headers(callers[0] as string),
          body: bodyOf(scenario, 0),
        });
        const body = (await response.json()) as { meta?: { credits?: number } };
        if (response.status !== 200 || body.meta?.credits !== 1)
          throw new Error(`${scenario} at ${url}: ${response.status} ${JSON.stringify(body)}`);
      }
    }

    console.error(
      `hot-row bench: ${options.instances} gateway instances over one PostgreSQL store${options.redisUrl === undefined ? '' : ' and Redis'}, ` +
        `${options.connections} connections round-robin over them, ${options.rounds} rounds of ${options.sides.join(' / ')} × ${options.seconds} s ` +
        `(${options.warmup} s warm-up each), ${cpus().length} cores; load average at start ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
    );
    for (const scenario of options.scenarios) {
      // Warm every side once: each instance's cache fills, every key is looked up once per instance.
      for (const side of options.sides) {
        const [target, load] = loadOf(scenario, side, options.warmup);
        if (options.warmup > 0) await runHttpWindow(target, load);
      }
      for (let round = 1; round <= options.rounds; round++) {
        for (const side of options.sides) {
          const [target, load] = loadOf(scenario, side, options.seconds);
          const loadBefore = loadavg()[0] as number;
          const writesBefore = await fleetWrites(gateways);
          const sampler = await startWaitSampler(pgUrl, world.storeApp);
          const measured = await runHttpWindow(target, load);
          const waits = await sampler.stop();
          const writes = writesBetween(writesBefore, await fleetWrites(gateways));
          const record: WindowRecord = {
            scenario,
            side,
            round,
            load: measured.window,
            latencies: measured.latencies,
            loadAverage: [loadBefore, loadavg()[0] as number],
            waits,
            writes,
          };
          windows.push(record);
          const w = measured.window;
          const batch = batchShape(writes);
          console.error(
            `  ${scenario} round ${round} ${side.padEnd(6)} ${f0(w.reqPerSec).padStart(6)} calls/s  p50 ${f2(w.p50Ms)} ms  p99 ${f2(w.p99Ms)} ms  fails ${w.failures}  ` +
              `CPU gateways ${f0(100 * w.serverCpu)}% pg ${f0(100 * w.postgresCpu)}% loadgen ${f0(100 * w.loadCpu)}%  ` +
              `batches ${f1(batch.perBatch)} calls, ${f1(batch.ms)} ms  store sessions: ${f2(waits.activeMean)} active, ${f2(waits.lockMean)} on a lock  ` +
              `steal ${f1(100 * w.steal)}%  load ${record.loadAverage.map((l) => l.toFixed(1)).join('→')}`,
          );
        }
      }
    }
  } finally {
    await Promise.allSettled(gateways.map((g) => g.stop()));
    await world.drop();
    await rm(dir, { recursive: true, force: true });
  }
  const endedAt = uptimeAt();

  // Per scenario and side: medians over the rounds, latencies pooled.
  const summaries = options.scenarios.flatMap((scenario) =>
    options.sides.map((side) => {
      const mine = windows.filter((w) => w.scenario === scenario && w.side === side);
      const summary: SideSummary = summariseSide(
        mine.map((w) => ({ window: w.load, latencies: w.latencies })),
      );
      const batches = mine.map((w) => batchShape(w.writes));
      return {
        scenario,
        side,
        ...summary,
        lockSessions: median(mine.map((w) => w.waits.lockMean)),
        lockSecondsPerWindow: median(mine.map((w) => w.waits.lockSeconds)),
        activeSessions: median(mine.map((w) => w.waits.activeMean)),
        callsPerBatch: median(batches.map((b) => b.perBatch)),
        msPerBatch: median(batches.map((b) => b.ms)),
        maxSteal: Math.max(...mine.map((w) => w.load.steal)),
      };
    }),
  );
  // one / spread and one / apart per round, medians.
  const ratios = options.scenarios.map((scenario) => {
    const rate = (side: Side, round: number) =>
      windows.find((w) => w.scenario === scenario && w.side === side && w.round === round)?.load.reqPerSec ??
      Number.NaN;
    const rounds = Array.from({ length: options.rounds }, (_, i) => i + 1);
    const of = (other: Side) => median(rounds.map((r) => rate('one', r) / rate(other, r)));
    return { scenario, oneOverSpread: of('spread'), oneOverApart: of('apart') };
  });

  console.log(
    `\nhot-row bench (${options.instances} instances, ${options.connections} connections, medians of ${options.rounds} windows of ${options.seconds} s)`,
  );
  console.log(
    'scenario side     calls/s  p50 ms  p99 ms  fails  gateways  postgres  loadgen  CPU µs/call  calls/batch  ms/batch  store sessions active / on a lock  lock s/window',
  );
  for (const s of summaries) {
    console.log(
      `${s.scenario.padEnd(8)} ${s.side.padEnd(7)} ${f0(s.reqPerSec).padStart(8)} ${f2(s.p50Ms).padStart(7)} ${f2(s.p99Ms).padStart(7)} ${String(s.failures).padStart(6)} ` +
        `${`${f0(100 * s.serverCpu)}%`.padStart(9)} ${`${f0(100 * s.postgresCpu)}%`.padStart(9)} ${`${f0(100 * s.loadCpu)}%`.padStart(8)} ${f0(s.cpuUsPerRequest).padStart(12)} ` +
        `${f1(s.callsPerBatch).padStart(12)} ${f1(s.msPerBatch).padStart(9)} ${`${f2(s.activeSessions)} / ${f2(s.lockSessions)}`.padStart(36)} ${f1(s.lockSecondsPerWindow).padStart(14)}`,
    );
  }
  for (const r of ratios)
    console.log(
      `${r.scenario}: one account / 20 accounts ${f2(r.oneOverSpread)}, one / 20 apart ${f2(r.oneOverApart)}`,
    );
  const steal = stealFraction(startedAt.steal, endedAt.steal);
  console.log(
    `load average ${startedAt.loadAverage.map(f2).join(' ')} at start, ${endedAt.loadAverage.map(f2).join(' ')} at the end; CPU steal over the run ${f1(100 * steal)}%`,
  );

  const results = join(REPO_ROOT, 'bench', 'results');
  await mkdir(results, { recursive: true });
  const file = join(results, `hot-row-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(
    file,
    `${JSON.stringify(
      {
        bench: 'hot-row',
        node: process.version,
        cpu: { model: cpus()[0]?.model, cores: cpus().length },
        options,
        startedAt: { at: startedAt.at, loadAverage: startedAt.loadAverage },
        endedAt: { at: endedAt.at, loadAverage: endedAt.loadAverage },
        stealOverRun: steal,
        summaries,
        ratios,
        windows: windows.map(({ scenario, side, round, load, loadAverage, waits, writes }) => ({
          scenario,
          side,
          round,
          load,
          loadAverage,
          waits,
          writes,
        })),
      },
      null,
      2,
    )}\n`,
  );
  console.log(`results: ${file}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
