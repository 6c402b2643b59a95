// `npm run bench:footprint -w @quarry/bench -- [--runs N] [--modes tsx,compiled] [--breakdown]`:
// the embedded default's start times and memory, as a newcomer meets them: `npm start`
// (TypeScript under tsx) and `npm run start:prod` (the compiled build under plain node) are run
// as typed, through npm and scripts/start.mjs, on an empty data directory (fresh start) and again
// on the same directory (restart), N times each (default 3; medians printed), alternating the
// modes. Per run: spawn → /healthz, spawn → /readyz 200 (start-up work done), spawn → the first
// demo answer (sales-by-region, asked as soon as the demo key is written and then every 50 ms),
// the CPU time the gateway and the whole process tree (npm, the launcher, the gateway) had used
// by that answer, the gateway's resident memory 3 s after it and where it is
// (smaps-breakdown.ts), its V8 heap used then (from /metrics), and the machine's 1-minute load
// average and CPU steal, since other sessions share these cores. `--breakdown` adds each part
// alone (footprint-breakdown.ts). Needs `npm run build` for the compiled rows. Prints tables;
// writes JSON to bench/results/.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { readCpuTimes, stealFraction } from './cpu-steal.js';
import { type BreakdownRow, breakdownRow, measureBreakdown } from './footprint-breakdown.js';
import { median } from './latency-stats.js';
import { freePort, REPO_ROOT } from './service-process.js';
import { readResidentBreakdown } from './smaps-breakdown.js';

type Mode = 'tsx' | 'compiled';
type Start = 'fresh' | 'restart';

/** The command a newcomer types for each mode. */
const COMMAND: Readonly<Record<Mode, readonly string[]>> = {
  tsx: ['npm', 'start'],
  compiled: ['npm', 'run', 'start:prod'],
};

interface FootprintRow {
  readonly mode: Mode;
  readonly start: Start;
  readonly run: number;
  readonly healthzMs: number;
  readonly readyzMs: number;
  readonly firstAnswerMs: number;
  /** CPU the gateway process had used by the first answer (utime + stime). */
  readonly gatewayCpuMs: number;
  /** CPU of every process of the start (npm, the launcher, the gateway, their reaped children). */
  readonly treeCpuMs: number;
  /** The gateway's memory 3 s after its first answer. */
  readonly memory: BreakdownRow;
  /** 1-minute load average as the run began. */
  readonly load: number;
  /** CPU steal (0–1) during the run. */
  readonly steal: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** /proc/<pid>/stat's fields after the command (0-based: ppid 1, utime 11, stime 12, cutime 13, cstime 14). */
function statOf(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** `root` and every process under it. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const ppid = Number(statOf(pid)?.[1]);
    if (Number.isInteger(ppid)) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const tree: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/** CPU ms of a process (with `reaped`, also of its children that have exited). */
function cpuMs(pid: number, reaped: boolean): number {
  const f = statOf(pid);
  if (f === undefined) return 0;
  const ticks = Number(f[11]) + Number(f[12]) + (reaped ? Number(f[13]) + Number(f[14]) : 0);
  return ticks * 10;
}

function gatewayPid(root: number): number | undefined {
  return processTree(root).find((pid) => {
    try {
      // The sources under tsx, the compiled build, or npm start's bundle (scripts/start-bundle.mjs).
      return /gateway\/(src|dist)\/server\.(ts|js)|gateway-server\.mjs/.test(
        readFileSync(`/proc/${pid}/cmdline`, 'utf8'),
      );
    } catch {
      return false;
    }
  });
}

async function heapUsedBytes(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = /^quarry_nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

async function status(url: string): Promise<number> {
  const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
  await response.body?.cancel();
  return response.status;
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
  const [command, ...args] = COMMAND[mode] as [string, ...string[]];
  const spawned = performance.now();
  // Its own process group, so the whole start (npm, the launcher, the gateway) stops together.
  const child: ChildProcess = spawn(command, args, { cwd: REPO_ROOT, env, stdio: 'ignore', detached: true });
  const root = child.pid ?? -1;
  try {
    let healthzMs: number | undefined;
    let readyzMs: number | undefined;
    let firstAnswerMs: number | undefined;
    let gatewayCpuMs = Number.NaN;
    let treeCpuMs = Number.NaN;
    const deadline = spawned + 180_000;
    while (firstAnswerMs === undefined || readyzMs === undefined) {
      if (performance.now() > deadline) throw new Error(`${mode} ${start}: no answer within 180 s`);
      if (child.exitCode !== null) throw new Error(`${mode} ${start}: the start exited (${child.exitCode})`);
      try {
        if (healthzMs === undefined && (await status(`${url}/healthz`)) === 200)
          healthzMs = performance.now() - spawned;
        if (readyzMs === undefined && healthzMs !== undefined && (await status(`${url}/readyz`)) === 200)
          readyzMs = performance.now() - spawned;
        if (firstAnswerMs === undefined) {
          // Asked as soon as the key is written: a newcomer pastes the printed curl at once.
          const key = (await readFile(join(dataDir, 'demo-key'), 'utf8')).trim();
          const response = await fetch(`${url}/v1/query`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ source: 'sales-by-region', params: { year: 2024 } }),
          });
          await response.body?.cancel();
          if (response.status === 200) {
            firstAnswerMs = performance.now() - spawned;
            const gateway = gatewayPid(root);
            gatewayCpuMs = gateway === undefined ? Number.NaN : cpuMs(gateway, false);
            treeCpuMs = processTree(root).reduce((sum, pid) => sum + cpuMs(pid, true), 0);
          }
        }
      } catch {
        // Not listening yet, or the demo key not written yet.
      }
      if (firstAnswerMs === undefined || readyzMs === undefined) await sleep(50);
    }
    await sleep(3000);
    const memory = readResidentBreakdown(gatewayPid(root) ?? -1);
    const heap = await heapUsedBytes(url);
    return {
      mode,
      start,
      run,
      healthzMs: Math.round(healthzMs ?? Number.NaN),
      readyzMs: Math.round(readyzMs),
      firstAnswerMs: Math.round(firstAnswerMs),
      gatewayCpuMs,
      treeCpuMs,
      memory: breakdownRow(`gateway (${mode}, ${start})`, memory, heap),
      load: Math.round(load * 100) / 100,
      steal: Math.round(stealFraction(cpuBefore, readCpuTimes()) * 1000) / 1000,
    };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (child.exitCode === null) process.kill(-root, 'SIGTERM');
    await exited;
    // The gateway may outlive npm by its shutdown: wait until the data directory is free.
    for (let i = 0; i < 100 && existsSync(join(dataDir, 'pglite', 'postmaster.pid')); i++) await sleep(50);
    await sleep(200);
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
  // What `npm ci` leaves built: a console rebuild here would be measured as the first start's.
  const consoleBuild = new URL('../../console/build.mjs', import.meta.url).href;
  const { buildConsole } = (await import(consoleBuild)) as {
    buildConsole: () => Promise<{ built: boolean }>;
  };
  await buildConsole();
  // Likewise `npm start`'s bundle of the gateway (where this checkout has one: scripts/start-bundle.mjs).
  const bundleScript = join(REPO_ROOT, 'scripts/start-bundle.mjs');
  if (existsSync(bundleScript)) {
    const { buildGatewayBundle } = (await import(new URL(`file://${bundleScript}`).href)) as {
      buildGatewayBundle: () => Promise<{ built: boolean }>;
    };
    await buildGatewayBundle();
  }
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

  const command = (mode: Mode) => `\`${COMMAND[mode].join(' ')}\``;
  console.log(
    '| run | start | command | → /healthz ms | → /readyz ms | → first answer ms | gateway CPU ms | all CPU ms | RSS MiB | heap used MiB | load (1 min) | steal |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.run} | ${r.start} | ${command(r.mode)} | ${r.healthzMs} | ${r.readyzMs} | ${r.firstAnswerMs} | ${r.gatewayCpuMs} | ${r.treeCpuMs} | ${f1(r.memory.rssMiB)} | ${f1(r.memory.heapUsedMiB)} | ${r.load} | ${(r.steal * 100).toFixed(1)}% |`,
    );
  }
  console.log(`\nMedians of ${args.runs} run(s), times from the command's spawn:\n`);
  console.log(
    '| start | command | → /healthz ms | → /readyz ms | → first answer ms | gateway CPU ms | all CPU ms | RSS MiB | WebAssembly MiB | heap used MiB |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const start of ['fresh', 'restart'] as const) {
    for (const mode of modes) {
      const some = rows.filter((r) => r.start === start && r.mode === mode);
      const m = (pick: (r: FootprintRow) => number) => median(some.map(pick));
      console.log(
        `| ${start} | ${command(mode)} | ${Math.round(m((r) => r.healthzMs))} | ${Math.round(m((r) => r.readyzMs))} | ${Math.round(m((r) => r.firstAnswerMs))} | ${Math.round(m((r) => r.gatewayCpuMs))} | ${Math.round(m((r) => r.treeCpuMs))} | ${f1(m((r) => r.memory.rssMiB))} | ${f1(m((r) => r.memory.wasmMiB))} | ${f1(m((r) => r.memory.heapUsedMiB))} |`,
      );
    }
  }
  const target = (start: Start, ms: number) => {
    const firsts = rows.filter((r) => r.start === start).map((r) => r.firstAnswerMs);
    const worst = Math.max(
      ...modes.map((mode) =>
        median(rows.filter((r) => r.start === start && r.mode === mode).map((r) => r.firstAnswerMs)),
      ),
    );
    return firsts.length === 0
      ? ''
      : `${start} → first answer ≤ ${ms} ms: median ${Math.round(worst)} ms (slowest command) → ${worst <= ms ? 'PASS' : 'OVER'}`;
  };
  console.log(`\nissue 35 targets: ${target('fresh', 3000)}; ${target('restart', 1500)}`);
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
