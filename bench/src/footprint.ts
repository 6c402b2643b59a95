// `npm run bench:footprint -w @quarry/bench`: the embedded default's memory and start times, as
// `npm start` (TypeScript under tsx) and `npm run start:prod` (the compiled build under plain
// node) run it: the seeder and the gateway spawned side by side with the same flags as
// scripts/start.mjs, on an empty data directory (fresh start) and again on the same directory
// (restart). Per run: spawn → /healthz, spawn → the first demo answer (sales-by-region), the
// gateway's resident memory 3 s after that answer, and its V8 heap used then (from /metrics).
// Needs `npm run build` for the compiled rows. Prints a table; writes JSON to bench/results/.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gatewayHeapFlags } from '../../scripts/gateway-heap-flags.mjs';
import { mib, readProcessMemory } from './proc-memory.js';
import { freePort, REPO_ROOT } from './service-process.js';

type Mode = 'tsx' | 'compiled';

interface FootprintRow {
  readonly mode: Mode;
  readonly start: 'fresh' | 'restart';
  readonly healthzMs: number;
  readonly firstAnswerMs: number;
  readonly rssMiB: number;
  readonly heapUsedMiB: number;
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

async function measure(mode: Mode, start: 'fresh' | 'restart', dataDir: string): Promise<FootprintRow> {
  const port = await freePort();
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    HOST: '127.0.0.1',
    PORT: String(port),
    QUARRY_DATA_DIR: dataDir,
  };
  const url = `http://127.0.0.1:${port}`;
  const spawned = performance.now();
  const seed = spawnNode(mode, 'examples/src/seed-demo-cli.ts', [], env);
  const gateway = spawnNode(mode, 'gateway/src/server.ts', gatewayHeapFlags(env), env);
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
    const memory = readProcessMemory(gateway.pid ?? -1);
    const heap = await heapUsedBytes(url);
    return {
      mode,
      start,
      healthzMs: Math.round(healthzMs ?? Number.NaN),
      firstAnswerMs: Math.round(firstAnswerMs),
      rssMiB: memory ? mib(memory.rssBytes) : Number.NaN,
      heapUsedMiB: mib(heap),
    };
  } finally {
    seed.kill('SIGTERM');
    const exited = new Promise((resolve) => gateway.once('exit', resolve));
    if (gateway.exitCode === null) gateway.kill('SIGTERM');
    await exited;
  }
}

async function main(): Promise<void> {
  const modes: Mode[] = existsSync(join(REPO_ROOT, 'gateway/dist/server.js')) ? ['tsx', 'compiled'] : ['tsx'];
  if (modes.length === 1) console.error('gateway/dist not built: `npm run build` for the compiled rows');
  const rows: FootprintRow[] = [];
  for (const mode of modes) {
    const dataDir = await mkdtemp(join(tmpdir(), 'quarry-footprint-'));
    try {
      rows.push(await measure(mode, 'fresh', dataDir));
      rows.push(await measure(mode, 'restart', dataDir));
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  console.log(
    '| start | mode | spawn → /healthz ms | spawn → first answer ms | RSS MiB (3 s later) | heap used MiB |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.start} | ${r.mode} | ${r.healthzMs} | ${r.firstAnswerMs} | ${r.rssMiB} | ${r.heapUsedMiB} |`,
    );
  }
  const dir = join(REPO_ROOT, 'bench/results');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `footprint-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(file, `${JSON.stringify({ rows }, null, 2)}\n`);
  console.log(`wrote ${file}`);
}

await main();
