// The parts of the embedded default's resident memory, each in a process of its own (compiled
// build, plain node): Node alone, PGlite alone (the store a gateway left in a data directory,
// opened and migrated), DuckDB alone (the demo warehouse, opened read-only, one demo query) and
// the gateway with the demo off (QUARRY_DEMO=false: the store, no DuckDB). The gateway with the
// demo on is footprint.ts's own restart row. Each row says where its pages are (smaps-breakdown.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { gatewayHeapFlags, gatewayMallocEnv } from '../../scripts/gateway-heap-flags.mjs';
import { mib } from './proc-memory.js';
import { freePort, REPO_ROOT } from './service-process.js';
import { type ResidentBreakdown, readResidentBreakdown } from './smaps-breakdown.js';

/** One part's resident memory, in MiB. */
export interface BreakdownRow {
  readonly part: string;
  readonly rssMiB: number;
  /** WebAssembly memory resident (PGlite's Postgres). */
  readonly wasmMiB: number;
  /** node's own binary, mapped. */
  readonly nodeBinaryMiB: number;
  /** DuckDB's native library, mapped. */
  readonly duckdbLibMiB: number;
  readonly otherFilesMiB: number;
  /** V8 heap, code, malloc (DuckDB's buffers, compiler threads' arenas), stacks. */
  readonly otherAnonMiB: number;
  readonly heapUsedMiB: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A row from a smaps reading and the V8 heap used. */
export function breakdownRow(
  part: string,
  memory: ResidentBreakdown | undefined,
  heapUsedBytes: number,
): BreakdownRow {
  const file = (name: string) => memory?.files[name] ?? 0;
  const allFiles = Object.values(memory?.files ?? {}).reduce((sum, bytes) => sum + bytes, 0);
  const known = file('node') + file('libduckdb.so');
  return {
    part,
    rssMiB: memory ? mib(memory.rssBytes) : Number.NaN,
    wasmMiB: memory ? mib(memory.wasmBytes) : Number.NaN,
    nodeBinaryMiB: mib(file('node')),
    duckdbLibMiB: mib(file('libduckdb.so')),
    otherFilesMiB: mib(allFiles - known),
    otherAnonMiB: memory ? mib(memory.otherAnonBytes) : Number.NaN,
    heapUsedMiB: mib(heapUsedBytes),
  };
}

async function stopped(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await exited;
}

/** Runs footprint-probe.mjs for one part and reads its memory once it says it has settled. */
async function probe(part: string, args: readonly string[]): Promise<BreakdownRow> {
  const child = spawn(process.execPath, ['bench/src/footprint-probe.mjs', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        if (out.includes('\n')) resolve(out.trim());
      });
      child.once('exit', (code) => reject(new Error(`probe ${part} exited (${code})`)));
    });
    const { heapUsedBytes } = JSON.parse(line) as { heapUsedBytes: number };
    return breakdownRow(part, readResidentBreakdown(child.pid ?? -1), heapUsedBytes);
  } finally {
    await stopped(child);
  }
}

/** The compiled gateway on `dataDir` with the demo off, 3 s after /healthz first answers. */
async function gatewayDemoOff(dataDir: string): Promise<BreakdownRow> {
  const port = await freePort();
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    HOST: '127.0.0.1',
    PORT: String(port),
    QUARRY_DATA_DIR: dataDir,
    QUARRY_DEMO: 'false',
  };
  const gateway = spawn(process.execPath, [...gatewayHeapFlags(env), 'gateway/dist/server.js'], {
    cwd: REPO_ROOT,
    env: { ...env, ...gatewayMallocEnv(env) },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    const deadline = performance.now() + 120_000;
    for (;;) {
      if (performance.now() > deadline) throw new Error('gateway (demo off): no /healthz within 120 s');
      if (gateway.exitCode !== null) throw new Error(`gateway (demo off) exited (${gateway.exitCode})`);
      const ok = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
        async (r) => {
          await r.body?.cancel();
          return r.status === 200;
        },
        () => false,
      );
      if (ok) break;
      await sleep(50);
    }
    await sleep(3000);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const heap = Number(/^quarry_nodejs_heap_size_used_bytes (\S+)$/m.exec(metrics)?.[1] ?? Number.NaN);
    return breakdownRow('gateway, demo off (store only)', readResidentBreakdown(gateway.pid ?? -1), heap);
  } finally {
    await stopped(gateway);
  }
}

/** Every part, on a data directory a compiled gateway has already started on (store and demo). */
export async function measureBreakdown(dataDir: string): Promise<BreakdownRow[]> {
  return [
    await probe('node alone', ['bare']),
    await probe('PGlite alone (store opened, migrated)', ['pglite', join(dataDir, 'pglite')]),
    await probe('DuckDB alone (demo warehouse, one query)', ['duckdb', join(dataDir, 'demo.duckdb')]),
    await gatewayDemoOff(dataDir),
  ];
}
