// Scenario f: resident memory of a gateway process while `targetCalls` calls, each with params no
// other call used, go through its byte-bounded result cache. Load comes in chunks so the run can
// stop at a time budget (and say so) and so RSS is sampled along the way: flat once the cache is
// full is the claim under test. RSS is the kernel's: /proc/<pid>/status VmRSS, peak VmHWM.
import { runHttpWindow } from './http-load.js';
import { mib, type ProcessMemory, readProcessMemory } from './proc-memory.js';

/** RSS after some number of calls, and the JS heap the gateway reports, to tell heap growth from native. */
export interface MemorySample {
  readonly calls: number;
  readonly seconds: number;
  readonly rssBytes: number;
  /** V8 heap in use (the gateway's /metrics, nodejs_heap_size_used_bytes); undefined if unreadable. */
  readonly heapUsedBytes: number | undefined;
  /** Memory outside the V8 heap held by JS objects (Buffers): nodejs_external_memory_bytes. */
  readonly externalBytes: number | undefined;
}

/** Reads the two heap gauges from the gateway's Prometheus text; undefined fields when absent. */
export async function readGatewayHeap(
  baseUrl: string,
): Promise<{ heapUsedBytes: number | undefined; externalBytes: number | undefined }> {
  try {
    const text = await (await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    const gauge = (name: string) => {
      const match = new RegExp(`^\\w*${name} (\\S+)$`, 'm').exec(text);
      return match === null ? undefined : Number(match[1]);
    };
    return {
      heapUsedBytes: gauge('nodejs_heap_size_used_bytes'),
      externalBytes: gauge('nodejs_external_memory_bytes'),
    };
  } catch {
    return { heapUsedBytes: undefined, externalBytes: undefined };
  }
}

/** What the soak measured. */
export interface MemoryResult {
  readonly targetCalls: number;
  /** Successful calls actually made (each with distinct params). */
  readonly calls: number;
  readonly failures: number;
  readonly seconds: number;
  readonly reqPerSec: number;
  /** True when the time budget ended the run before targetCalls. */
  readonly stoppedByBudget: boolean;
  /** Seconds targetCalls would take at the measured rate (an extrapolation, not a measurement). */
  readonly extrapolatedSecondsForTarget: number;
  readonly idleRssBytes: number;
  /** VmHWM at the end: the highest RSS the process ever had. */
  readonly peakRssBytes: number;
  /** RSS a moment after the load stopped. */
  readonly afterRssBytes: number;
  /** RSS at the last sample minus RSS at the sample nearest half the calls: ~0 when flat once warm. */
  readonly secondHalfGrowthBytes: number;
  readonly samples: readonly MemorySample[];
}

export interface MemorySoakOptions {
  readonly pid: number;
  readonly baseUrl: string;
  readonly key: string;
  readonly source: string;
  readonly targetCalls: number;
  readonly budgetSeconds: number;
  readonly connections: number;
  /** Calls per chunk (RSS is sampled after each). */
  readonly chunk: number;
  /** Distinct values of the first param before the second one steps. */
  readonly idSpan: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function memoryOf(pid: number): ProcessMemory {
  const memory = readProcessMemory(pid);
  if (memory === undefined) throw new Error(`cannot read /proc/${pid}/status`);
  return memory;
}

/** Runs the soak against an already-warm gateway whose idle footprint has settled. */
export async function soakMemory(options: MemorySoakOptions): Promise<MemoryResult> {
  const target = {
    url: `${options.baseUrl}/v1/query`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${options.key}` },
  };
  const idleRssBytes = memoryOf(options.pid).rssBytes;
  const samples: MemorySample[] = [];
  let calls = 0;
  let sent = 0;
  let failures = 0;
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  let stoppedByBudget = false;
  while (sent < options.targetCalls) {
    if (elapsed() >= options.budgetSeconds) {
      stoppedByBudget = true;
      break;
    }
    const amount = Math.min(options.chunk, options.targetCalls - sent);
    const offset = sent;
    const { window } = await runHttpWindow(target, {
      connections: options.connections,
      seconds: 3_600,
      amount,
      bodyFor: (i) => {
        const n = offset + i;
        const id = (n % options.idSpan) + 1;
        const v = Math.floor(n / options.idSpan);
        return `{"source":"${options.source}","params":{"id":${id},"v":${v}}}`;
      },
    });
    sent += amount;
    calls += window.requests;
    failures += window.failures;
    const sample = {
      calls,
      seconds: elapsed(),
      rssBytes: memoryOf(options.pid).rssBytes,
      ...(await readGatewayHeap(options.baseUrl)),
    };
    samples.push(sample);
    process.stderr.write(
      `  f: ${calls} calls in ${sample.seconds.toFixed(0)} s, RSS ${mib(sample.rssBytes)} MiB, ` +
        `heap used ${mib(sample.heapUsedBytes ?? Number.NaN)} MiB, external ${mib(sample.externalBytes ?? Number.NaN)} MiB\n`,
    );
  }
  const seconds = elapsed();
  await sleep(2_000);
  const end = memoryOf(options.pid);
  const half = samples.reduce(
    (best, s) => (Math.abs(s.calls - calls / 2) < Math.abs(best.calls - calls / 2) ? s : best),
    samples[0] ?? {
      calls: 0,
      seconds: 0,
      rssBytes: idleRssBytes,
      heapUsedBytes: undefined,
      externalBytes: undefined,
    },
  );
  const reqPerSec = calls / seconds;
  return {
    targetCalls: options.targetCalls,
    calls,
    failures,
    seconds,
    reqPerSec,
    stoppedByBudget,
    extrapolatedSecondsForTarget: options.targetCalls / reqPerSec,
    idleRssBytes,
    peakRssBytes: end.peakRssBytes,
    afterRssBytes: end.rssBytes,
    secondHalfGrowthBytes: (samples.at(-1)?.rssBytes ?? idleRssBytes) - half.rssBytes,
    samples,
  };
}
