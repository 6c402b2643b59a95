// `npm run bench:large-results -w @quarry/bench -- [--rows N]`: a 2,000,000-row result (by
// default) read three ways from a real gateway with the heap flags `npm start` gives it, on the
// local PostgreSQL as warehouse and control-plane store: in JSON pages of 10,000 rows, as a CSV
// export and as a Parquet export. For each: rows per second (first request to last byte) and
// the gateway's resident memory, its peak during that read (sampled every 100 ms from
// /proc/<pid>/status) and at idle before it. Each read runs its query afresh (no cache).
// Prints a table; writes JSON to bench/results/.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { gatewayHeapFlags, gatewayMallocEnv } from '../../scripts/gateway-heap-flags.mjs';
import { mib, readProcessMemory } from './proc-memory.js';
import { freePort, REPO_ROOT } from './service-process.js';

const PG_URL = process.env.QUARRY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const { values } = parseArgs({ options: { rows: { type: 'string', default: '2000000' } } });
const ROWS = Number(values.rows);
const suffix = randomBytes(4).toString('hex');
const TABLE = `bench_large_${suffix}`;
const SCHEMA = `bench_large_store_${suffix}`;

interface Row {
  readonly read: string;
  readonly rows: number;
  readonly seconds: number;
  readonly rowsPerSecond: number;
  readonly bytes: number;
  readonly idleRssMib: number;
  readonly peakRssMib: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function api(url: string, path: string, init: RequestInit & { key?: string } = {}) {
  const headers = new Headers(init.headers);
  if (init.key !== undefined) headers.set('authorization', `Bearer ${init.key}`);
  if (typeof init.body === 'string') headers.set('content-type', 'application/json');
  const response = await fetch(`${url}${path}`, { ...init, headers });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response;
}

/** Samples the gateway's RSS while `work` runs; its peak and the rows/s. */
async function measured(
  read: string,
  pid: number,
  work: () => Promise<{ rows: number; bytes: number }>,
): Promise<Row> {
  await sleep(2_000);
  const idle = readProcessMemory(pid)?.rssBytes ?? Number.NaN;
  let peak = idle;
  const timer = setInterval(() => {
    peak = Math.max(peak, readProcessMemory(pid)?.rssBytes ?? 0);
  }, 100);
  const started = performance.now();
  try {
    const { rows, bytes } = await work();
    const seconds = (performance.now() - started) / 1000;
    return {
      read,
      rows,
      seconds: Math.round(seconds * 10) / 10,
      rowsPerSecond: Math.round(rows / seconds),
      bytes,
      idleRssMib: mib(idle),
      peakRssMib: mib(peak),
    };
  } finally {
    clearInterval(timer);
  }
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const dataDir = await mkdtemp(join(tmpdir(), 'quarry-bench-large-'));
  let child: ChildProcess | undefined;
  try {
    await admin.query(`CREATE SCHEMA ${SCHEMA}`);
    await admin.query(
      `CREATE TABLE ${TABLE} AS SELECT i::bigint AS id, 'n' || i AS name, i * 0.5 AS amount, i % 2 = 0 AS flag,
         DATE '2020-01-01' + (i % 1000)::int AS day, TIMESTAMPTZ '2020-01-01 00:00:00+00' + i * INTERVAL '1 second' AS at
         FROM generate_series(0, ${ROWS - 1}) i`,
    );
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const storeUrl = new URL(PG_URL);
    storeUrl.searchParams.set('options', `-c search_path=${SCHEMA}`);
    child = spawn(
      process.execPath,
      [
        ...gatewayHeapFlags(process.env),
        '--import',
        'tsx',
        '--conditions=@quarry/source',
        'gateway/src/server.ts',
      ],
      {
        cwd: REPO_ROOT,
        stdio: 'ignore',
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          ...gatewayMallocEnv(process.env),
          HOST: '127.0.0.1',
          PORT: String(port),
          DATABASE_URL: storeUrl.toString(),
          QUARRY_SECRET_KEY: randomBytes(32).toString('base64'),
          QUARRY_DATA_DIR: dataDir,
          QUARRY_DEMO: 'false',
          QUARRY_ALLOW_PRIVATE_NETWORKS: 'true',
          QUARRY_LOG_LEVEL: 'warn',
          QUARRY_MAX_ANALYTIC_TIMEOUT_MS: '600000',
          QUARRY_SIGNUPS_PER_HOUR: '100',
          // Each page call counts against the rate limit: lift it for a 200-page read.
          QUARRY_RATE_LIMITS: JSON.stringify({ free: { limit: 100000, window_seconds: 60, burst: 100000 } }),
        },
      },
    );
    const pid = child.pid as number;
    for (let i = 0; ; i++) {
      if (i > 300) throw new Error('the gateway did not start');
      try {
        if ((await fetch(`${url}/healthz`)).ok) break;
      } catch {}
      await sleep(200);
    }
    const signUp = async (name: string) => {
      const made = await api(url, '/v1/accounts', {
        method: 'POST',
        body: JSON.stringify({ email: `${name}-${suffix}@bench.quarry.test`, name }),
      });
      return ((await made.json()) as { key: { secret: string } }).key.secret;
    };
    const owner = await signUp('owner');
    const caller = await signUp('caller');
    await api(url, '/v1/owner/connections', {
      method: 'POST',
      key: owner,
      body: JSON.stringify({
        name: 'pg',
        type: 'postgres',
        config: {
          host: storeUrl.hostname,
          port: Number(storeUrl.port || 5432),
          user: decodeURIComponent(storeUrl.username),
          ...(storeUrl.password ? { password: decodeURIComponent(storeUrl.password) } : {}),
          database: storeUrl.pathname.slice(1),
        },
      }),
    });
    await api(url, '/v1/owner/analytics', {
      method: 'POST',
      key: owner,
      body: JSON.stringify({
        name: 'rows',
        connection: 'pg',
        sql: `SELECT id, name, amount, flag, day, at FROM public.${TABLE} ORDER BY id`,
        limits: { max_rows: ROWS, timeout_ms: 600_000 },
        visibility: 'public',
      }),
    });
    const rows: Row[] = [];
    rows.push(
      await measured('JSON pages of 10,000', pid, async () => {
        let body: Record<string, unknown> = { source: 'rows', page_size: 10_000 };
        let count = 0;
        let bytes = 0;
        for (;;) {
          const text = await (
            await api(url, '/v1/query', { method: 'POST', key: caller, body: JSON.stringify(body) })
          ).text();
          bytes += Buffer.byteLength(text);
          const page = JSON.parse(text) as { results: unknown[]; meta: { next: string | null } };
          count += page.results.length;
          if (page.meta.next === null) return { rows: count, bytes };
          body = { source: 'rows', cursor: page.meta.next };
        }
      }),
    );
    for (const format of ['csv', 'parquet'] as const) {
      rows.push(
        await measured(`${format.toUpperCase()} export`, pid, async () => {
          const response = await api(url, `/v1/analytics/rows?format=${format}`, { key: caller });
          let bytes = 0;
          for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
            bytes += chunk.byteLength;
          return { rows: Number(response.headers.get('x-row-count')), bytes };
        }),
      );
    }
    const heapMb = gatewayHeapFlags(process.env)[0];
    console.log(`${ROWS} rows; gateway ${heapMb}; load average ${loadavg()[0]?.toFixed(1)}`);
    console.table(rows);
    const out = join(REPO_ROOT, 'bench/results');
    await mkdir(out, { recursive: true });
    const file = join(
      out,
      `large-results-${new Date().toISOString().replaceAll(':', '-').replace('.', '-')}.json`,
    );
    await writeFile(
      file,
      `${JSON.stringify({ rows: ROWS, heap: heapMb, load: loadavg(), results: rows }, null, 2)}\n`,
    );
    console.log(`written to ${file}`);
  } finally {
    child?.kill('SIGTERM');
    await sleep(500);
    await admin.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
    await admin.end();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
