// The connector overhead bench: per engine, alternating windows of sequential one-row lookups
// through the bare driver (A) and through our connector (B), A B A B …, on one connection each.
// Prints median and p99 per-query latency, the B/A ratio of every pair and the median of those
// ratios (the figure the "≤ 5% overhead at the median" budget is judged on), flags windows with
// more than 5% CPU steal and drops their pairs, and writes everything to bench/results/.
// Run: npm run bench:connector -w @quarry/bench -- [--queries N] [--pairs N] [--warmup N] [--engines a,b]
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { pathToFileURL } from 'node:url';
import {
  BENCH_KEYS,
  BENCH_TARGETS,
  type BenchTarget,
  type BenchTargetConfig,
  expectedName,
} from './connector-bench-targets.js';
import { readCpuTimes, stealFraction } from './cpu-steal.js';
import { median, quantile } from './latency-stats.js';
import { usedPairs } from './paired-load.js';

/** Options for {@link runConnectorBench}. */
export interface ConnectorBenchOptions {
  /** Queries per window (default 2,000). */
  readonly queries: number;
  /** A/B pairs per engine (default 7; at least 5). */
  readonly pairs: number;
  /** Unmeasured queries per side before the first window (default 500). */
  readonly warmup: number;
  /** Engines to run (default all: postgres, mysql, duckdb). */
  readonly engines: readonly string[];
  /** A window whose CPU steal exceeds this fraction is flagged and its pair dropped (default 0.05). */
  readonly maxSteal: number;
  readonly targets: BenchTargetConfig;
}

/** One measured window of sequential queries. */
export interface WindowResult {
  readonly side: 'A' | 'B';
  readonly pair: number;
  readonly queries: number;
  readonly medianUs: number;
  readonly p99Us: number;
  readonly meanUs: number;
  /** CPU steal during the window (0–1). */
  readonly steal: number;
}

/** Everything measured for one engine. */
export interface EngineResult {
  readonly engine: string;
  readonly status: 'ok' | 'skipped' | 'failed';
  readonly reason?: string;
  readonly windows: readonly WindowResult[];
  /** B/A ratio of window medians, per pair; `dropped` when either window had too much steal. */
  readonly pairs: readonly { readonly pair: number; readonly ratio: number; readonly dropped: boolean }[];
  /** Latencies pooled over the kept windows. */
  readonly aMedianUs?: number;
  readonly bMedianUs?: number;
  readonly aP99Us?: number;
  readonly bP99Us?: number;
  /** Median of the kept pairs' ratios (all pairs if every pair was dropped). */
  readonly medianRatio?: number;
  /** B's pooled median minus A's: what the connector adds per query, in µs. */
  readonly addedUs?: number;
  /** True when medianRatio ≤ 1.05; absent for engines the budget does not apply to. */
  readonly withinBudget?: boolean;
}

/** The overhead budget: B may take at most 5% longer than A at the median. */
export const OVERHEAD_BUDGET = 1.05;

function keyFor(i: number): number {
  // A fixed stride over every key, identical for A and B, so both read the same rows in the same order.
  return ((i * 7919) % BENCH_KEYS) + 1;
}

/** A window's summary plus its raw latencies, which only feed the pooled statistics. */
interface MeasuredWindow {
  readonly result: WindowResult;
  readonly latencies: Float64Array;
}

async function measureWindow(
  run: (id: number) => Promise<string>,
  queries: number,
  side: 'A' | 'B',
  pair: number,
): Promise<MeasuredWindow> {
  const latencies = new Float64Array(queries);
  const before = readCpuTimes();
  for (let i = 0; i < queries; i++) {
    const started = performance.now();
    await run(keyFor(i));
    latencies[i] = (performance.now() - started) * 1000;
  }
  const steal = stealFraction(before, readCpuTimes());
  let sum = 0;
  for (const v of latencies) sum += v;
  const result = {
    side,
    pair,
    queries,
    medianUs: median(latencies),
    p99Us: quantile(latencies, 0.99),
    meanUs: sum / queries,
    steal,
  };
  return { result, latencies };
}

async function checkSameRows(target: BenchTarget): Promise<void> {
  for (const id of [1, Math.ceil(BENCH_KEYS / 2), BENCH_KEYS]) {
    const [a, b] = [await target.bare(id), await target.connector(id)];
    if (a !== expectedName(id) || b !== expectedName(id)) {
      throw new Error(`A and B disagree on key ${id}: bare ${a}, connector ${b}`);
    }
  }
}

function pooled(windows: readonly MeasuredWindow[]): Float64Array {
  const parts = windows.map((w) => w.latencies);
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

async function benchEngine(
  target: BenchTarget,
  budgeted: boolean,
  options: ConnectorBenchOptions,
): Promise<EngineResult> {
  await checkSameRows(target);
  for (let i = 0; i < options.warmup; i++) await target.bare(keyFor(i));
  for (let i = 0; i < options.warmup; i++) await target.connector(keyFor(i));
  const windows: MeasuredWindow[] = [];
  const pairs: { pair: number; ratio: number; dropped: boolean }[] = [];
  for (let pair = 1; pair <= options.pairs; pair++) {
    const measuredA = await measureWindow(target.bare, options.queries, 'A', pair);
    const measuredB = await measureWindow(target.connector, options.queries, 'B', pair);
    windows.push(measuredA, measuredB);
    const [a, b] = [measuredA.result, measuredB.result];
    const dropped = a.steal > options.maxSteal || b.steal > options.maxSteal;
    pairs.push({ pair, ratio: b.medianUs / a.medianUs, dropped });
    process.stderr.write(
      `  ${target.engine} pair ${pair}: A ${a.medianUs.toFixed(1)} µs, B ${b.medianUs.toFixed(1)} µs, ` +
        `B/A ${(b.medianUs / a.medianUs).toFixed(3)}${dropped ? ' (dropped: steal)' : ''}\n`,
    );
  }
  const used = usedPairs(pairs);
  const kept = windows.filter((w) => used.some((p) => p.pair === w.result.pair));
  const aLatencies = pooled(kept.filter((w) => w.result.side === 'A'));
  const bLatencies = pooled(kept.filter((w) => w.result.side === 'B'));
  const medianRatio = median(used.map((p) => p.ratio));
  const aMedianUs = median(aLatencies);
  const bMedianUs = median(bLatencies);
  return {
    engine: target.engine,
    status: 'ok',
    ...(pairs.every((p) => p.dropped)
      ? { reason: 'every pair had > steal limit; figures use all pairs' }
      : {}),
    windows: windows.map((w) => w.result),
    pairs,
    aMedianUs,
    bMedianUs,
    aP99Us: quantile(aLatencies, 0.99),
    bP99Us: quantile(bLatencies, 0.99),
    medianRatio,
    addedUs: bMedianUs - aMedianUs,
    ...(budgeted ? { withinBudget: medianRatio <= OVERHEAD_BUDGET } : {}),
  };
}

/** Runs the bench for every selected engine; an engine that cannot start is skipped (or failed if required). */
export async function runConnectorBench(options: ConnectorBenchOptions): Promise<EngineResult[]> {
  const results: EngineResult[] = [];
  for (const factory of BENCH_TARGETS) {
    if (!options.engines.includes(factory.engine)) continue;
    process.stderr.write(`${factory.engine}: setting up\n`);
    let target: BenchTarget;
    try {
      target = await factory.create(options.targets);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      process.stderr.write(
        `!!! ${factory.engine} is not available, ${factory.required ? 'FAILED' : 'skipped'}: ${reason}\n`,
      );
      results.push({
        engine: factory.engine,
        status: factory.required ? 'failed' : 'skipped',
        reason,
        windows: [],
        pairs: [],
      });
      continue;
    }
    try {
      results.push(await benchEngine(target, factory.budgeted, options));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      process.stderr.write(`!!! ${factory.engine} failed: ${reason}\n`);
      results.push({ engine: factory.engine, status: 'failed', reason, windows: [], pairs: [] });
    } finally {
      await target.close();
    }
  }
  return results;
}

function fmt(value: number | undefined, digits = 1): string {
  return value === undefined || Number.isNaN(value) ? '—' : value.toFixed(digits);
}

/** The human table: one line per engine, then each engine's paired ratios. */
export function formatConnectorBench(
  results: readonly EngineResult[],
  options: ConnectorBenchOptions,
): string {
  const header = [
    'engine',
    'A med µs',
    'B med µs',
    'B−A µs',
    'A p99 µs',
    'B p99 µs',
    'median B/A',
    'budget ≤5%',
  ];
  const rows = results.map((r) =>
    r.status !== 'ok'
      ? [r.engine, r.status.toUpperCase(), '', '', '', '', '', r.reason?.slice(0, 60) ?? '']
      : [
          r.engine,
          fmt(r.aMedianUs),
          fmt(r.bMedianUs),
          fmt(r.addedUs),
          fmt(r.aP99Us),
          fmt(r.bP99Us),
          fmt(r.medianRatio, 3),
          r.withinBudget === undefined ? 'n/a' : r.withinBudget ? 'PASS' : 'OVER',
        ],
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  const out = [
    `connector bench: ${options.pairs} pairs × ${options.queries} sequential one-row queries per window, ` +
      `A = bare driver, B = Quarry connector (validateParams + connector.query), one connection each`,
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
  ];
  for (const r of results) {
    if (r.status !== 'ok') continue;
    const ratios = r.pairs.map((p) => `${p.ratio.toFixed(3)}${p.dropped ? '*' : ''}`).join(' ');
    const steal = Math.max(...r.windows.map((w) => w.steal)) * 100;
    out.push(
      `${r.engine} paired B/A: ${ratios}   (max steal ${steal.toFixed(1)}%; * = dropped, steal > ${options.maxSteal * 100}%)`,
    );
  }
  return out.join('\n');
}

/** Writes the run to bench/results/connector-<timestamp>.json and returns the path. */
export async function writeConnectorBenchJson(
  results: readonly EngineResult[],
  options: ConnectorBenchOptions,
): Promise<string> {
  const dir = new URL('../results/', import.meta.url);
  await mkdir(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = new URL(`connector-${stamp}.json`, dir);
  const cpu = cpus();
  const body = {
    bench: 'connector',
    finished_at: new Date().toISOString(),
    node: process.version,
    cpu: { model: cpu[0]?.model, cores: cpu.length },
    options: {
      queries: options.queries,
      pairs: options.pairs,
      warmup: options.warmup,
      max_steal: options.maxSteal,
    },
    budget_ratio: OVERHEAD_BUDGET,
    engines: results,
  };
  await writeFile(file, `${JSON.stringify(body, null, 2)}\n`);
  return file.pathname;
}

function positiveInt(text: string | undefined, flag: string, min: number): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < min) throw new Error(`${flag} needs an integer ≥ ${min}`);
  return value;
}

/** Parses argv and the environment (test service URLs) into bench options. */
export function connectorBenchOptionsFrom(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): ConnectorBenchOptions {
  let queries = 2_000;
  let pairs = 7;
  let warmup = 500;
  let engines: readonly string[] = BENCH_TARGETS.map((t) => t.engine);
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--queries') queries = positiveInt(value, flag, 1);
    else if (flag === '--pairs') pairs = positiveInt(value, flag, 1);
    else if (flag === '--warmup') warmup = positiveInt(value, flag, 0);
    else if (flag === '--engines') engines = (value ?? '').split(',').filter((e) => e !== '');
    else throw new Error(`unknown option ${flag}`);
    i++;
  }
  return {
    queries,
    pairs,
    warmup,
    engines,
    maxSteal: 0.05,
    targets: {
      postgresUrl: env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
      mysqlUrl: env.QUARRY_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
    },
  };
}

async function main(): Promise<void> {
  const options = connectorBenchOptionsFrom(process.argv.slice(2), process.env);
  const cpuBefore = process.cpuUsage();
  const results = await runConnectorBench(options);
  console.log(formatConnectorBench(results, options));
  const file = await writeConnectorBenchJson(results, options);
  const cpu = process.cpuUsage(cpuBefore);
  console.log(`bench process CPU: ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s; results: ${file}`);
  if (results.some((r) => r.status === 'failed')) process.exitCode = 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
