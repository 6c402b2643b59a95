// Issue 17: one owner's regular expression must not stall every tenant. A real gateway process (on
// a fresh control-plane schema of the local Postgres, pinned to CPU 1 when it can be) deploys
// analytics whose string param has a pattern that is catastrophic for a backtracking engine,
// `(a+)+$`, and about the heaviest the caps still allow at 4,096 characters, `(?:.*a.{28}){2}` (64
// instructions, whose DFA thrashes: re2js falls back to stepping every instruction). Each case
// sends its value `--calls` times in a row while a poller calls /healthz every few ms, and reads
// the gateway's CPU time (utime + stime from /proc/<pid>/stat, 10 ms ticks, hence many calls) around
// the batch. Not a test: it prints a table and writes JSON to bench/results/patterns-<stamp>.json.
// Target: under 50 ms of gateway CPU for the 10,000-character call, /healthz answering throughout.
// Run: npm run bench:patterns -w @quarry/bench -- [--calls N] [--warmup N] [--only case,case] [--no-pin]
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gatewayHeapFlags } from '../../scripts/gateway-heap-flags.mjs';
import { postgresConnectionConfig, withPg } from './bench-world.js';
import { median, quantile } from './latency-stats.js';
import { processCpuSeconds } from './proc-cpu.js';
import { canPin, startService } from './service-process.js';

const PG_URL = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Case {
  readonly name: string;
  readonly analytic: 'nested' | 'heavy';
  /** The value of the i-th call. */
  readonly value: (i: number) => string;
  /** The status the gateway must answer; anything else fails the run. */
  readonly status: number;
}

const PATTERNS = { nested: '(a+)+$', heavy: '(?:.*a.{28}){2}' } as const;

/**
 * A different pseudo-random 4,096-character value of `a`s and `b`s for each call: `.*a.{28}` must
 * remember where each of the last 29 `a`s was, 2^29 DFA states, so the engine's DFA cache thrashes
 * and it steps its NFA instead: the slow path, every time. It ends in 29 `b`s, so it never matches
 * (no `a` 29 characters from the end) and the call is refused, like the other cases.
 */
function mixed(i: number): string {
  let seed = (i + 1) * 2654435761;
  const out: string[] = [];
  for (let n = 0; n < 4096 - 29; n++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    out.push((seed >> 8) % 2 === 0 ? 'a' : 'b');
  }
  return `${out.join('')}${'b'.repeat(29)}`;
}

const CASES: readonly Case[] = [
  { name: 'short-refused', analytic: 'nested', value: () => 'b', status: 400 },
  { name: 'issue-31a', analytic: 'nested', value: () => `${'a'.repeat(31)}!`, status: 400 },
  { name: 'long-10000', analytic: 'nested', value: () => `${'a'.repeat(9999)}!`, status: 400 },
  { name: 'cap-4096', analytic: 'nested', value: () => `${'a'.repeat(4095)}!`, status: 400 },
  { name: 'heavy-cap-4096', analytic: 'heavy', value: mixed, status: 400 },
];

interface CaseResult {
  readonly name: string;
  readonly pattern: string;
  readonly value_chars: number;
  readonly calls: number;
  readonly statuses: Record<string, number>;
  readonly error_codes: Record<string, number>;
  readonly gateway_cpu_ms_per_call: number;
  readonly call_ms_p50: number;
  readonly call_ms_max: number;
  readonly healthz_polls: number;
  readonly healthz_failures: readonly string[];
  readonly healthz_ms_p50: number;
  readonly healthz_ms_max: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function flag(argv: readonly string[], name: string, fallback: string): string {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] !== undefined ? (argv[i + 1] as string) : fallback;
}

async function post(base: string, path: string, body: unknown, key?: string): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
    },
    body: JSON.stringify(body),
  });
}

async function created(response: Promise<Response>, what: string): Promise<Record<string, unknown>> {
  const r = await response;
  const text = await r.text();
  if (r.status !== 201) throw new Error(`${what}: ${r.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Signs up, connects the local Postgres and deploys one analytic per pattern; returns the key. */
async function provision(base: string, id: string): Promise<string> {
  const signUp = await created(
    post(base, '/v1/accounts', { email: `patterns-${id}@bench.quarry.test`, name: 'Pattern bench' }),
    'sign-up',
  );
  const key = (signUp.key as { secret: string }).secret;
  const url = new URL(PG_URL);
  await created(
    post(
      base,
      '/v1/owner/connections',
      {
        name: 'pg',
        type: 'postgres',
        config: postgresConnectionConfig(url),
      },
      key,
    ),
    'connection',
  );
  for (const [name, pattern] of Object.entries(PATTERNS)) {
    await created(
      post(
        base,
        '/v1/owner/analytics',
        {
          name: `bench-pattern-${name}`,
          connection: 'pg',
          sql: 'SELECT :code AS code',
          // The longest maxLength an owner may declare, so the engine sees the longest values.
          params: { code: { type: 'string', required: true, pattern, maxLength: 4096 } },
        },
        key,
      ),
      `analytic ${name}`,
    );
  }
  return key;
}

/** What the /healthz poller saw: each 200's latency, and the polls that failed (and how). */
interface HealthzPolls {
  readonly latencies: number[];
  readonly failures: string[];
}

/** Calls /healthz back to back (a few ms apart) until stopped. */
function pollHealthz(base: string): { stop(): Promise<HealthzPolls> } {
  const polls: HealthzPolls = { latencies: [], failures: [] };
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const response = await fetch(`${base}/healthz`);
        await response.arrayBuffer();
        if (response.status === 200) polls.latencies.push(performance.now() - started);
        else polls.failures.push(`HTTP ${response.status}`);
      } catch (error) {
        // A stalled gateway can drop the poller's keep-alive connection (seen: ECONNRESET).
        const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
        polls.failures.push(`${cause} after ${(performance.now() - started).toFixed(0)} ms`);
      }
      await sleep(5);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return polls;
    },
  };
}

async function runCase(
  base: string,
  pid: number,
  key: string,
  c: Case,
  calls: number,
  warmup: number,
): Promise<CaseResult> {
  const body = (i: number) => ({ source: `bench-pattern-${c.analytic}`, params: { code: c.value(i) } });
  // Warm-up: the pattern compiled, the code paths optimised (values other than the measured ones).
  for (let i = 0; i < warmup; i++) await (await post(base, '/v1/query', body(calls + i), key)).arrayBuffer();
  const statuses: Record<string, number> = {};
  const codes: Record<string, number> = {};
  const times: number[] = [];
  const poller = pollHealthz(base);
  await sleep(20);
  const cpuBefore = processCpuSeconds(pid);
  // Checked after the poller stopped: left running, it would fail on the stopped gateway and hide this.
  let unexpected: string | undefined;
  for (let i = 0; i < calls && unexpected === undefined; i++) {
    const started = performance.now();
    const response = await post(base, '/v1/query', body(i), key);
    const answer = (await response.json()) as { error?: { code?: string } };
    times.push(performance.now() - started);
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    const code = answer.error?.code ?? 'none';
    codes[code] = (codes[code] ?? 0) + 1;
    if (response.status !== c.status) unexpected = `${c.name}: ${response.status} ${JSON.stringify(answer)}`;
  }
  const cpu = processCpuSeconds(pid) - cpuBefore;
  const { latencies: healthz, failures } = await poller.stop();
  if (unexpected !== undefined) throw new Error(unexpected);
  return {
    name: c.name,
    pattern: PATTERNS[c.analytic],
    value_chars: [...c.value(0)].length,
    calls,
    statuses,
    error_codes: codes,
    gateway_cpu_ms_per_call: (cpu * 1000) / calls,
    call_ms_p50: median(times),
    call_ms_max: Math.max(...times),
    healthz_polls: healthz.length,
    healthz_failures: failures,
    healthz_ms_p50: healthz.length === 0 ? Number.NaN : median(healthz),
    healthz_ms_max: healthz.length === 0 ? Number.NaN : quantile(healthz, 1),
  };
}

function table(results: readonly CaseResult[]): string {
  const header = [
    'case',
    'pattern',
    'chars',
    'calls',
    'answer',
    'CPU ms/call',
    'call p50 ms',
    'call max ms',
    'healthz ok/failed',
    'healthz p50',
    'healthz max',
  ];
  const rows = results.map((r) => [
    r.name,
    r.pattern,
    String(r.value_chars),
    String(r.calls),
    `${Object.keys(r.statuses).join('/')} ${Object.keys(r.error_codes).join('/')}`,
    r.gateway_cpu_ms_per_call.toFixed(2),
    r.call_ms_p50.toFixed(2),
    r.call_ms_max.toFixed(2),
    `${r.healthz_polls}/${r.healthz_failures.length}`,
    r.healthz_ms_p50.toFixed(2),
    r.healthz_ms_max.toFixed(2),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => (i < 2 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const calls = Number(flag(argv, '--calls', '200'));
  const warmup = Number(flag(argv, '--warmup', '20'));
  const only = flag(argv, '--only', '');
  const cases = only === '' ? CASES : CASES.filter((c) => only.split(',').includes(c.name));
  const pin = !argv.includes('--no-pin') && canPin(1);
  const id = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const schema = `quarry_bench_patterns_${id}`;
  await withPg(PG_URL, (c) => c.query(`CREATE SCHEMA ${schema}`));
  const storeUrl = new URL(PG_URL);
  storeUrl.searchParams.set('options', `-c search_path=${schema}`);
  const gateway = await startService({
    entry: 'gateway/src/server.ts',
    ...(pin ? { cpu: 1 } : {}),
    logFile: join(tmpdir(), `quarry-bench-patterns-${id}.log`),
    env: {
      DATABASE_URL: storeUrl.toString(),
      QUARRY_SECRET_KEY: randomBytes(32).toString('base64'),
      QUARRY_ALLOW_PRIVATE_NETWORKS: 'true',
      QUARRY_DEMO: 'false',
      QUARRY_LOG_LEVEL: 'warn',
      QUARRY_FREE_CALLS: '1000000',
      QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 1_000_000, window_seconds: 1, burst: 1_000_000 } }),
      QUARRY_SIGNUPS_PER_HOUR: '1000000',
      NODE_OPTIONS: gatewayHeapFlags({}).join(' '),
    },
  });
  const results: CaseResult[] = [];
  try {
    const key = await provision(gateway.url, id);
    for (const c of cases) results.push(await runCase(gateway.url, gateway.pid, key, c, calls, warmup));
  } finally {
    await gateway.stop();
    await withPg(PG_URL, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  }
  console.log(
    `pattern bench: ${calls} sequential calls a case (after ${warmup} unmeasured), /healthz polled every ~5 ms meanwhile; gateway ${pin ? 'pinned to CPU 1' : 'not pinned'}; CPU from /proc/<pid>/stat (10 ms ticks) over the batch, per call`,
  );
  console.log(table(results));
  const long = results.find((r) => r.name === 'long-10000');
  const stalled = results.some((r) => r.healthz_polls === 0 || r.healthz_failures.length > 0);
  for (const r of results)
    if (r.healthz_failures.length > 0)
      console.log(`${r.name}: /healthz failed: ${r.healthz_failures.join('; ')}`);
  if (long !== undefined)
    console.log(
      `target: the 10,000-character call under 50 ms of gateway CPU: ${long.gateway_cpu_ms_per_call.toFixed(2)} ms → ${long.gateway_cpu_ms_per_call < 50 ? 'PASS' : 'OVER'}; /healthz answered during every case: ${stalled ? 'NO' : 'yes'}`,
    );
  const dir = new URL('../results/', import.meta.url);
  await mkdir(dir, { recursive: true });
  const file = new URL(`patterns-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, dir);
  const cpu = cpus();
  await writeFile(
    file,
    `${JSON.stringify(
      {
        bench: 'patterns',
        finished_at: new Date().toISOString(),
        node: process.version,
        cpu: { model: cpu[0]?.model, cores: cpu.length },
        options: { calls, warmup, pinned: pin },
        results,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`JSON: ${file.pathname}`);
}

await main();
