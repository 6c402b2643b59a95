// The gateway bench's figures, the issue's targets judged on them, the printed table and the
// JSON written to bench/results/.
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import type { CoalesceResult } from './coalescing-probe.js';
import type { GatewayBenchOptions } from './gateway-bench-options.js';
import { median } from './latency-stats.js';
import type { MemoryResult } from './memory-soak.js';
import { type PairedResult, type SideSummary, usedPairs } from './paired-load.js';
import { mib } from './proc-memory.js';

/** Everything one run measured. */
export interface GatewayBenchResult {
  readonly startedAt: string;
  readonly finishedAt: string;
  /** Servers on CPU 1, this process on CPU 0. */
  readonly pinned: boolean;
  readonly options: GatewayBenchOptions;
  /** X-Cache of the call b repeats, captured before measuring: HIT when b measured a cache hit. */
  readonly cacheOutcome: string;
  readonly cachedBodyBytes: number;
  readonly ab: PairedResult;
  readonly cdCheap: PairedResult;
  readonly cdHeavy: PairedResult;
  readonly coalesce: CoalesceResult;
  readonly memory: MemoryResult;
  /** CPU seconds this process (autocannon, the pg loop) spent over the whole run. */
  readonly benchCpuSeconds: number;
}

/** One "Done when" line of issue 5. */
export interface TargetCheck {
  readonly name: string;
  readonly value: number;
  readonly target: string;
  readonly pass: boolean;
}

const CACHE_MIB = 64;
const MEMORY_SLACK_MIB = 50;

/** The server process's own CPU per request of a side or a window, µs (its /proc CPU over its req/s). */
export const serverUsPerRequest = (s: { readonly serverCpu: number; readonly reqPerSec: number }): number =>
  (s.serverCpu * 1e6) / s.reqPerSec;

/**
 * The gateway's CPU per request over the bare server's per answer (issue 35): b against a within
 * each a/b pair (median), d cheap against a's median.
 */
export function serverCpuRatios(r: GatewayBenchResult): { readonly hit: number; readonly cheap: number } {
  const hit = median(usedPairs(r.ab.pairs).map((p) => serverUsPerRequest(p.b) / serverUsPerRequest(p.a)));
  return { hit, cheap: serverUsPerRequest(r.cdCheap.b) / serverUsPerRequest(r.ab.a) };
}

/** The issues' targets, judged on this run's medians of paired ratios. */
export function gatewayTargets(r: GatewayBenchResult): TargetCheck[] {
  const memoryLimit = CACHE_MIB + mib(r.memory.idleRssBytes) + MEMORY_SLACK_MIB;
  const cpu = serverCpuRatios(r);
  return [
    { name: 'b/a req/s', value: r.ab.medianRpsRatio, target: '≥ 0.5', pass: r.ab.medianRpsRatio >= 0.5 },
    { name: 'b/a p99', value: r.ab.medianP99Ratio, target: '≤ 2', pass: r.ab.medianP99Ratio <= 2 },
    {
      name: 'd/c req/s cheap',
      value: r.cdCheap.medianRpsRatio,
      target: '≥ 0.8',
      pass: r.cdCheap.medianRpsRatio >= 0.8,
    },
    {
      name: 'd/c req/s heavy',
      value: r.cdHeavy.medianRpsRatio,
      target: '≥ 0.95',
      pass: r.cdHeavy.medianRpsRatio >= 0.95,
    },
    {
      name: 'd−c p50 ms cheap',
      value: r.cdCheap.medianP50DeltaMs,
      target: '≤ 1',
      pass: r.cdCheap.medianP50DeltaMs <= 1,
    },
    {
      name: 'd−c p50 ms heavy',
      value: r.cdHeavy.medianP50DeltaMs,
      target: '≤ 1',
      pass: r.cdHeavy.medianP50DeltaMs <= 1,
    },
    {
      name: 'e warehouse queries',
      value: r.coalesce.warehouseQueries,
      target: '= 1',
      pass: r.coalesce.warehouseQueries === 1,
    },
    {
      name: 'f peak RSS MiB',
      value: mib(r.memory.peakRssBytes),
      target: `≤ ${memoryLimit.toFixed(1)} (64 + idle + 50)`,
      pass: mib(r.memory.peakRssBytes) <= memoryLimit,
    },
    { name: 'b server CPU ÷ a', value: cpu.hit, target: '≤ 2', pass: cpu.hit <= 2 },
    { name: 'd cheap server CPU ÷ a', value: cpu.cheap, target: '≤ 4', pass: cpu.cheap <= 4 },
  ];
}

/** How fast a B side could go on this machine's cores at its measured CPU per request. */
export interface CpuCeiling {
  readonly name: string;
  /** cores × 1e6 / B's CPU µs per request: its req/s were every core busy with it alone. */
  readonly reqPerSec: number;
  /** That over A's measured req/s: the most the paired ratio could be here. */
  readonly ratio: number;
}

/** The CPU-bound ceiling of b, d cheap and d heavy on `cores` cores (default: this machine's). */
export function cpuCeilings(r: GatewayBenchResult, cores = cpus().length): CpuCeiling[] {
  const ceiling = (name: string, p: PairedResult): CpuCeiling => {
    const reqPerSec = (cores * 1e6) / p.b.cpuUsPerRequest;
    return { name, reqPerSec, ratio: reqPerSec / p.a.reqPerSec };
  };
  return [ceiling('b/a', r.ab), ceiling('d/c cheap', r.cdCheap), ceiling('d/c heavy', r.cdHeavy)];
}

function fmt(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '—';
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

const percent = (cores: number) => `${fmt(cores * 100, 0)}%`;

function sideRow(name: string, s: SideSummary): string[] {
  return [
    name,
    fmt(s.reqPerSec, 0),
    fmt(s.p50Ms, 2),
    fmt(s.p99Ms, 2),
    String(s.failures),
    percent(s.loadCpu),
    s.serverCpu > 0 ? percent(s.serverCpu) : '—',
    percent(s.postgresCpu),
    fmt(s.cpuUsPerRequest, 0),
  ];
}

function pairsLine(name: string, p: PairedResult, pick: 'rpsRatio' | 'p50DeltaMs'): string {
  const values = p.pairs.map((x) => `${x[pick].toFixed(pick === 'rpsRatio' ? 3 : 2)}${x.dropped ? '*' : ''}`);
  const steal = Math.max(...p.pairs.flatMap((x) => [x.a.steal, x.b.steal])) * 100;
  return `  ${name}: ${values.join(' ')}  (max steal ${steal.toFixed(1)}%${p.allPairsStolen ? '; every pair over the steal limit, all used' : ''})`;
}

/** The human report: one table, the paired ratios, e and f, and the targets. */
export function formatGatewayBench(r: GatewayBenchResult): string {
  const o = r.options;
  const m = r.memory;
  const cpu = serverCpuRatios(r);
  const b =
    r.cacheOutcome === 'HIT' ? 'b  gateway, cache HIT' : `b  gateway, NOT a hit (X-Cache ${r.cacheOutcome})`;
  const out = [
    `gateway bench: ${o.connections} connections, ${o.pairs} A/B pairs × ${o.seconds} s windows, ` +
      `${r.pinned ? 'servers pinned to CPU 1, load generator to CPU 0' : 'UNPINNED'}; ` +
      `auth + rate limit + quota + metering on every gateway call; gateway log level ${o.logLevel}`,
    ...table(
      ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'fails', 'loadgen', 'server', 'postgres', 'CPU µs/req'],
      [
        sideRow('a  bare node:http, same bytes', r.ab.a),
        sideRow(b, r.ab.b),
        sideRow('c  pg Pool(10), cheap lookup', r.cdCheap.a),
        sideRow('d  gateway, cheap, no cache', r.cdCheap.b),
        sideRow('c  pg Pool(10), heavy aggregate', r.cdHeavy.a),
        sideRow('d  gateway, heavy, no cache', r.cdHeavy.b),
      ],
    ),
    `  (req/s: median of windows; p50/p99 pooled over kept windows; cached answer ${r.cachedBodyBytes} bytes.` +
      ' CPU from /proc, medians over the windows, 1 core = 100%: loadgen = this process (autocannon, or' +
      " c's pg client), server = bare node:http or the gateway, postgres = every postgres process;" +
      ' CPU µs/req = all three per request, whichever core pays.)',
    `CPU ceilings on ${cpus().length} cores (req/s were every core busy with the B side alone, at its CPU µs/req;` +
      " over the A side's req/s):",
    ...cpuCeilings(r).map(
      (c) => `  ${c.name}: ≤ ${fmt(c.reqPerSec, 0)} req/s, so the ratio ≤ ${fmt(c.ratio, 2)} on this machine`,
    ),
    `server CPU per request (the server process alone): a ${fmt(serverUsPerRequest(r.ab.a))} µs, ` +
      `b ${fmt(serverUsPerRequest(r.ab.b))} µs (${fmt(cpu.hit, 2)}× a, median of the pairs), ` +
      `d cheap ${fmt(serverUsPerRequest(r.cdCheap.b))} µs (${fmt(cpu.cheap, 2)}× a)`,
    '',
    'paired ratios per pair (* = dropped, steal > 5%):',
    pairsLine('b/a req/s', r.ab, 'rpsRatio'),
    pairsLine('d/c req/s cheap', r.cdCheap, 'rpsRatio'),
    pairsLine('d/c req/s heavy', r.cdHeavy, 'rpsRatio'),
    pairsLine('d−c p50 ms cheap', r.cdCheap, 'p50DeltaMs'),
    pairsLine('d−c p50 ms heavy', r.cdHeavy, 'p50DeltaMs'),
    '',
    `e: ${r.coalesce.calls} concurrent identical misses → ${r.coalesce.warehouseQueries} warehouse ` +
      `quer${r.coalesce.warehouseQueries === 1 ? 'y' : 'ies'} (counted by pg_notify/LISTEN); ` +
      `statuses ${JSON.stringify(r.coalesce.statuses)}, X-Cache ${JSON.stringify(r.coalesce.xCache)}, ${fmt(r.coalesce.seconds, 2)} s`,
    `   (MISS: joined the one run, a query of ${o.coalesceQueryMs} ms; HIT: reached the cache after it had stored the answer)`,
    `f: measured ${m.calls} distinct-param calls (${m.failures} failed) in ${fmt(m.seconds, 0)} s ` +
      `(${fmt(m.reqPerSec, 0)} req/s) through a 64 MiB cache: RSS idle ${fmt(mib(m.idleRssBytes))} MiB, ` +
      `peak ${fmt(mib(m.peakRssBytes))} MiB, after ${fmt(mib(m.afterRssBytes))} MiB; ` +
      `growth over the second half ${fmt(mib(m.secondHalfGrowthBytes))} MiB`,
    `   by calls, RSS / V8 heap used / external MiB: ${m.samples
      .map(
        (s) =>
          `${s.calls}: ${fmt(mib(s.rssBytes))} / ${fmt(mib(s.heapUsedBytes ?? Number.NaN))} / ${fmt(mib(s.externalBytes ?? Number.NaN))}`,
      )
      .join(', ')}`,
  ];
  if (m.calls < m.targetCalls) {
    out.push(
      `   NOT ${m.targetCalls} calls: ${m.stoppedByBudget ? `stopped at the ${o.memoryBudgetSeconds} s budget` : 'fewer requested'}. ` +
        `Extrapolated (not measured): ${m.targetCalls} calls would take ${fmt(m.extrapolatedSecondsForTarget, 0)} s at this rate.`,
    );
  }
  out.push('', 'targets (issue 5; the server CPU lines issue 35):');
  out.push(
    ...table(
      ['target', 'value', 'limit', 'verdict'],
      gatewayTargets(r).map((t) => [t.name, fmt(t.value, 3), t.target, t.pass ? 'PASS' : 'OVER']),
    ),
  );
  out.push(
    '',
    `bench process CPU: ${fmt(r.benchCpuSeconds)} s over the run. Ratios are judged on medians of paired ratios;` +
      ' absolute figures swing ±20% on these machines.',
  );
  return out.join('\n');
}

/** Writes the run to `dir` (default bench/results/) as gateway-<timestamp>.json; returns the path. */
export async function writeGatewayBenchJson(
  r: GatewayBenchResult,
  dir: URL = new URL('../results/', import.meta.url),
): Promise<string> {
  await mkdir(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = new URL(`gateway-${stamp}.json`, dir);
  const cpu = cpus();
  const body = {
    bench: 'gateway',
    node: process.version,
    cpu: { model: cpu[0]?.model, cores: cpu.length },
    ...r,
    targets: gatewayTargets(r),
    cpuCeilings: cpuCeilings(r),
  };
  await writeFile(file, `${JSON.stringify(body, null, 2)}\n`);
  return file.pathname;
}
