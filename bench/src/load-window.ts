// One measured window of load (HTTP through autocannon, or a pg Pool loop): throughput, latency
// quantiles from every request's own time (µs resolution; autocannon's histogram keeps whole
// milliseconds only), the CPU steal seen, and what the load generator, the server under test and
// PostgreSQL each cost.
import { readCpuTimes, stealFraction } from './cpu-steal.js';
import { quantile } from './latency-stats.js';
import { startServerCpu } from './proc-cpu.js';

/** What one window measured. */
export interface LoadWindow {
  /** Successful requests (2xx, or queries that returned). */
  readonly requests: number;
  /** Failed requests: non-2xx answers, socket errors, timeouts, failed queries. */
  readonly failures: number;
  readonly seconds: number;
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** CPU steal during the window (0–1). */
  readonly steal: number;
  /** CPU time of the bench process (the load generator) per second of window: 1 = one full core. */
  readonly loadCpu: number;
  /**
   * CPU of the server under test per second of window, all its instances together (0 for a
   * direct pg loop: that is loadCpu).
   */
  readonly serverCpu: number;
  /** CPU of every PostgreSQL process per second of window. */
  readonly postgresCpu: number;
}

/** A window's figures plus its raw latencies (ms), which only feed pooled statistics. */
export interface MeasuredLoad {
  readonly window: LoadWindow;
  readonly latencies: Float64Array;
}

/** Collects per-request latencies and the clocks around one window. */
export interface WindowRecorder {
  record(ms: number): void;
  fail(): void;
  finish(): MeasuredLoad;
}

/**
 * Starts the clocks of a window: wall time, this process's CPU time, /proc/stat, and the CPU time
 * of `serverPid` (the server under test, when there is one; several instances are summed) and of
 * PostgreSQL.
 */
export function startWindow(serverPid?: number | readonly number[]): WindowRecorder {
  let latencies = new Float64Array(65_536);
  let count = 0;
  let failures = 0;
  const cpuBefore = process.cpuUsage();
  const stealBefore = readCpuTimes();
  const serverCpu = startServerCpu(serverPid);
  const started = performance.now();
  return {
    record(ms) {
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = ms;
    },
    fail() {
      failures++;
    },
    finish() {
      const seconds = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpuBefore);
      const servers = serverCpu(seconds);
      const kept = latencies.slice(0, count);
      return {
        latencies: kept,
        window: {
          requests: count,
          failures,
          seconds,
          reqPerSec: count / seconds,
          p50Ms: quantile(kept, 0.5),
          p99Ms: quantile(kept, 0.99),
          steal: stealFraction(stealBefore, readCpuTimes()),
          loadCpu: (cpu.user + cpu.system) / 1e6 / seconds,
          ...servers,
        },
      };
    },
  };
}
