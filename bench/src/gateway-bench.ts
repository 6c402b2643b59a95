// The gateway bench (issue 5): a–f measured in one run, A/B windows alternated over paired
// ratios. a bare node:http vs b the gateway's cache hit; c a pg Pool loop vs d the gateway
// uncached, on a cheap keyed lookup and on a heavy aggregate; e the warehouse queries behind
// 1,000 concurrent identical misses; f the gateway's RSS through a million distinct params.
// Starts its own store schema, warehouse tables and gateway process, and removes them after.
// Run: npm run bench:gateway -w @quarry/bench -- [--seconds N] [--pairs N] [--connections N] …
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { ANALYTICS, createBenchWorld, gatewayEnv, KV_ROWS, provision, SALES_YEAR } from './bench-world.js';
import { type CoalesceResult, probeCoalescing } from './coalescing-probe.js';
import type { GatewayBenchOptions } from './gateway-bench-options.js';
import {
  formatGatewayBench,
  type GatewayBenchResult,
  writeGatewayBenchJson,
} from './gateway-bench-report.js';
import { type HttpTarget, runHttpWindow } from './http-load.js';
import { type MemoryResult, soakMemory } from './memory-soak.js';
import { type PairedResult, runPaired } from './paired-load.js';
import { runPgWindow } from './pg-load.js';
import { canPin, pinSelf, type ServiceProcess, startService } from './service-process.js';

/** Options for {@link runGatewayBench}. */

const PIN_LOAD_CPU = 0;
const PIN_SERVER_CPU = 1;
/** The connector's default pool size: c's pg Pool gets the same number of connections. */
const WAREHOUSE_POOL_MAX = 10;

function queryTarget(base: string, key: string | undefined, source: string, params: unknown): HttpTarget {
  return {
    url: `${base}/v1/query`,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify({ source, params }),
  };
}

async function call(target: HttpTarget): Promise<{ status: number; cache: string; body: Buffer }> {
  const response = await fetch(target.url, {
    method: target.method,
    headers: target.headers,
    ...(target.body === undefined ? {} : { body: target.body }),
  });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(`${target.url}: ${response.status} ${body.toString()}`);
  return { status: response.status, cache: response.headers.get('x-cache') ?? 'none', body };
}

/** Scenario a/b: the bare server with the gateway's cached bytes vs the gateway's cache hit. */
async function benchCacheHit(
  gateway: ServiceProcess,
  key: string,
  dir: string,
  options: GatewayBenchOptions,
  cpu: number | undefined,
): Promise<{ paired: PairedResult; cacheOutcome: string; bodyBytes: number }> {
  const b = queryTarget(gateway.url, key, ANALYTICS.revenueCached, { year: SALES_YEAR });
  await call(b);
  // The second call of the same params is what b measures: a HIT once the cache is on this path.
  const captured = await call(b);
  const bodyFile = join(dir, 'cached-answer.json');
  await writeFile(bodyFile, captured.body);
  const bare = await startService({
    entry: 'bench/src/bare-http-server.ts',
    args: [bodyFile],
    cpu,
    readyPath: '/',
    logFile: join(dir, 'bare.log'),
  });
  try {
    const a: HttpTarget = { ...b, url: `${bare.url}/v1/query` };
    const load = { connections: options.connections, seconds: options.seconds };
    const [loadA, loadB] = [
      { ...load, serverPid: bare.pid },
      { ...load, serverPid: gateway.pid },
    ];
    if (options.warmupSeconds > 0) {
      const warm = { ...load, seconds: options.warmupSeconds };
      await runHttpWindow(a, warm);
      await runHttpWindow(b, warm);
    }
    const paired = await runPaired(
      { pairs: options.pairs, maxSteal: options.maxSteal, label: 'a/b' },
      () => runHttpWindow(a, loadA),
      () => runHttpWindow(b, loadB),
    );
    return { paired, cacheOutcome: captured.cache, bodyBytes: captured.body.length };
  } finally {
    await bare.stop();
  }
}

/** Equal rows, reading decimal strings (pg's numeric) and numbers (the gateway's JSON) as the same value. */
function sameRows(a: readonly Record<string, unknown>[], b: readonly Record<string, unknown>[]): boolean {
  const normal = (rows: readonly Record<string, unknown>[]) =>
    JSON.stringify(rows, (_key, value: unknown) =>
      typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value,
    );
  return normal(a) === normal(b);
}

/** Scenario c/d for one analytic: the pg Pool loop vs the gateway without cache, same SQL. */
async function benchUncached(
  label: string,
  pool: pg.Pool,
  sql: string,
  value: number,
  target: HttpTarget,
  gatewayPid: number,
  options: GatewayBenchOptions,
): Promise<PairedResult> {
  // Same rows both ways, or the comparison means nothing.
  const direct = await pool.query({ text: sql, values: [value] });
  const viaGateway = JSON.parse((await call(target)).body.toString()) as {
    results: Record<string, unknown>[];
  };
  if (sameRows(viaGateway.results, direct.rows) === false) {
    throw new Error(
      `${label}: the gateway and the pg Pool disagree: ${JSON.stringify(viaGateway.results)} vs ${JSON.stringify(direct.rows)}`,
    );
  }
  const query = { text: sql, values: [value] };
  const workers = { concurrency: options.connections, seconds: options.seconds };
  const load = { connections: options.connections, seconds: options.seconds, serverPid: gatewayPid };
  if (options.warmupSeconds > 0) {
    await runPgWindow(pool, query, { ...workers, seconds: options.warmupSeconds });
    await runHttpWindow(target, { ...load, seconds: options.warmupSeconds });
  }
  return runPaired(
    { pairs: options.pairs, maxSteal: options.maxSteal, label },
    () => runPgWindow(pool, query, workers),
    () => runHttpWindow(target, load),
  );
}

/** Scenario f on a fresh gateway process, so its idle footprint is its own. */
async function benchMemory(
  env: Record<string, string>,
  key: string,
  dir: string,
  options: GatewayBenchOptions,
  cpu: number | undefined,
): Promise<MemoryResult> {
  const gateway = await startService({
    entry: 'gateway/src/server.ts',
    env,
    cpu,
    logFile: join(dir, 'gateway-memory.log'),
  });
  try {
    // Warm: code paths loaded, connector pool open, key cached; then let it settle.
    const warm = Array.from({ length: 100 }, (_, i) =>
      call(queryTarget(gateway.url, key, ANALYTICS.distinct, { id: i + 1, v: 1_000_000_000 })),
    );
    await Promise.all(warm);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    return await soakMemory({
      pid: gateway.pid,
      baseUrl: gateway.url,
      key,
      source: ANALYTICS.distinct,
      targetCalls: options.memoryCalls,
      budgetSeconds: options.memoryBudgetSeconds,
      connections: options.connections,
      chunk: options.memoryChunk,
      idSpan: KV_ROWS,
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}\ngateway log:\n${gateway.tail()}`);
  } finally {
    await gateway.stop();
  }
}

/** Runs a–f once and returns every figure (nothing printed but progress on stderr). */
export async function runGatewayBench(options: GatewayBenchOptions): Promise<GatewayBenchResult> {
  const startedAt = new Date().toISOString();
  const unpin = options.pin && canPin(PIN_SERVER_CPU) ? pinSelf(PIN_LOAD_CPU) : undefined;
  const pinned = unpin !== undefined;
  if (options.pin && !pinned)
    process.stderr.write('!!! cannot pin to CPUs 0/1 (taskset?): running unpinned\n');
  const cpu = pinned ? PIN_SERVER_CPU : undefined;
  const cpuBefore = process.cpuUsage();
  const dir = await mkdtemp(join(tmpdir(), 'quarry-gateway-bench-'));
  process.stderr.write('gateway bench: creating the store schema and warehouse tables\n');
  const world = await createBenchWorld(options.pgUrl);
  const pool = new pg.Pool({ connectionString: options.pgUrl, max: WAREHOUSE_POOL_MAX });
  pool.on('error', () => {});
  try {
    const env = gatewayEnv(world, options.logLevel);
    const gateway = await startService({
      entry: 'gateway/src/server.ts',
      env,
      cpu,
      logFile: join(dir, 'gateway.log'),
    });
    let key: string;
    let ab: Awaited<ReturnType<typeof benchCacheHit>>;
    let cdCheap: PairedResult;
    let cdHeavy: PairedResult;
    let coalesce: CoalesceResult;
    try {
      key = await provision(gateway.url, world, options.coalesceQueryMs);
      process.stderr.write('a/b: bare node:http vs the gateway cache hit\n');
      ab = await benchCacheHit(gateway, key, dir, options, cpu);
      process.stderr.write('c/d cheap: pg Pool vs the gateway uncached, keyed lookup\n');
      cdCheap = await benchUncached(
        'c/d cheap',
        pool,
        world.lookupSql,
        42,
        queryTarget(gateway.url, key, ANALYTICS.lookup, { id: 42 }),
        gateway.pid,
        options,
      );
      process.stderr.write('c/d heavy: pg Pool vs the gateway uncached, revenue by region\n');
      cdHeavy = await benchUncached(
        'c/d heavy',
        pool,
        world.revenueSql,
        SALES_YEAR,
        queryTarget(gateway.url, key, ANALYTICS.revenue, { year: SALES_YEAR }),
        gateway.pid,
        options,
      );
      process.stderr.write(`e: ${options.coalesceCalls} concurrent identical misses\n`);
      coalesce = await probeCoalescing({
        pgUrl: options.pgUrl,
        channel: world.channel,
        baseUrl: gateway.url,
        key,
        source: ANALYTICS.coalesce,
        calls: options.coalesceCalls,
      });
    } catch (error) {
      throw new Error(`${(error as Error).message}\ngateway log:\n${gateway.tail()}`);
    } finally {
      await gateway.stop();
    }
    process.stderr.write(`f: ${options.memoryCalls} distinct params through a 64 MiB cache\n`);
    const memory = await benchMemory(env, key, dir, options, cpu);
    const cpu2 = process.cpuUsage(cpuBefore);
    return {
      startedAt,
      finishedAt: new Date().toISOString(),
      pinned,
      options,
      cacheOutcome: ab.cacheOutcome,
      cachedBodyBytes: ab.bodyBytes,
      ab: ab.paired,
      cdCheap,
      cdHeavy,
      coalesce,
      memory,
      benchCpuSeconds: (cpu2.user + cpu2.system) / 1e6,
    };
  } finally {
    unpin?.();
    await pool.end();
    await world.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

function intFlag(text: string | undefined, flag: string, min: number): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${flag} needs an integer ≥ ${min}`);
  return value;
}

/** Parses argv (and the test service URL) into options; the defaults are the figures. */
export function gatewayBenchOptionsFrom(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): GatewayBenchOptions {
  const o = {
    connections: 64,
    seconds: 5,
    warmupSeconds: 2,
    pairs: 5,
    maxSteal: 0.05,
    coalesceCalls: 1_000,
    coalesceQueryMs: 5_000,
    memoryCalls: 1_000_000,
    memoryBudgetSeconds: 240,
    memoryChunk: 25_000,
    pin: true,
    logLevel: 'warn',
    pgUrl: env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--no-pin') {
      o.pin = false;
      continue;
    }
    if (flag === '--connections') o.connections = intFlag(value, flag, 1);
    else if (flag === '--seconds') o.seconds = intFlag(value, flag, 1);
    else if (flag === '--warmup') o.warmupSeconds = intFlag(value, flag, 0);
    else if (flag === '--pairs') o.pairs = intFlag(value, flag, 1);
    else if (flag === '--coalesce-calls') o.coalesceCalls = intFlag(value, flag, 1);
    else if (flag === '--coalesce-query-ms') o.coalesceQueryMs = intFlag(value, flag, 0);
    else if (flag === '--memory-calls') o.memoryCalls = intFlag(value, flag, 1);
    else if (flag === '--memory-budget') o.memoryBudgetSeconds = intFlag(value, flag, 1);
    else if (flag === '--memory-chunk') o.memoryChunk = intFlag(value, flag, 1);
    else if (flag === '--log-level') o.logLevel = value ?? 'warn';
    else throw new Error(`unknown option ${flag}`);
    i++;
  }
  return o;
}

async function main(): Promise<void> {
  const options = gatewayBenchOptionsFrom(process.argv.slice(2), process.env);
  const result = await runGatewayBench(options);
  console.log(formatGatewayBench(result));
  console.log(`results: ${await writeGatewayBenchJson(result)}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
