// Smoke test of the gateway bench: every scenario runs for about a second with small counts, so CI
// proves `npm run bench` still works end to end (store schema, warehouse tables, gateway process,
// load, counting, RSS, report, JSON, cleanup). It asserts the bench measured what it claims to,
// never a speed. Needs Postgres: skipped loudly without it, failed under CI=true.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { gatewayBenchOptionsFrom, runGatewayBench } from './gateway-bench.js';
import type { GatewayBenchOptions } from './gateway-bench-options.js';
import { formatGatewayBench, writeGatewayBenchJson } from './gateway-bench-report.js';

const PG_URL = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function pgAvailable(): Promise<true | string> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch (error) {
    return `Postgres at ${PG_URL} is unreachable (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => {});
  }
}

const availability = await pgAvailable();
if (availability !== true) {
  if (process.env.CI === 'true') throw new Error(`CI requires Postgres: ${availability}`);
  console.warn(`\n!!!!!!!! SKIPPING the gateway bench smoke test: ${availability} !!!!!!!!\n`);
}

describe.skipIf(availability !== true)('gateway bench (smoke: ~1 s per scenario)', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('runs a–f, reports every figure and target, writes the JSON and removes its schemas', async () => {
    const options: GatewayBenchOptions = {
      ...gatewayBenchOptionsFrom([], { QUARRY_TEST_PG_URL: PG_URL }),
      connections: 4,
      seconds: 1,
      warmupSeconds: 0,
      pairs: 1,
      coalesceCalls: 40,
      coalesceQueryMs: 500,
      memoryCalls: 600,
      memoryChunk: 200,
      pin: false,
    };
    const result = await runGatewayBench(options);

    // b measured the gateway's cache hit, and every side answered without failures.
    expect(result.cacheOutcome).toBe('HIT');
    for (const side of [
      result.ab.a,
      result.ab.b,
      result.cdCheap.a,
      result.cdCheap.b,
      result.cdHeavy.a,
      result.cdHeavy.b,
    ]) {
      expect(side.reqPerSec).toBeGreaterThan(0);
      expect(side.failures).toBe(0);
      expect(side.p99Ms).toBeGreaterThanOrEqual(side.p50Ms);
      // CPU from /proc: the load generator always works; every side costs PostgreSQL something
      // but a (the bare server never touches it, so it is only not negative there).
      expect(side.loadCpu).toBeGreaterThan(0);
      expect(side.postgresCpu).toBeGreaterThanOrEqual(0);
      expect(side.cpuUsPerRequest).toBeGreaterThan(0);
    }
    // The server under test is measured on the HTTP sides; c has no server (its client is loadgen).
    for (const side of [result.ab.a, result.ab.b, result.cdCheap.b, result.cdHeavy.b]) {
      expect(side.serverCpu).toBeGreaterThan(0);
    }
    expect(result.cdCheap.a.serverCpu).toBe(0);
    for (const side of [
      result.ab.b,
      result.cdCheap.a,
      result.cdCheap.b,
      result.cdHeavy.a,
      result.cdHeavy.b,
    ]) {
      expect(side.postgresCpu).toBeGreaterThan(0);
    }
    expect(result.ab.pairs).toHaveLength(1);
    // e: the warehouse's own count of runs (0 would mean the counting is broken), every call answered.
    expect(result.coalesce.warehouseQueries).toBeGreaterThanOrEqual(1);
    expect(result.coalesce.statuses).toEqual({ 200: 40 });
    // f: all calls made, RSS read from /proc.
    expect(result.memory.calls).toBe(600);
    expect(result.memory.samples).toHaveLength(3);
    expect(result.memory.idleRssBytes).toBeGreaterThan(0);
    expect(result.memory.peakRssBytes).toBeGreaterThanOrEqual(result.memory.afterRssBytes);

    const report = formatGatewayBench(result);
    for (const line of [
      'a  bare node:http',
      'b  gateway, cache HIT',
      'd  gateway, heavy, no cache',
      'e: 40',
      'f: measured 600',
      'CPU ceilings on',
      'd/c cheap: ≤ ',
    ]) {
      expect(report).toContain(line);
    }
    expect(report).toMatch(/e warehouse queries .* (PASS|OVER)/);
    // Issue 35's CPU ratios, the server process alone: printed and judged.
    expect(report).toMatch(
      /server CPU per request \(the server process alone\): a \d+\.\d µs, b \d+\.\d µs \(\d+\.\d\d× a/,
    );
    expect(report).toMatch(/b server CPU ÷ a .* (PASS|OVER)/);
    expect(report).toMatch(/d cheap server CPU ÷ a .* (PASS|OVER)/);

    const dir = await mkdtemp(join(tmpdir(), 'quarry-bench-smoke-'));
    dirs.push(dir);
    const file = await writeGatewayBenchJson(result, pathToFileURL(`${dir}/`));
    const json = JSON.parse(await readFile(file, 'utf8')) as {
      bench: string;
      targets: unknown[];
      cpuCeilings: { name: string; reqPerSec: number; ratio: number }[];
    };
    expect(json.bench).toBe('gateway');
    expect(json.targets).toHaveLength(10);
    expect(json.cpuCeilings.map((c) => c.name)).toEqual(['b/a', 'd/c cheap', 'd/c heavy']);
    for (const c of json.cpuCeilings) expect(c.ratio).toBeGreaterThan(0);

    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      const left = await client.query(
        `SELECT nspname FROM pg_namespace WHERE nspname LIKE 'quarry_bench_%' AND nspname LIKE $1`,
        [`%\\_${process.pid}\\_%`],
      );
      expect(left.rows).toEqual([]);
    } finally {
      await client.end();
    }
  }, 180_000);
});
