// The soak: a real gateway process (the heap flags `npm start` gives it, PostgreSQL store and
// warehouse) under a mixed load for a long time, to see what hours of traffic do. Three accounts
// send cache hits, misses (a keyed lookup with a fresh id, uncached) and errors (params out of
// bounds, 400) in a fixed mix. First a short closed loop measures the peak of that mix; then the
// soak runs at half of it (a fixed overall rate) for `--seconds` (default 600), and reports:
// RSS after warm-up and at the end (growth %), event-loop lag p99 (the gateway's own gauge, read
// every 10 s), the 2xx answers and the usage events the ledger gained over the soak (must be
// equal), and every error-level log line the gateway wrote.
//
//   npm run soak                       # 10 minutes
//   npm run soak -- --seconds 60       # shorter
//
// Writes bench/results/soak-<time>.json. Not part of `npm test`.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createBenchWorld, gatewayEnv, KV_ROWS, provision, SALES_YEAR, withPg } from './bench-world.js';
import { mib, readProcessMemory } from './proc-memory.js';
import { REPO_ROOT, startService } from './service-process.js';

const PG_URL = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '600' },
    'peak-seconds': { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    'warmup-seconds': { type: 'string', default: '60' },
  },
});
const SECONDS = Number(args.seconds);
const PEAK_SECONDS = Number(args['peak-seconds']);
const CONNECTIONS = Number(args.connections);
const WARMUP_SECONDS = Math.min(Number(args['warmup-seconds']), Math.floor(SECONDS / 4));

/** The soak's analytics, public so that every account may call them. */
const SOAK = { hit: 'soak-revenue-cached', miss: 'soak-lookup' } as const;

/** Deploys the soak's public analytics on the bench's connection. */
async function deploySoakAnalytics(base: string, key: string, warehouseSchema: string): Promise<void> {
  const definitions = [
    {
      name: SOAK.hit,
      sql: `SELECT region, sum(amount) AS revenue FROM ${warehouseSchema}.sales WHERE year = :year GROUP BY region ORDER BY revenue DESC`,
      params: { year: { type: 'integer', required: true, min: 2000, max: 2100 } },
      cache: { ttl: 86_400 },
    },
    {
      name: SOAK.miss,
      sql: `SELECT id, name, score FROM ${warehouseSchema}.kv WHERE id = :id`,
      params: { id: { type: 'integer', required: true, min: 1, max: KV_ROWS } },
    },
  ];
  for (const definition of definitions) {
    const response = await fetch(`${base}/v1/owner/analytics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ connection: 'bench', visibility: 'public', ...definition }),
    });
    if (response.status !== 201)
      throw new Error(`deploy ${definition.name}: ${response.status} ${await response.text()}`);
  }
}

/** The mix, per 10 calls: 6 cache hits, 3 misses, 1 error. */
const MIX = ['hit', 'miss', 'hit', 'hit', 'miss', 'error', 'hit', 'miss', 'hit', 'hit'] as const;

async function signUp(base: string, label: string): Promise<string> {
  const response = await fetch(`${base}/v1/accounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `soak-${label}-${process.pid}@bench.quarry.test`, name: `soak ${label}` }),
  });
  const body = (await response.json()) as { key?: { secret: string } };
  if (response.status !== 201 || body.key === undefined) throw new Error(`sign-up: ${response.status}`);
  return body.key.secret;
}

/** The gateway's event-loop lag p99 since its previous scrape (prom-client resets the histogram). */
async function lagP99Ms(base: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    const match = /^quarry_nodejs_eventloop_lag_p99_seconds (\S+)$/m.exec(text);
    return match === null ? undefined : Number(match[1]) * 1000;
  } catch {
    return undefined;
  }
}

async function ledgerCount(schemaUrl: string): Promise<number> {
  const schema = new URL(schemaUrl).searchParams.get('options')?.replace('-c search_path=', '') ?? '';
  return withPg(PG_URL, async (c) => {
    const result = await c.query<{ n: number }>(
      `SELECT count(*)::integer AS n FROM ${schema}.usage_events WHERE status = 'ok'`,
    );
    return result.rows[0]?.n ?? 0;
  });
}

interface LoadOutcome {
  readonly statuses: Record<string, number>;
  readonly requests: number;
  readonly seconds: number;
}

/** Runs the mix with autocannon: closed loop, or at `rate` requests a second overall. */
async function runMix(
  base: string,
  keys: readonly string[],
  seconds: number,
  rate?: number,
): Promise<LoadOutcome> {
  let n = 0;
  const statuses: Record<string, number> = {};
  const started = performance.now();
  const instance = autocannon({
    url: `${base}/v1/query`,
    connections: CONNECTIONS,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    // At a fixed rate, a fixed number of calls: autocannon then waits for every answer, so each
    // call the gateway served is counted (a duration cuts off the calls in flight at its end).
    ...(rate === undefined
      ? { duration: seconds }
      : { overallRate: rate, amount: Math.round(rate * seconds) }),
    requests: [
      {
        setupRequest: (request) => {
          const i = n++;
          const kind = MIX[i % MIX.length];
          const key = keys[Math.floor(i / MIX.length) % keys.length] as string;
          const body =
            kind === 'hit'
              ? { source: SOAK.hit, params: { year: SALES_YEAR } }
              : kind === 'miss'
                ? { source: SOAK.miss, params: { id: 1 + ((i * 7919) % KV_ROWS) } }
                : { source: SOAK.miss, params: { id: 0 } };
          request.headers = { ...request.headers, authorization: `Bearer ${key}` };
          request.body = JSON.stringify(body);
          return request;
        },
      },
    ],
  });
  instance.on('response', (_client: unknown, status: number) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
  });
  instance.on('reqError', () => {
    statuses.error = (statuses.error ?? 0) + 1;
  });
  await instance;
  const requests = Object.values(statuses).reduce((a, b) => a + b, 0);
  return { statuses, requests, seconds: (performance.now() - started) / 1000 };
}

const twoXx = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .filter(([status]) => status.startsWith('2'))
    .reduce((sum, [, n]) => sum + n, 0);

async function main(): Promise<void> {
  const world = await createBenchWorld(PG_URL);
  const logFile = join(tmpdir(), `quarry-soak-gateway-${process.pid}.log`);
  mkdirSync(join(REPO_ROOT, 'bench', 'results'), { recursive: true });
  const gateway = await startService({
    entry: 'gateway/src/server.ts',
    env: gatewayEnv(world, 'warn'),
    logFile,
  });
  try {
    const ownerKey = await provision(gateway.url, world, 50);
    await deploySoakAnalytics(gateway.url, ownerKey, world.warehouseSchema);
    const keys = [ownerKey, await signUp(gateway.url, 'b'), await signUp(gateway.url, 'c')];
    const peak = await runMix(gateway.url, keys, PEAK_SECONDS);
    const peakRate = peak.requests / peak.seconds;
    const rate = Math.max(1, Math.floor(peakRate / 2));
    console.log(
      `peak of the mix: ${Math.round(peakRate)} req/s (${JSON.stringify(peak.statuses)}); soaking at ${rate} req/s for ${SECONDS} s`,
    );

    // The peak window's last calls (cut off in flight, uncounted) settle before the ledger is read.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const eventsBefore = await ledgerCount(world.storeUrl);
    const rss: { at: number; bytes: number }[] = [];
    const lags: number[] = [];
    const soakStarted = performance.now();
    await lagP99Ms(gateway.url);
    const sampler = setInterval(() => {
      const memory = readProcessMemory(gateway.pid);
      if (memory !== undefined)
        rss.push({ at: (performance.now() - soakStarted) / 1000, bytes: memory.rssBytes });
      void lagP99Ms(gateway.url).then((lag) => {
        if (lag !== undefined) lags.push(lag);
      });
    }, 10_000);
    const soak = await runMix(gateway.url, keys, SECONDS, rate);
    clearInterval(sampler);
    const eventsAfter = await ledgerCount(world.storeUrl);

    const afterWarmup = rss.find((s) => s.at >= WARMUP_SECONDS) ?? rss[0];
    const last = rss.at(-1);
    const growth =
      afterWarmup === undefined || last === undefined
        ? Number.NaN
        : (last.bytes / afterWarmup.bytes - 1) * 100;
    const errorLines = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((line) => /"level":(50|60)/.test(line) || /Error|FATAL/.test(line.startsWith('{') ? '' : line));
    const report = {
      date: new Date().toISOString(),
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      mix: '6 cache hits : 3 misses : 1 error (400), three accounts',
      peakReqPerSecond: Math.round(peakRate),
      soakReqPerSecond: rate,
      achievedReqPerSecond: Math.round(soak.requests / soak.seconds),
      statuses: soak.statuses,
      answers2xx: twoXx(soak.statuses),
      usageEvents: eventsAfter - eventsBefore,
      rssAfterWarmupMiB: afterWarmup === undefined ? null : mib(afterWarmup.bytes),
      rssEndMiB: last === undefined ? null : mib(last.bytes),
      rssGrowthPercent: Math.round(growth * 10) / 10,
      rssSamplesMiB: rss.map((s) => mib(s.bytes)),
      eventLoopLagP99Ms: {
        max: lags.length === 0 ? null : Math.round(Math.max(...lags) * 10) / 10,
        median:
          lags.length === 0
            ? null
            : Math.round([...lags].sort((a, b) => a - b)[Math.floor(lags.length / 2)]! * 10) / 10,
      },
      errorLogLines: errorLines,
    };
    const out = join(REPO_ROOT, 'bench', 'results', `soak-${report.date.replace(/[:.]/g, '-')}.json`);
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    console.log(
      [
        `soak ${SECONDS} s at ${rate} req/s (half the mix's measured peak of ${report.peakReqPerSecond}), achieved ${report.achievedReqPerSecond}`,
        `answers: ${JSON.stringify(soak.statuses)}`,
        `2xx answers ${report.answers2xx}, usage events ${report.usageEvents}: ${report.answers2xx === report.usageEvents ? 'equal' : 'NOT EQUAL'}`,
        `RSS after ${WARMUP_SECONDS} s warm-up ${report.rssAfterWarmupMiB} MiB, at the end ${report.rssEndMiB} MiB (${report.rssGrowthPercent}%)`,
        `event-loop lag p99 (per 10 s): median ${report.eventLoopLagP99Ms.median} ms, max ${report.eventLoopLagP99Ms.max} ms`,
        `error log lines: ${errorLines.length}${errorLines.length > 0 ? `\n  ${errorLines.slice(0, 10).join('\n  ')}` : ''}`,
        `report: ${out}`,
      ].join('\n'),
    );
    if (report.answers2xx !== report.usageEvents || errorLines.length > 0) process.exitCode = 1;
  } finally {
    await gateway.stop();
    await world.drop();
  }
}

await main();
