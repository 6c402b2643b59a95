// Where a gateway request's time goes: one scenario of the gateway bench (b cache hit, d cheap or
// d heavy) under closed-loop load, with the CPU time of every party read from /proc around the
// window — the gateway process, all PostgreSQL backends, and this process (the load generator) —
// divided by the requests served, so a change to the hot path shows as µs of CPU per request
// rather than as a throughput figure that moves ±20% with the machine. With `--cpu-prof` the
// gateway also writes a V8 CPU profile, summarised here by part of the path and per function;
// with `--perf` (where `perf` is installed) `perf record` samples the measured process's CPU in
// the window, kernel included, summarised by part (profile-parts.ts says how the two differ).
// Run: npm run bench:profile -w @quarry/bench -- [--scenario hit|mcp-hit|cheap|heavy] [--get] [--seconds N] [--warmup N] [--rate N] [--cpu-prof] [--perf [--perf-out FILE]]
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  ANALYTICS,
  backendPids,
  createBenchWorld,
  gatewayEnv,
  KV_ROWS,
  provision,
  SALES_YEAR,
  sessionsCpu,
} from './bench-world.js';
import { type HttpTarget, runHttpWindow } from './http-load.js';
import { mcpToolCall } from './mcp-bench.js';
import { soakMemory } from './memory-soak.js';
import { runPgWindow } from './pg-load.js';
import { postgresCpuSeconds, processCpuSeconds } from './proc-cpu.js';
import { mib, readProcessMemory } from './proc-memory.js';
import { cpuProfileParts, formatRows, type ProfileWindow, perfParts } from './profile-parts.js';
import { canPin, pinSelf, startService } from './service-process.js';
import { usageWrites } from './usage-writes.js';

const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** The .cpuprofile's window, summarised by part and per function (profile-parts.ts). */
function summariseProfile(file: string, top: number, window: ProfileWindow): string {
  const { parts, self, inclusive } = cpuProfileParts(JSON.parse(readFileSync(file, 'utf8')), window);
  return `by part (each sample given to the nearest frame on its stack that names a part; wall clock):\n${formatRows(parts)}\nself (per request, share of the window):\n${formatRows(self, top)}\ninclusive:\n${formatRows(inclusive, top)}`;
}

/** Whether `perf` can be run here. */
function hasPerf(): boolean {
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * `perf record -g` of `pid` until the returned stop is called, which gives the samples as
 * `perf script -F tid,ip,sym` text (also written to `keep`, when given, for a closer look).
 */
function recordPerf(pid: number, data: string, keep: string | undefined): () => Promise<string> {
  const recorder = spawn('perf', ['record', '-F', '999', '-g', '-p', String(pid), '-o', data], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => recorder.once('exit', () => resolve()));
  return async () => {
    recorder.kill('SIGINT');
    await exited;
    const out = execFileSync('perf', ['script', '-i', data, '-F', 'tid,ip,sym'], {
      encoding: 'utf8',
      maxBuffer: 2 ** 30,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    if (keep !== undefined) writeFileSync(keep, out);
    return out;
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const flag = (name: string, fallback: string) => {
    const i = argv.indexOf(name);
    return i >= 0 && argv[i + 1] !== undefined ? (argv[i + 1] as string) : fallback;
  };
  const scenario = flag('--scenario', 'hit');
  const seconds = Number(flag('--seconds', '8'));
  const connections = Number(flag('--connections', '64'));
  // Load before the window: V8 keeps compiling the gateway's hot path for several seconds.
  const warmup = Number(flag('--warmup', '2'));
  if (!(Number.isFinite(warmup) && warmup >= 0)) throw new Error('--warmup needs a number of seconds');
  // A fixed overall rate (requests a second) instead of a closed loop: two builds compared at
  // the same rate do the same work per second, so their CPU per request is not moved by
  // throughput (fewer requests per wake-up and per store batch when slower).
  const rate = argv.includes('--rate') ? Number(flag('--rate', '0')) : undefined;
  if (rate !== undefined && !(Number.isSafeInteger(rate) && rate > 0))
    throw new Error('--rate needs a whole number of requests a second');
  const cpuProf = argv.includes('--cpu-prof');
  const perf = argv.includes('--perf');
  // `--perf-out FILE`: the samples as `perf script` printed them, each with its whole stack.
  const perfOut = argv.includes('--perf-out') ? flag('--perf-out', '') : undefined;
  if (perf && !hasPerf()) throw new Error('--perf needs perf (Debian: linux-perf)');
  const extraEnv = JSON.parse(flag('--env', '{}')) as Record<string, string>;
  const pgUrl = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const pinned = canPin(1) ? pinSelf(0) : undefined;
  const dir = await mkdtemp(join(tmpdir(), 'quarry-profile-'));
  // perf names JavaScript frames from the map V8 writes with --perf-basic-prof.
  const profilerArgs = [
    ...(cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []),
    ...(perf ? ['--perf-basic-prof'] : []),
  ];
  const world = await createBenchWorld(pgUrl);
  try {
    const gateway = await startService({
      entry: 'gateway/src/server.ts',
      env: { ...gatewayEnv(world, 'warn'), ...extraEnv },
      cpu: pinned === undefined ? undefined : 1,
      logFile: join(dir, 'gateway.log'),
      nodeArgs: [
        ...profilerArgs,
        ...flag('--node-args', '')
          .split(' ')
          .filter((arg) => arg !== ''),
      ],
    });
    let window: ProfileWindow | undefined;
    let measuredPid = gateway.pid;
    try {
      const key = await provision(gateway.url, world, 1000);
      const [source, params] =
        scenario === 'hit' || scenario === 'mcp-hit'
          ? [ANALYTICS.revenueCached, { year: SALES_YEAR }]
          : scenario === 'cheap'
            ? [ANALYTICS.lookup, { id: 42 }]
            : [ANALYTICS.revenue, { year: SALES_YEAR }];
      let target: HttpTarget = {
        url: `${gateway.url}/v1/query`,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ source, params }),
      };
      // `--get`: the same call as GET /v1/analytics/{name}?… (issue 35: GET on the fast path too).
      if (argv.includes('--get')) {
        const query = new URLSearchParams(
          Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]),
        );
        target = {
          url: `${gateway.url}/v1/analytics/${source}?${query}`,
          method: 'GET',
          headers: { authorization: `Bearer ${key}` },
        };
      }
      // A tools/call of the same analytic over /mcp (issue 22): the cache hit's MCP cost.
      let bodyFor: ((i: number) => string) | undefined;
      if (scenario === 'mcp-hit') ({ target, bodyFor } = await mcpToolCall(gateway.url, key, source, params));
      let server = gateway;
      let bare: Awaited<ReturnType<typeof startService>> | undefined;
      if (argv.includes('--bare')) {
        // The same request against bare node:http answering the gateway's bytes (scenario a).
        const answer = await fetch(target.url, {
          method: target.method,
          headers: target.headers,
          ...(target.method === 'POST' ? { body: target.body ?? '' } : {}),
        });
        const bodyFile = join(dir, 'answer.json');
        await writeFile(bodyFile, Buffer.from(await answer.arrayBuffer()));
        bare = await startService({
          entry: 'bench/src/bare-http-server.ts',
          args: [bodyFile],
          cpu: pinned === undefined ? undefined : 1,
          readyPath: '/',
          logFile: join(dir, 'bare.log'),
          nodeArgs: profilerArgs,
        });
        server = bare;
        target = { ...target, url: `${bare.url}/v1/query` };
      }
      if (scenario === 'memory') {
        // Scenario f alone: distinct params through the 64 MiB cache, RSS sampled per chunk.
        const calls = Number(flag('--calls', '200000'));
        const memoryTarget = (id: number) => ({
          ...target,
          body: JSON.stringify({ source: ANALYTICS.distinct, params: { id, v: 1_000_000_000 } }),
        });
        await Promise.all(
          Array.from({ length: 100 }, async (_, i) => {
            const warm = memoryTarget(i + 1);
            await (
              await fetch(warm.url, { method: 'POST', headers: warm.headers, body: warm.body })
            ).arrayBuffer();
          }),
        );
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        const heapSpaces = async () => {
          const text = await (await fetch(`${gateway.url}/metrics`)).text();
          const pick = (re: RegExp) =>
            [...text.matchAll(re)].map((m) => `${m[1]} ${mib(Number(m[2]))}`).join(', ');
          const rss = readProcessMemory(gateway.pid)?.rssBytes ?? Number.NaN;
          return `RSS ${mib(rss)} MiB; ${pick(/^quarry_nodejs_(heap_size_total|heap_size_used|external_memory)_bytes (\S+)$/gm)}; committed by space: ${pick(/^quarry_nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\S+)$/gm)}`;
        };
        console.log(`idle: ${await heapSpaces()}`);
        const result = await soakMemory({
          pid: gateway.pid,
          baseUrl: gateway.url,
          key,
          source: ANALYTICS.distinct,
          targetCalls: calls,
          budgetSeconds: 3_600,
          connections,
          chunk: Number(flag('--chunk', '25000')),
          idSpan: KV_ROWS,
        });
        console.log(`after: ${await heapSpaces()}`);
        const budget = result.idleRssBytes + 64 * 2 ** 20 + 50 * 2 ** 20;
        console.log(
          `memory: ${result.calls} calls at ${result.reqPerSec.toFixed(0)} req/s; RSS idle ${mib(result.idleRssBytes)} MiB, peak ${mib(result.peakRssBytes)}, after ${mib(result.afterRssBytes)}, budget ${mib(budget)}, second half ${mib(result.secondHalfGrowthBytes)}`,
        );
        return;
      }
      if (argv.includes('--direct')) {
        // Scenario c: the analytic's SQL on a pg Pool of the connector's size, no gateway at all.
        const pool = new pg.Pool({ connectionString: pgUrl, max: 10 });
        try {
          const query =
            scenario === 'cheap'
              ? { text: world.lookupSql, values: [42] }
              : { text: world.revenueSql, values: [SALES_YEAR] };
          if (warmup > 0) await runPgWindow(pool, query, { concurrency: connections, seconds: warmup });
          const pgBefore = postgresCpuSeconds();
          const meBefore = process.cpuUsage();
          const load = await runPgWindow(pool, query, { concurrency: connections, seconds });
          const me = process.cpuUsage(meBefore);
          const pgCpu = postgresCpuSeconds() - pgBefore;
          const per = (s: number) => ((s * 1e6) / load.window.requests).toFixed(1);
          console.log(
            `${scenario} direct: ${load.window.reqPerSec.toFixed(0)} q/s, p50 ${load.window.p50Ms.toFixed(2)} ms, p99 ${load.window.p99Ms.toFixed(2)} ms`,
          );
          console.log(
            `CPU per query: postgres ${per(pgCpu)} µs (${((100 * pgCpu) / seconds).toFixed(0)}%), client ${per((me.user + me.system) / 1e6)} µs`,
          );
        } finally {
          await pool.end();
        }
        return;
      }
      measuredPid = server.pid;
      const perRequest = {
        ...(bodyFor === undefined ? {} : { bodyFor }),
        ...(rate === undefined ? {} : { overallRate: rate }),
      };
      if (warmup > 0) await runHttpWindow(target, { connections, seconds: warmup, ...perRequest });
      const writesBefore = bare === undefined ? await usageWrites(gateway.url) : undefined;
      // The gateway's own PostgreSQL sessions (its store pool, its warehouse pool), by name.
      const storeClock = await sessionsCpu(pgUrl, [world.storeApp]);
      const warehouseClock = await sessionsCpu(pgUrl, [world.warehouseApp]);
      const before = { gw: processCpuSeconds(server.pid), pg: postgresCpuSeconds(), me: process.cpuUsage() };
      const fromUs = monotonicUs();
      const stopPerf = perf ? recordPerf(server.pid, join(dir, 'perf.data'), perfOut) : undefined;
      const load = await runHttpWindow(target, { connections, seconds, ...perRequest });
      window = { fromUs, toUs: monotonicUs(), requests: load.window.requests };
      const me = process.cpuUsage(before.me);
      const gw = processCpuSeconds(server.pid) - before.gw;
      const perfScript = await stopPerf?.();
      const memory = readProcessMemory(server.pid);
      const storeCpu = await storeClock();
      const warehouseCpu = await warehouseClock();
      const storeSessions = (await backendPids(pgUrl, world.storeApp)).length;
      const warehouseSessions = (await backendPids(pgUrl, world.warehouseApp)).length;
      await bare?.stop();
      const pgCpu = postgresCpuSeconds() - before.pg;
      const writesAfter = writesBefore === undefined ? undefined : await usageWrites(gateway.url);
      const per = (s: number) => ((s * 1e6) / load.window.requests).toFixed(1);
      console.log(
        `${scenario}: ${load.window.reqPerSec.toFixed(0)} req/s, p50 ${load.window.p50Ms.toFixed(2)} ms, p99 ${load.window.p99Ms.toFixed(2)} ms, failures ${load.window.failures}, steal ${(100 * load.window.steal).toFixed(1)}%`,
      );
      console.log(
        `CPU per request: gateway ${per(gw)} µs (${((100 * gw) / seconds).toFixed(0)}% of a core), postgres ${per(pgCpu)} µs (${((100 * pgCpu) / seconds).toFixed(0)}%), load generator ${per((me.user + me.system) / 1e6)} µs`,
      );
      if (memory !== undefined)
        console.log(
          `RSS: ${mib(memory.rssBytes)} MiB at the window's end, peak ${mib(memory.peakRssBytes)} MiB`,
        );
      if (perfScript !== undefined) {
        const { parts, self } = perfParts(perfScript, server.pid, (gw * 1e6) / load.window.requests);
        console.log(
          `perf, ${server === bare ? 'the bare server' : 'the gateway'}'s CPU by part (each sample given to the nearest frame on its stack that names a part; CPU time only, kernel included):\n${formatRows(parts)}\nself, the main thread's frame each sample was taken in (per request, share of all samples):\n${formatRows(self, Number(flag('--top', '40')))}`,
        );
      }
      if (bare === undefined) {
        const events =
          writesBefore === undefined || writesAfter === undefined
            ? 0
            : Object.keys(writesAfter).reduce(
                (sum, kind) => sum + (writesAfter[kind]?.items ?? 0) - (writesBefore[kind]?.items ?? 0),
                0,
              );
        console.log(
          `PostgreSQL, this gateway's sessions only: store ${per(storeCpu)} µs/req (${storeSessions} sessions at the end; ${events > 0 ? ((storeCpu * 1e6) / events).toFixed(1) : '-'} µs per usage write item), warehouse ${per(warehouseCpu)} µs/req (${warehouseSessions} sessions); every other postgres process ${per(pgCpu - storeCpu - warehouseCpu)} µs/req`,
        );
      }
      if (writesBefore !== undefined && writesAfter !== undefined) {
        for (const kind of Object.keys(writesAfter)) {
          const [a, b] = [writesBefore[kind] ?? { writes: 0, items: 0, seconds: 0 }, writesAfter[kind]];
          if (b === undefined) continue;
          const writes = b.writes - a.writes;
          if (writes === 0) continue;
          console.log(
            `usage ${kind} writes: ${writes} batches, ${((b.items - a.items) / writes).toFixed(1)} calls each, ${((1000 * (b.seconds - a.seconds)) / writes).toFixed(2)} ms each`,
          );
        }
      }
    } finally {
      await gateway.stop();
    }
    if (cpuProf) {
      // The measured process's main thread (CPU.<date>.<time>.<pid>.0.<seq>.cpuprofile): tsx's
      // loader thread and, with --bare, the idle gateway write profiles too.
      const file = (await readdir(dir)).find(
        (f) =>
          f.endsWith('.cpuprofile') && f.split('.')[3] === String(measuredPid) && f.split('.')[4] === '0',
      );
      if (file === undefined) console.log('no CPU profile was written');
      else if (window !== undefined)
        console.log(
          `${join(dir, file)}, the measured window only:\n${summariseProfile(join(dir, file), Number(flag('--top', '40')), window)}`,
        );
    }
  } finally {
    pinned?.();
    await world.drop();
    if (!cpuProf) await rm(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
