// The SQLite connector through the SDK runtime, for what the conformance kit does not cover:
// declared types through joins and CTEs, SQLite's binding of 64-bit integers, booleans and
// timestamps, the read-only gate (only queries run, the file never changes), worker threads
// (a slow query leaves the main thread free; an abort stops its worker), a replaced file picked up
// by new sessions, size limits at open, WAL-mode files, and the worker entry under tsx.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  type Connector,
  type ConnectorError,
  createConnector,
  isConnectorError,
  type ParamValues,
  parseTemplate,
  type QueryRequest,
} from '@quarry/sdk-connector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlitePlugin } from '../src/sqlite-plugin.js';
import { workerExecArgv } from '../src/sqlite-session.js';
import { tempDir, writeSqliteFile } from './sqlite-files.js';

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const COUNT_TO_10E10 =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) ';

const dir = await tempDir('quarry-sqlite-connector-');
const shop = join(dir.dir, 'shop.sqlite');
const opened: Connector[] = [];

async function open(path = shop, config: Record<string, unknown> = {}, pool = {}): Promise<Connector> {
  const connector = await createConnector(sqlitePlugin, { path, ...config }, { pool });
  opened.push(connector);
  return connector;
}

function query(
  connector: Connector,
  sql: string,
  params: ParamValues = {},
  limits: Omit<QueryRequest, 'template' | 'params'> = {},
) {
  return connector.query({ template: parseTemplate(sql, sqlitePlugin.dialect), params, ...limits });
}

async function failure(promise: Promise<unknown>): Promise<ConnectorError> {
  try {
    await promise;
  } catch (error) {
    if (isConnectorError(error)) return error;
    throw error;
  }
  throw new Error('expected a ConnectorError, the call succeeded');
}

async function sha256(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

let connector: Connector;

beforeAll(async () => {
  await writeSqliteFile(shop, [
    `CREATE TABLE orders (id INTEGER PRIMARY KEY, region TEXT NOT NULL, amount_cents BIGINT,
      price DECIMAL(10,2), paid BOOLEAN, sold_on DATE, created_at TIMESTAMP, payload JSON, photo BLOB)`,
    [
      'INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [
        1,
        'EU',
        '9223372036854775807',
        12.5,
        1,
        '2024-02-29',
        '2024-01-31 12:34:56.789',
        '{"a":[1,2]}',
        new Uint8Array([0, 255]),
      ],
    ],
    [
      'INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [2, 'US', '-42', 3, 0, '2024-03-01', '2024-03-01 00:00:00.000', null, null],
    ],
    [
      'INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [3, 'EU', null, null, null, null, null, null, null],
    ],
  ]);
  connector = await open();
});

afterAll(async () => {
  await Promise.allSettled(opened.map((c) => c.close()));
  await dir.remove();
});

describe('sqlite connector: types and binding', () => {
  it('reports declared types through CTEs and joins, with JSON-safe values', async () => {
    const result = await query(
      connector,
      `WITH recent AS (SELECT * FROM orders WHERE id <= :last)
       SELECT r.id, r.region, o.amount_cents, r.price, r.paid, r.sold_on, r.created_at, r.payload, r.photo,
              count(*) OVER () AS n
       FROM recent r JOIN orders o USING (id) ORDER BY r.id`,
      { last: { type: 'integer', array: false, value: 2 } },
    );
    expect(result.columns.map((c) => [c.name, c.type])).toEqual([
      ['id', 'integer'],
      ['region', 'string'],
      ['amount_cents', 'integer'],
      ['price', 'decimal'],
      ['paid', 'boolean'],
      ['sold_on', 'date'],
      ['created_at', 'timestamp'],
      ['payload', 'json'],
      ['photo', 'bytes'],
      ['n', 'integer'],
    ]);
    expect(result.rows).toEqual([
      {
        id: 1,
        region: 'EU',
        amount_cents: '9223372036854775807',
        price: 12.5,
        paid: true,
        sold_on: '2024-02-29',
        created_at: '2024-01-31T12:34:56.789Z',
        payload: { a: [1, 2] },
        photo: 'AP8=',
        n: 2,
      },
      {
        id: 2,
        region: 'US',
        amount_cents: -42,
        price: 3,
        paid: false,
        sold_on: '2024-03-01',
        created_at: '2024-03-01T00:00:00.000Z',
        payload: null,
        photo: null,
        n: 2,
      },
    ]);
  });

  it('binds integers beyond 2^53 as exact text: equal to an INTEGER column, and through CAST', async () => {
    const big = { type: 'integer', array: false, value: 9223372036854775807n } as const;
    const matched = await query(connector, 'SELECT id FROM orders WHERE amount_cents = :big', { big });
    expect(matched.rows).toEqual([{ id: 1 }]);
    const cast = await query(connector, 'SELECT CAST(:big AS INTEGER) AS v, typeof(:big) AS bound', { big });
    expect(cast.rows).toEqual([{ v: '9223372036854775807', bound: 'text' }]);
  });

  it('binds booleans as 1/0 and timestamps as SQLite UTC text that compares with stored values', async () => {
    const result = await query(
      connector,
      'SELECT id FROM orders WHERE paid = :paid AND created_at >= :since ORDER BY id',
      {
        paid: { type: 'boolean', array: false, value: false },
        since: { type: 'timestamp', array: false, value: '2024-03-01T00:00:00.000Z' },
      },
    );
    expect(result.rows).toEqual([{ id: 2 }]);
  });

  it('keeps ?, :name and @name inside strings and comments as text', async () => {
    const result = await query(connector, "SELECT '?' AS q, ':v @w' AS named, :v AS v -- what?\n", {
      v: { type: 'string', array: false, value: 'bound' },
    });
    expect(result.rows).toEqual([{ q: '?', named: ':v @w', v: 'bound' }]);
  });
});

describe('sqlite connector: read-only', () => {
  it('refuses every statement that is not a single query, and the file never changes', async () => {
    const before = await sha256(shop);
    const refused: [string, string][] = [
      ['PRAGMA query_only = OFF', 'NOT_A_QUERY'],
      ['PRAGMA table_info(orders)', 'NOT_A_QUERY'],
      ["ATTACH DATABASE ':memory:' AS other", 'NOT_A_QUERY'],
      ["INSERT INTO orders (id, region) VALUES (99, 'XX') RETURNING id", 'NOT_A_QUERY'],
      ["UPDATE orders SET region = 'XX' RETURNING id", 'NOT_A_QUERY'],
      ['CREATE TEMP TABLE scratch (x)', 'NOT_A_QUERY'],
      ['VACUUM', 'NOT_A_QUERY'],
      ['EXPLAIN SELECT 1', 'NOT_A_QUERY'],
      ['BEGIN', 'NOT_A_QUERY'],
      ['SELECT 1; DELETE FROM orders', 'MULTIPLE_STATEMENTS'],
      ['-- nothing to run', 'EMPTY'],
    ];
    // The SDK's run-time check (READ_ONLY, sdk-connector/src/read-only-sql.ts) refuses most of
    // these before the connector's own; either way nothing reaches the file.
    for (const [sql, driverCode] of refused) {
      const error = await failure(query(connector, sql));
      expect(error.code, sql).toBe('QUERY_FAILED');
      expect(['READ_ONLY', driverCode], sql).toContain(error.driverCode);
    }
    const notQuery = await failure(query(connector, 'DELETE FROM orders'));
    expect(notQuery.message).toMatch(/not read-only|only a query \(SELECT, WITH … SELECT or VALUES\)/);
    expect((await query(connector, 'SELECT count(*) AS n FROM orders')).rows).toEqual([{ n: 3 }]);
    expect(await sha256(shop)).toBe(before);
  });

  it("never copies SQLite's own message (it can name tables and values) into the error", async () => {
    const error = await failure(query(connector, 'SELECT secret_column_xyz FROM orders'));
    expect(error).toMatchObject({ code: 'QUERY_FAILED', driverCode: 'SQLITE_ERROR' });
    expect(error.message).toBe('SQLite rejected the query');
    expect(JSON.stringify(error.details)).not.toContain('secret_column_xyz');
    expect(String((error.cause as Error).message)).toContain('secret_column_xyz');
  });
});

describe('sqlite connector: workers', () => {
  it('stops stepping at the row limit: the first rows of a 10^10-row result come back', async () => {
    const result = await query(
      connector,
      `${COUNT_TO_10E10}SELECT x FROM c`,
      {},
      { maxRows: 3, timeoutMs: 20_000 },
    );
    expect(result.rows).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }]);
    expect(result.truncated).toBe(true);
  });

  it('runs a slow query off the main thread: another session answers meanwhile; an abort stops its worker', async () => {
    const own = await open(shop, {}, { max: 2 });
    const abort = new AbortController();
    let settled = false;
    const slow = query(
      own,
      `${COUNT_TO_10E10}SELECT count(*) AS n FROM c`,
      {},
      { signal: abort.signal, timeoutMs: 20_000 },
    );
    void slow.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    while (own.stats().busy === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const meanwhile = await query(own, 'SELECT count(*) AS n FROM orders');
    expect(meanwhile.rows).toEqual([{ n: 3 }]);
    expect(settled, 'the slow query is still running').toBe(false);

    const destroyedBefore = own.stats().destroyed;
    abort.abort();
    expect((await failure(slow)).code).toBe('QUERY_ABORTED');
    expect(own.stats().destroyed, 'the aborted session (its worker) is gone').toBe(destroyedBefore + 1);
    expect((await query(own, 'SELECT count(*) AS n FROM orders')).rows).toEqual([{ n: 3 }]);
  });

  it('picks up a replaced database file on the next borrow', async () => {
    const path = join(dir.dir, 'replaced.sqlite');
    await writeSqliteFile(path, ['CREATE TABLE v (version INTEGER)', 'INSERT INTO v VALUES (1)']);
    const own = await open(path);
    expect((await query(own, 'SELECT version FROM v')).rows).toEqual([{ version: 1 }]);
    await writeSqliteFile(path, ['CREATE TABLE v (version INTEGER)', 'INSERT INTO v VALUES (2)']);
    let version: unknown = 1;
    const deadline = Date.now() + 10_000;
    while (version === 1 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      version = (await query(own, 'SELECT version FROM v')).rows[0]?.version;
    }
    expect(version).toBe(2);
    expect(own.stats().created, 'a new session read the new file').toBe(2);
  });

  it('fails to open a file that grew past maxFileBytes with CONNECT_FAILED (TOO_LARGE)', async () => {
    const path = join(dir.dir, 'growing.sqlite');
    await writeSqliteFile(path, ['CREATE TABLE g (x TEXT)']);
    const size = (await readFile(path)).length;
    const own = await open(path, { maxFileBytes: size + 100 });
    await writeSqliteFile(path, [
      'CREATE TABLE g (x TEXT)',
      `INSERT INTO g VALUES ('${'x'.repeat(20_000)}')`,
    ]);
    const error = await failure(own.test());
    expect(error).toMatchObject({ code: 'CONNECT_FAILED', driverCode: 'TOO_LARGE' });
  });

  it('reads a database file whose header says WAL mode', async () => {
    const path = join(dir.dir, 'wal.sqlite');
    await writeSqliteFile(path, ['CREATE TABLE w (x INTEGER)', 'INSERT INTO w VALUES (42)']);
    const bytes = await readFile(path);
    // Bytes 18 and 19 of the header are the write/read format versions: 2 means WAL.
    bytes[18] = 2;
    bytes[19] = 2;
    await writeFile(path, bytes);
    expect((await query(await open(path), 'SELECT x FROM w')).rows).toEqual([{ x: 42 }]);
  });

  it("passes the parent's Node flags to its workers, except --input-type (a worker from a file refuses it)", () => {
    expect(
      workerExecArgv(['--import', 'tsx', '--conditions=@quarry/source', '--input-type=module', '-e', 'x']),
    ).toEqual(['--import', 'tsx', '--conditions=@quarry/source', '-e', 'x']);
    expect(workerExecArgv(['--input-type', 'module', '--max-old-space-size=512'])).toEqual([
      '--max-old-space-size=512',
    ]);
  });

  it('loads its worker under node --import tsx (the gateway), and idle sessions let the process exit', async () => {
    const script = `
      import { createConnector, parseTemplate } from '@quarry/sdk-connector';
      import { plugin } from 'quarry-connector-sqlite';
      const connector = await createConnector(plugin, { path: ${JSON.stringify(shop)} });
      const result = await connector.query({ template: parseTemplate('SELECT count(*) AS n FROM orders'), params: {} });
      console.log(JSON.stringify({ rows: result.rows, open: connector.stats().total }));
      // No close(): the idle worker must not keep this process alive.
    `;
    const { stdout } = await run(
      process.execPath,
      ['--import', 'tsx', '--conditions=@quarry/source', '--input-type=module', '-e', script],
      { cwd: REPO_ROOT, timeout: 20_000 },
    );
    expect(JSON.parse(stdout)).toEqual({ rows: [{ n: 3 }], open: 1 });
  });
});
