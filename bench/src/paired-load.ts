// A/B comparison (bench/README.md): windows alternate A B A B … over `pairs` pairs,
// each pair gives its own ratios, and the medians of those paired ratios are the figures. A pair
// in which either window saw more CPU steal than `maxSteal` is dropped (all are used, and the
// result says so, when every pair is).
import { median, quantile } from './latency-stats.js';
import type { LoadWindow, MeasuredLoad } from './load-window.js';

/** One A/B pair. */
export interface LoadPair {
  readonly pair: number;
  readonly a: LoadWindow;
  readonly b: LoadWindow;
  /** b req/s over a req/s. */
  readonly rpsRatio: number;
  /** b p99 over a p99. */
  readonly p99Ratio: number;
  /** b p50 minus a p50, ms. */
  readonly p50DeltaMs: number;
  readonly dropped: boolean;
}

/** One side over the kept pairs: median req/s of its windows, latency quantiles pooled. */
export interface SideSummary {
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly failures: number;
  /** Median CPU of the load generator over the windows (1 = one core). */
  readonly loadCpu: number;
  /** Median CPU of the server under test over the windows (0 for a direct pg loop). */
  readonly serverCpu: number;
  /** Median CPU of PostgreSQL over the windows. */
  readonly postgresCpu: number;
  /**
   * Median over the windows of the CPU per request of all three (load generator, server,
   * PostgreSQL), in µs: what one request costs the machine, whichever core pays.
   */
  readonly cpuUsPerRequest: number;
}

/** Everything one A/B comparison measured. */
export interface PairedResult {
  readonly a: SideSummary;
  readonly b: SideSummary;
  readonly pairs: readonly LoadPair[];
  readonly medianRpsRatio: number;
  readonly medianP99Ratio: number;
  readonly medianP50DeltaMs: number;
  /** True when every pair had too much steal and the medians use them all anyway. */
  readonly allPairsStolen: boolean;
}

export interface PairedOptions {
  readonly pairs: number;
  readonly maxSteal: number;
  /** Printed in the progress lines. */
  readonly label: string;
}

function pooled(parts: readonly Float64Array[]): Float64Array {
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** One side's windows summarised: median req/s and CPU, latency quantiles pooled. */
export function summariseSide(loads: readonly MeasuredLoad[]): SideSummary {
  const latencies = pooled(loads.map((l) => l.latencies));
  return {
    reqPerSec: median(loads.map((l) => l.window.reqPerSec)),
    p50Ms: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    failures: loads.reduce((n, l) => n + l.window.failures, 0),
    loadCpu: median(loads.map((l) => l.window.loadCpu)),
    serverCpu: median(loads.map((l) => l.window.serverCpu)),
    postgresCpu: median(loads.map((l) => l.window.postgresCpu)),
    cpuUsPerRequest: median(
      loads.map(({ window: w }) => ((w.loadCpu + w.serverCpu + w.postgresCpu) * 1e6) / w.reqPerSec),
    ),
  };
}

/** Runs the pairs, A first in each, and summarises them. */
export async function runPaired(
  options: PairedOptions,
  runA: () => Promise<MeasuredLoad>,
  runB: () => Promise<MeasuredLoad>,
): Promise<PairedResult> {
  const loads: { a: MeasuredLoad; b: MeasuredLoad }[] = [];
  const pairs: LoadPair[] = [];
  for (let pair = 1; pair <= options.pairs; pair++) {
    const a = await runA();
    const b = await runB();
    loads.push({ a, b });
    const dropped = a.window.steal > options.maxSteal || b.window.steal > options.maxSteal;
    const result: LoadPair = {
      pair,
      a: a.window,
      b: b.window,
      rpsRatio: b.window.reqPerSec / a.window.reqPerSec,
      p99Ratio: b.window.p99Ms / a.window.p99Ms,
      p50DeltaMs: b.window.p50Ms - a.window.p50Ms,
      dropped,
    };
    pairs.push(result);
    process.stderr.write(
      `  ${options.label} pair ${pair}: A ${a.window.reqPerSec.toFixed(0)} req/s p50 ${a.window.p50Ms.toFixed(2)} ms, ` +
        `B ${b.window.reqPerSec.toFixed(0)} req/s p50 ${b.window.p50Ms.toFixed(2)} ms, ` +
        `B/A ${result.rpsRatio.toFixed(3)}${dropped ? ' (dropped: steal)' : ''}` +
        `${a.window.failures + b.window.failures > 0 ? ` failures A ${a.window.failures} B ${b.window.failures}` : ''}\n`,
    );
  }
  const used = usedPairs(pairs);
  const usedLoads = loads.filter((_, i) => used.includes(pairs[i]!));
  return {
    a: summariseSide(usedLoads.map((l) => l.a)),
    b: summariseSide(usedLoads.map((l) => l.b)),
    pairs,
    medianRpsRatio: median(used.map((p) => p.rpsRatio)),
    medianP99Ratio: median(used.map((p) => p.p99Ratio)),
    medianP50DeltaMs: median(used.map((p) => p.p50DeltaMs)),
    allPairsStolen: pairs.every((p) => p.dropped),
  };
}

/** The pairs the medians use: those without too much steal, or all of them when none is left. */
export function usedPairs<P extends { readonly dropped: boolean }>(pairs: readonly P[]): readonly P[] {
  const kept = pairs.filter((p) => !p.dropped);
  return kept.length > 0 ? kept : pairs;
}
