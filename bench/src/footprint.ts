// `npm run bench:footprint -w @quarry/bench -- [--runs N] [--modes tsx,compiled] [--breakdown]`:
// the embedded default's memory and start times, as `npm start` (TypeScript under tsx) and
// `npm run start:prod` (the compiled build under plain node) run it: the seeder and the gateway
// spawned side by side with scripts/start.mjs's flags and malloc setting, on an empty data
// directory (fresh start) and again on the same directory (restart), N times each (default 3;
// medians printed). Per run: spawn → /healthz, spawn → the first demo answer (sales-by-region), the
// gateway's resident memory 3 s after that answer and where it is (smaps-breakdown.ts), its V8
// heap used then (from /metrics), and the machine's 1-minute load average and CPU steal, since
// other sessions share these cores. `--breakdown` adds each part alone (footprint-breakdown.ts).
// Needs `npm run build` for the compiled rows. Prints tables; writes JSON to bench/results/.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gatewayHeapFlags, gatewayMallocEnv } from '../../scripts/gateway-heap-flags.mjs';
import { readCpuTimes, stealFraction } from './cpu-steal.js';
import { type BreakdownRow, breakdownRow, measureBreakdown } from './footprint-breakdown.js';
import { median } from './latency-stats.js';
import { freePort, REPO_ROOT } from './service-process.js';
import { readResidentBreakdown } from './smaps-breakdown.js';

type Mode = 'tsx' | 'compiled';
type Start = 'fresh' | 'restart';

interface FootprintRow {
  readonly mode: Mode;
  readonly start: Start;
  readonly run: number;
  readonly healthzMs: number;
  readonly firstAnswerMs: number;
  /** The gateway's memory 3 s after its first answer. */
  readonly memory: BreakdownRow;
  /** 1-minute load average as the run began. */
  readonly load: number;
  /** CPU steal (0–1) during the run. */
  readonly steal: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function spawnNode(
  mode: Mode,
  script: string,
  flags: readonly string[],
  env: NodeJS.ProcessEnv,
): ChildProcess {
  const loader = mode === 'tsx' ? ['--import', 'tsx', '--conditions=@quarry/source'] : [];
  const file = mode === 'tsx' ? script : script.replace('/src/', '/dist/').replace(/\.ts$/, '.js');
  return spawn(process.execPath, [...flags, ...loader, file], { cwd: REPO_ROOT, env, stdio: 'ignore' });
}

async function heapUsedBytes(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = /^quarry_nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

async function measure(mode: Mode, start: Start, run: number, dataDir: string): Promise<FootprintRow> {
  const port = await freePort();
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    HOST: '127.0.0.1',
    PORT: String(port),
    QUARRY_DATA_DIR: dataDir,
  };
  const url = `http://127.0.0.1:${port}`;
  const load = loadavg()[0] ?? Number.NaN;
  const cpuBefore = readCpuTimes();
  const spawned = performance.now();
  const seed = spawnNode(mode, 'examples/src/seed-demo-cli.ts', [], env);
  const gateway = spawnNode(mode, 'gateway/src/server.ts', gatewayHeapFlags(env), {
    ...env,
    ...gatewayMallocEnv(env),
  });
  try {
    let healthzMs: number | undefined;
    let firstAnswerMs: number | undefined;
    const deadline = spawned + 180_000;
    while (firstAnswerMs === undefined) {
      if (performance.now() > deadline) throw new Error(`${mode} ${start}: no answer within 180 s`);
      if (gateway.exitCode !== null)
        throw new Error(`${mode} ${start}: the gateway exited (${gateway.exitCode})`);
      try {
        if (healthzMs === undefined) {
          const health = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
          await health.body?.cancel();
          if (health.status === 200) healthzMs = performance.now() - spawned;
        }
        if (healthzMs !== undefined) {
          const key = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
          const response = await fetch(`${url}/v1/query`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ source: 'sales-by-region', params: { year: 2024 } }),
          });
          await response.body?.cancel();
          if (response.status === 200) firstAnswerMs = performance.now() - spawned;
        }
      } catch {
        // Not listening yet, or the demo key not written yet.
      }
      if (firstAnswerMs === undefined) await sleep(50);
    }
    await sleep(3000);
    const memory = readResidentBreakdown(gateway.pid ?? -1);
    const heap = await heapUsedBytes(url);
    return {
      mode,
      start,
      run,
      healthzMs: Math.round(healthzMs ?? Number.NaN),
      firstAnswerMs: Math.round(firstAnswerMs),
      memory: breakdownRow(`gateway (${mode}, ${start})`, memory, heap),
      load: Math.round(load * 100) / 100,
      steal: Math.round(stealFraction(cpuBefore, readCpuTimes()) * 1000) / 1000,
    };
  } finally {
    seed.kill('SIGTERM');
    const exited = new Promise((resolve) => gateway.once('exit', resolve));
    if (gateway.exitCode === null) gateway.kill('SIGTERM');
    await exited;
  }
}

interface Args {
  readonly runs: number;
  readonly modes: readonly Mode[];
  readonly breakdown: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i === -1 ? undefined : argv[i + 1];
  };
  const runs = Number(value('--runs') ?? 3);
  if (!Number.isSafeInteger(runs) || runs < 1) throw new Error('--runs needs a positive integer');
  const modes = (value('--modes') ?? 'tsx,compiled').split(',') as Mode[];
  for (const mode of modes)
    if (mode !== 'tsx' && mode !== 'compiled') throw new Error(`unknown mode ${mode}`);
  return { runs, modes, breakdown: argv.includes('--breakdown') };
}

const f1 = (n: number) => n.toFixed(1);

function printBreakdown(rows: readonly BreakdownRow[]): void {
  console.log(
    '| process | RSS MiB | WebAssembly memory | node binary | libduckdb.so | other files | other anonymous (V8, malloc) | V8 heap used |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.part} | ${f1(r.rssMiB)} | ${f1(r.wasmMiB)} | ${f1(r.nodeBinaryMiB)} | ${f1(r.duckdbLibMiB)} | ${f1(r.otherFilesMiB)} | ${f1(r.otherAnonMiB)} | ${f1(r.heapUsedMiB)} |`,
    );
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const built = existsSync(join(REPO_ROOT, 'gateway/dist/server.js'));
  const modes = args.modes.filter((mode) => mode === 'tsx' || built);
  if (modes.length < args.modes.length)
    console.error('gateway/dist not built: `npm run build` for the compiled rows');
  const rows: FootprintRow[] = [];
  let breakdown: BreakdownRow[] = [];
  for (let run = 1; run <= args.runs; run++) {
    for (const mode of modes) {
      const dataDir = await mkdtemp(join(tmpdir(), 'quarry-footprint-'));
      try {
        rows.push(await measure(mode, 'fresh', run, dataDir));
        rows.push(await measure(mode, 'restart', run, dataDir));
        if (args.breakdown && mode === 'compiled' && run === args.runs) {
          const restart = rows[rows.length - 1];
          breakdown = [...(await measureBreakdown(dataDir)), ...(restart ? [restart.memory] : [])];
        }
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    }
  }

  console.log(
    '| run | start | mode | spawn → /healthz ms | spawn → first answer ms | RSS MiB | heap used MiB | load (1 min) | steal |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.run} | ${r.start} | ${r.mode} | ${r.healthzMs} | ${r.firstAnswerMs} | ${f1(r.memory.rssMiB)} | ${f1(r.memory.heapUsedMiB)} | ${r.load} | ${(r.steal * 100).toFixed(1)}% |`,
    );
  }
  console.log(`\nMedians of ${args.runs} run(s):\n`);
  console.log(
    '| start | mode | spawn → /healthz ms | spawn → first answer ms | RSS MiB | WebAssembly MiB | heap used MiB |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const start of ['fresh', 'restart'] as const) {
    for (const mode of modes) {
      const some = rows.filter((r) => r.start === start && r.mode === mode);
      const m = (pick: (r: FootprintRow) => number) => median(some.map(pick));
      console.log(
        `| ${start} | ${mode} | ${Math.round(m((r) => r.healthzMs))} | ${Math.round(m((r) => r.firstAnswerMs))} | ${f1(m((r) => r.memory.rssMiB))} | ${f1(m((r) => r.memory.wasmMiB))} | ${f1(m((r) => r.memory.heapUsedMiB))} |`,
      );
    }
  }
  if (breakdown.length > 0) {
    console.log('\nWhere the compiled gateway’s memory is, part by part (last run):\n');
    printBreakdown(breakdown);
  }
  const dir = join(REPO_ROOT, 'bench/results');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `footprint-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(file, `${JSON.stringify({ args, rows, breakdown }, null, 2)}\n`);
  console.log(`wrote ${file}`);
}

await main();
