// Results larger than one answer, end to end: a real gateway process (with the heap flags
// `npm start` gives it) and real PostgreSQL and DuckDB warehouses, each serving an analytic of
// 2,000,000 typed rows. Read in pages of 10,000, every row comes exactly once and in order, from
// one warehouse query (PostgreSQL's own scan counter says so), charged once; the same analytic
// exported as Parquet is read back by DuckDB's read_parquet with identical rows and types, as
// Arrow by apache-arrow, as CSV and NDJSON; the gateway's peak RSS stays bounded throughout.
// Cursors are bound to their account and end with the snapshot (410 CURSOR_EXPIRED).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { createQuarryClient } from '@quarry/client';
import { tableFromIPC } from 'apache-arrow';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayHeapFlags } from '../scripts/gateway-heap-flags.mjs';
import { type ControlPlaneSchema, createControlPlaneSchema } from './support/control-plane.js';
import { expectErrorEnvelope } from './support/error-envelope.js';
import { type GatewayProcess, postgresStoreEnv, REPO_ROOT, startGateway } from './support/gateway-process.js';
import { createHttpClient } from './support/http-client.js';
import { pgAvailable, serviceUp, TEST_PG_URL, uniqueSuffix } from './support/test-services.js';

const pgUp = serviceUp(await pgAvailable());
const suffix = uniqueSuffix();
const http = createHttpClient();
const ROWS = 2_000_000;
const TABLE = `large_rows_${suffix}`;

/** The rows both warehouses produce, as DuckDB SQL over `i` (0 … ROWS − 1). */
const DUCK_ROWS = `SELECT i::BIGINT AS id, 'n' || i::VARCHAR AS name, i * 0.5 AS amount, i % 2 = 0 AS flag,
  DATE '2020-01-01' + (i % 1000)::INTEGER AS day, TIMESTAMPTZ '2020-01-01 00:00:00+00' + to_seconds(i) AS at
  FROM range(${ROWS}) t(i)`;

/** The gateway's peak resident memory so far (VmHWM), in MiB. */
async function peakRssMib(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
  return kb / 1024;
}

/** PostgreSQL's count of scans of the table, sequential or by index (flushed by each server process once idle). */
async function scans(client: pg.Client): Promise<number> {
  const result = await client.query(
    'SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS scans FROM pg_stat_user_tables WHERE relname = $1',
    [TABLE],
  );
  return Number(result.rows[0]?.scans ?? 0);
}

/** The scan count once it has moved past `before` and then held still for 2 s (at most 20 s). */
async function settledScans(client: pg.Client, before: number): Promise<number> {
  const until = Date.now() + 20_000;
  let seen = await scans(client);
  while (seen === before && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    seen = await scans(client);
  }
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  return scans(client);
}

describe.runIf(pgUp)('results in pages and export formats', () => {
  let store: ControlPlaneSchema;
  let gateway: GatewayProcess;
  let dataDir: string;
  let ownerKey: string;
  let callerKey: string;
  let otherKey: string;
  let warehouse: pg.Client;
  const env = () => ({
    ...postgresStoreEnv(store.databaseUrl, secret),
    QUARRY_LOG_LEVEL: 'warn',
    QUARRY_DATA_DIR: dataDir,
    NODE_OPTIONS: gatewayHeapFlags({}).join(' '),
    // 2,000,000 rows go from the warehouse to disk within the analytic's time limit, on a
    // machine other tests share.
    QUARRY_MAX_ANALYTIC_TIMEOUT_MS: '600000',
  });
  const secret = randomBytes(32).toString('base64');

  beforeAll(async () => {
    warehouse = new pg.Client({ connectionString: TEST_PG_URL });
    await warehouse.connect();
    await warehouse.query(
      `CREATE TABLE ${TABLE} (id bigint PRIMARY KEY, name text, amount double precision, flag boolean, day date, at timestamptz) WITH (parallel_workers = 0)`,
    );
    await warehouse.query(
      `INSERT INTO ${TABLE} SELECT i, 'n' || i, i * 0.5, i % 2 = 0, DATE '2020-01-01' + (i % 1000)::int,
         TIMESTAMPTZ '2020-01-01 00:00:00+00' + i * INTERVAL '1 second' FROM generate_series(0, ${ROWS - 1}) i`,
    );
    await warehouse.query(`ANALYZE ${TABLE}`);
    store = await createControlPlaneSchema(`quarry_e2e_pages_${suffix}`);
    dataDir = await mkdtemp(join(tmpdir(), 'quarry-pages-'));
    gateway = await startGateway({ env: env() });
    const signUp = async (name: string) => {
      const made = await http.request(gateway.url, 'POST', '/v1/accounts', {
        json: { email: `${name}-${suffix}@e2e.quarry.test`, name },
      });
      expect(made.status, made.text).toBe(201);
      return made.body.key.secret as string;
    };
    ownerKey = await signUp('pages-owner');
    callerKey = await signUp('pages-caller');
    otherKey = await signUp('pages-other');
    const pgUrl = new URL(TEST_PG_URL);
    for (const [name, type, config] of [
      [
        'pg',
        'postgres',
        {
          host: pgUrl.hostname,
          port: Number(pgUrl.port || 5432),
          user: decodeURIComponent(pgUrl.username),
          ...(pgUrl.password ? { password: decodeURIComponent(pgUrl.password) } : {}),
          database: pgUrl.pathname.slice(1),
        },
      ],
      ['duck', 'duckdb', { path: ':memory:' }],
    ] as const) {
      const made = await http.request(gateway.url, 'POST', '/v1/owner/connections', {
        key: ownerKey,
        json: { name, type, config },
      });
      expect(made.status, made.text).toBe(201);
    }
    for (const [name, connection, sql] of [
      ['rows-pg', 'pg', `SELECT id, name, amount, flag, day, at FROM ${TABLE} ORDER BY id`],
      ['rows-duck', 'duck', `${DUCK_ROWS} ORDER BY id`],
      ['rows-small', 'pg', `SELECT id, name, amount, flag, day, at FROM ${TABLE} WHERE id < 25 ORDER BY id`],
    ] as const) {
      const made = await http.request(gateway.url, 'POST', '/v1/owner/analytics', {
        key: ownerKey,
        json: {
          name: `${name}-${suffix}`,
          connection,
          sql,
          limits: { max_rows: ROWS, timeout_ms: 300_000 },
          visibility: 'public',
        },
      });
      expect(made.status, made.text).toBe(201);
    }
  }, 240_000);

  afterAll(async () => {
    await gateway?.stop();
    await store?.drop();
    await warehouse?.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await warehouse?.end();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  const calls = async (key: string) => {
    const usage = await http.request(gateway.url, 'GET', '/v1/account/usage', { key });
    expect(usage.status, usage.text).toBe(200);
    return usage.body.totals.calls as number;
  };

  /** Pages through `source` by 10,000 and checks every id comes once, in order. */
  async function readAllPages(source: string): Promise<{ pages: number; first: Record<string, unknown> }> {
    let body: Record<string, unknown> = { source, page_size: 10_000 };
    let expected = 0;
    let pages = 0;
    let first: Record<string, unknown> | undefined;
    for (;;) {
      const page = await http.request(gateway.url, 'POST', '/v1/query', { key: callerKey, json: body });
      expect(page.status, page.text.slice(0, 500)).toBe(200);
      pages++;
      expect(page.body.meta.total_rows).toBe(ROWS);
      expect(page.body.meta.offset).toBe(expected);
      expect(page.body.meta.credits).toBe(pages === 1 ? 1 : 0);
      for (const row of page.body.results as { id: number }[]) {
        expect(row.id).toBe(expected);
        expected++;
      }
      first ??= page.body.results[0];
      if (page.body.meta.next === null) break;
      body = { source, cursor: page.body.meta.next };
    }
    expect(expected).toBe(ROWS);
    return { pages, first: first as Record<string, unknown> };
  }

  it('pages 2,000,000 PostgreSQL rows by 10,000: each row once, one warehouse query, one charge', async () => {
    const callsBefore = await calls(callerKey);
    const scansBefore = await scans(warehouse);
    const { pages, first } = await readAllPages(`rows-pg-${suffix}`);
    expect(pages).toBe(200);
    expect(first).toEqual({
      id: 0,
      name: 'n0',
      amount: 0,
      flag: true,
      day: '2020-01-01',
      at: '2020-01-01T00:00:00.000Z',
    });
    expect(await settledScans(warehouse, scansBefore)).toBe(scansBefore + 1);
    expect(await calls(callerKey)).toBe(callsBefore + 1);
  }, 600_000);

  it('pages 2,000,000 DuckDB rows by 10,000 with one charge', async () => {
    const callsBefore = await calls(callerKey);
    const { pages } = await readAllPages(`rows-duck-${suffix}`);
    expect(pages).toBe(200);
    expect(await calls(callerKey)).toBe(callsBefore + 1);
  }, 600_000);

  it('binds a cursor to its account, refuses a forged one, and answers 410 once the snapshot is gone', async () => {
    const first = await http.request(gateway.url, 'POST', '/v1/query', {
      key: callerKey,
      json: { source: `rows-small-${suffix}`, page_size: 10 },
    });
    expect(first.status, first.text).toBe(200);
    expect(first.body.results).toHaveLength(10);
    const cursor = first.body.meta.next as string;
    expect(cursor).toEqual(expect.any(String));
    const stolen = await http.request(gateway.url, 'POST', '/v1/query', {
      key: otherKey,
      json: { source: `rows-small-${suffix}`, cursor },
    });
    expectErrorEnvelope(stolen, 400, 'INVALID_REQUEST');
    const forged = `${cursor.slice(0, -3)}${cursor.endsWith('AAA') ? 'BBB' : 'AAA'}`;
    expectErrorEnvelope(
      await http.request(gateway.url, 'POST', '/v1/query', {
        key: callerKey,
        json: { source: `rows-small-${suffix}`, cursor: forged },
      }),
      400,
      'INVALID_REQUEST',
    );
    // GET takes the cursor in the query string; the last page has no next.
    const second = await http.request(
      gateway.url,
      'GET',
      `/v1/analytics/rows-small-${suffix}?cursor=${encodeURIComponent(cursor)}`,
      { key: callerKey },
    );
    expect(second.status, second.text).toBe(200);
    expect(second.body.results.map((r: { id: number }) => r.id)).toEqual([
      10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
    ]);
    const third = await http.request(gateway.url, 'POST', '/v1/query', {
      key: callerKey,
      json: { source: `rows-small-${suffix}`, cursor: second.body.meta.next },
    });
    expect(third.body.results).toHaveLength(5);
    expect(third.body.meta.next).toBeNull();
    expectErrorEnvelope(
      await http.request(gateway.url, 'POST', '/v1/query', {
        key: callerKey,
        json: { source: `rows-small-${suffix}`, page_size: 10_001 },
      }),
      400,
      'INVALID_REQUEST',
    );
    // A restarted gateway holds none of its earlier snapshots.
    await gateway.stop();
    gateway = await startGateway({ env: env() });
    const expired = await http.request(gateway.url, 'POST', '/v1/query', {
      key: callerKey,
      json: { source: `rows-small-${suffix}`, cursor },
    });
    expectErrorEnvelope(expired, 410, 'CURSOR_EXPIRED');
    expect(expired.body.error.message).toContain('Rerun the query');
  }, 120_000);

  it('exports Parquet that DuckDB reads back with identical rows and types, the gateway RSS bounded', async () => {
    const callsBefore = await calls(callerKey);
    const response = await fetch(`${gateway.url}/v1/analytics/rows-pg-${suffix}?format=parquet`, {
      headers: { authorization: `Bearer ${callerKey}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    const file = join(dataDir, `export-${suffix}.parquet`);
    await writeFile(file, Buffer.from(await response.arrayBuffer()));
    const peak = await peakRssMib(gateway.child.pid as number);
    const duck = await DuckDBInstance.create(':memory:');
    const connection = await duck.connect();
    try {
      const types = await connection.runAndReadAll(
        `SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${file}'))`,
      );
      expect(types.getRowObjectsJson()).toEqual([
        { column_name: 'id', column_type: 'BIGINT' },
        { column_name: 'name', column_type: 'VARCHAR' },
        { column_name: 'amount', column_type: 'DOUBLE' },
        { column_name: 'flag', column_type: 'BOOLEAN' },
        { column_name: 'day', column_type: 'DATE' },
        // Parquet's TIMESTAMP_MICROS: UTC instants, which DuckDB reads as TIMESTAMP.
        { column_name: 'at', column_type: 'TIMESTAMP' },
      ]);
      const expected = DUCK_ROWS.replace(
        "TIMESTAMPTZ '2020-01-01 00:00:00+00'",
        "TIMESTAMP '2020-01-01 00:00:00'",
      );
      const differences = await connection.runAndReadAll(
        `SELECT (SELECT count(*) FROM read_parquet('${file}')) AS total,
           (SELECT count(*) FROM (SELECT * FROM read_parquet('${file}') EXCEPT ${expected})) AS extra,
           (SELECT count(*) FROM (${expected} EXCEPT SELECT * FROM read_parquet('${file}'))) AS missing`,
      );
      expect(differences.getRowObjectsJson()).toEqual([{ total: String(ROWS), extra: '0', missing: '0' }]);
    } finally {
      connection.closeSync();
      duck.closeSync();
    }
    expect(await calls(callerKey)).toBe(callsBefore + 1);
    // The bound `npm start` gives the heap (64 MiB cache + 96 MiB) plus what Node itself holds
    // outside it; the result itself (~170 MB as JSON lines) never entered the heap.
    console.log(`gateway peak RSS after the Parquet export: ${peak.toFixed(0)} MiB`);
    expect(peak).toBeLessThan(160 + 160);
  }, 600_000);

  it('pages and exports through @quarry/client and `quarry query --format csv`', async () => {
    const client = createQuarryClient({ baseUrl: gateway.url, apiKey: callerKey });
    const ids: number[] = [];
    const credits: number[] = [];
    for await (const page of client.pages<{ id: number }>(`rows-small-${suffix}`, {}, { pageSize: 10 })) {
      ids.push(...page.results.map((r) => r.id));
      credits.push(page.meta.credits);
    }
    expect(ids).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(credits).toEqual([1, 0, 0]);
    const ndjson = await client.export(`rows-small-${suffix}`, {}, 'ndjson');
    expect(ndjson).toMatchObject({
      contentType: 'application/x-ndjson',
      rowCount: 25,
      truncated: false,
      credits: 1,
    });
    expect((await new Response(ndjson.body).text()).trimEnd().split('\n')).toHaveLength(25);
    const cli = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (resolve, reject) => {
        const child = spawn(
          process.execPath,
          [
            join(REPO_ROOT, 'client', 'bin', 'quarry.mjs'),
            'query',
            `rows-small-${suffix}`,
            '--format',
            'csv',
          ],
          {
            cwd: REPO_ROOT,
            env: {
              PATH: process.env.PATH ?? '',
              HOME: dataDir,
              QUARRY_URL: gateway.url,
              QUARRY_API_KEY: callerKey,
            },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
        });
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
          stderr += chunk;
        });
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      },
    );
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout.split('\r\n')[0]).toBe('id,name,amount,flag,day,at');
    expect(cli.stdout.trimEnd().split('\r\n')).toHaveLength(26);
    expect(cli.stderr).toMatch(new RegExp(`rows-small-${suffix}: 25 rows · [0-9.]+ KB · 1 credit · req_`));
  }, 120_000);

  it('exports an Arrow stream that apache-arrow reads, and CSV and NDJSON', async () => {
    const arrow = await fetch(`${gateway.url}/v1/query`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${callerKey}`,
        'content-type': 'application/json',
        accept: 'application/vnd.apache.arrow.stream',
      },
      body: JSON.stringify({ source: `rows-duck-${suffix}` }),
    });
    expect(arrow.status).toBe(200);
    const table = tableFromIPC(new Uint8Array(await arrow.arrayBuffer()));
    expect(table.numRows).toBe(ROWS);
    expect(table.schema.fields.map((f) => `${f.name}:${f.type}`)).toEqual([
      'id:Int64',
      'name:Utf8',
      'amount:Float64',
      'flag:Bool',
      'day:Date32<DAY>',
      'at:Timestamp<MICROSECOND, UTC>',
    ]);
    const last = table.get(ROWS - 1)?.toJSON();
    expect(last).toMatchObject({
      id: BigInt(ROWS - 1),
      name: `n${ROWS - 1}`,
      amount: (ROWS - 1) * 0.5,
      flag: false,
    });

    const csv = await http.request(gateway.url, 'GET', `/v1/analytics/rows-small-${suffix}?format=csv`, {
      key: callerKey,
    });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv');
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('id,name,amount,flag,day,at');
    expect(lines[1]).toBe('0,n0,0,true,2020-01-01,2020-01-01T00:00:00.000Z');
    expect(lines).toHaveLength(26);
    const ndjson = await http.request(gateway.url, 'POST', '/v1/query', {
      key: callerKey,
      json: { source: `rows-small-${suffix}` },
      headers: { accept: 'application/x-ndjson' },
    });
    expect(ndjson.status).toBe(200);
    const rows = ndjson.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(25);
    expect(rows[24]).toMatchObject({ id: 24, name: 'n24' });
    expectErrorEnvelope(
      await http.request(gateway.url, 'GET', `/v1/analytics/rows-small-${suffix}?format=xlsx`, {
        key: callerKey,
      }),
      400,
      'INVALID_REQUEST',
    );
  }, 600_000);
});
