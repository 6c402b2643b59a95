// Direct tests of the DuckDB driver and session (no SDK runtime): read-only enforcement,
// typed binding, streaming row limits, cancellation, lifecycle and error mapping.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  type BoundParam,
  type ConnectorDriver,
  type ConnectorSession,
  createDestinationGuard,
  isConnectorError,
  noopLogger,
  OPERATOR_TRUSTED,
  type RawResult,
} from '@quarry/sdk-connector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDuckdbDriver } from './duckdb-driver.js';

let dir: string;
let file: string;
let driver: ConnectorDriver;
let session: ConnectorSession;

async function writeDatabase(path: string, statements: readonly string[]): Promise<void> {
  const instance = await DuckDBInstance.create(path);
  const connection = await instance.connect();
  try {
    for (const sql of statements) await connection.run(sql);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

function run(
  sql: string,
  params: readonly BoundParam[] = [],
  rowLimit = 1000,
  on = session,
): Promise<RawResult> {
  return on.execute({ sql, params }, { timeoutMs: 30_000, rowLimit, signal: new AbortController().signal });
}

function param(type: BoundParam['type'], value: BoundParam['value'], array = false): BoundParam {
  return { name: 'p', type, array, value };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-duckdb-driver-'));
  file = join(dir, 'warehouse.duckdb');
  await writeDatabase(file, [
    `CREATE TABLE sales (id INTEGER, region VARCHAR, amount DECIMAL(18,2), day DATE, ts TIMESTAMP)`,
    `INSERT INTO sales VALUES (1, 'EU', 10.50, DATE '2024-02-29', TIMESTAMP '2024-01-31 12:00:00'),
      (2, 'US', 20.00, DATE '2024-03-01', TIMESTAMP '2024-02-01 00:00:00'),
      (3, 'EU', 5.25, DATE '2024-03-02', TIMESTAMP '2024-02-02 08:30:00')`,
  ]);
  driver = createDuckdbDriver(
    { path: file, threads: 2 },
    { logger: noopLogger, destinations: createDestinationGuard(OPERATOR_TRUSTED) },
  );
  session = await driver.createSession();
});

afterAll(async () => {
  await session?.close();
  await driver?.destroy?.();
  await rm(dir, { recursive: true, force: true });
});

describe('duckdb driver: reading', () => {
  it('binds typed params, including typed NULLs, arrays, dates and timestamps', async () => {
    const sql = 'SELECT id FROM sales WHERE ($1::VARCHAR IS NULL OR region = $2::VARCHAR) ORDER BY id';
    expect((await run(sql, [param('string', null), param('string', null)])).rows).toEqual([[1], [2], [3]]);
    expect((await run(sql, [param('string', 'EU'), param('string', 'EU')])).rows).toEqual([[1], [3]]);
    const inList = await run('SELECT id FROM sales WHERE id = ANY($1::BIGINT[]) ORDER BY id', [
      param('integer', [3, 1], true),
    ]);
    expect(inList.rows).toEqual([[1], [3]]);
    const byDay = await run('SELECT id FROM sales WHERE day = $1::DATE', [param('date', '2024-02-29')]);
    expect(byDay.rows).toEqual([[1]]);
    const byTs = await run('SELECT id FROM sales WHERE ts >= $1::TIMESTAMPTZ ORDER BY id', [
      param('timestamp', '2024-02-01T00:00:00.000Z'),
    ]);
    expect(byTs.rows).toEqual([[2], [3]]);
  });

  it('runs every session in UTC whatever the host time zone', async () => {
    const own = await driver.createSession();
    try {
      expect((await run(`SELECT current_setting('TimeZone') AS tz`, [], 10, own)).rows).toEqual([['UTC']]);
      const wall = await run(
        `SELECT $1::TIMESTAMPTZ::TIMESTAMP AS ts`,
        [param('timestamp', '2024-06-01T12:00:00.000Z')],
        10,
        own,
      );
      expect(wall.rows).toEqual([['2024-06-01T12:00:00.000Z']]);
    } finally {
      await own.close();
    }
  });

  it('reports a typed NULL param with the type it was bound as', async () => {
    const result = await run('SELECT $1::VARCHAR AS v', [param('string', null)]);
    expect(result.columns).toEqual([{ name: 'v', type: 'string', nativeType: 'VARCHAR' }]);
    expect(result.rows).toEqual([[null]]);
  });

  it('hands over decimals as exact strings, dates as YYYY-MM-DD and timestamps as ISO UTC', async () => {
    const result = await run('SELECT amount, day, ts FROM sales WHERE id = 1');
    expect(result.columns.map((c) => c.type)).toEqual(['decimal', 'date', 'timestamp']);
    expect(result.rows).toEqual([['10.50', '2024-02-29', '2024-01-31T12:00:00.000Z']]);
  });

  it('stops reading at the row limit, even for a result it could never materialise', async () => {
    // 10^12 rows: only a stream cut after the first chunk returns at all.
    const result = await run('SELECT range AS n FROM range(1000000000000)', [], 3);
    expect(result.rows).toEqual([[0n], [1n], [2n]]);
  });

  it('reuses a prepared statement with new values', async () => {
    const sql = 'SELECT count(*) AS n FROM sales WHERE region = $1::VARCHAR';
    expect((await run(sql, [param('string', 'EU')])).rows).toEqual([[2n]]);
    expect((await run(sql, [param('string', 'US')])).rows).toEqual([[1n]]);
  });

  it('refuses a value that does not fit its declared param type', async () => {
    const error = await run('SELECT $1::BIGINT AS v', [param('integer', 'ten')]).catch((e: unknown) => e);
    expect(isConnectorError(error, 'PARAM_INVALID')).toBe(true);
  });
});

describe('duckdb driver: read-only', () => {
  const copyTarget = () => join(dir, 'leak.csv');
  const writes = () => [
    `INSERT INTO sales VALUES (9, 'XX', 1, NULL, NULL)`,
    `UPDATE sales SET region = 'XX'`,
    `DELETE FROM sales`,
    `CREATE TABLE other (a INTEGER)`,
    `CREATE TEMP TABLE scratch (a INTEGER)`,
    `CREATE VIEW v AS SELECT 1`,
    `DROP TABLE sales`,
    `ALTER TABLE sales ADD COLUMN b INTEGER`,
    `COPY sales TO '${copyTarget()}'`,
    `ATTACH '${join(dir, 'other.duckdb')}' AS other`,
    `SET threads = 1`,
    `PRAGMA enable_profiling`,
    `CALL pragma_version()`,
    `CHECKPOINT`,
    `INSTALL httpfs`,
    `SELECT 1; DELETE FROM sales`,
  ];

  it('fails every write, DDL, COPY, ATTACH, SET, PRAGMA, CALL and stacked statement', async () => {
    for (const sql of writes()) {
      const error = await run(sql).catch((e: unknown) => e);
      expect(isConnectorError(error), sql).toBe(true);
    }
    expect((await run('SELECT count(*) AS n FROM sales')).rows).toEqual([[3n]]);
    expect(existsSync(copyTarget())).toBe(false);
    expect(existsSync(join(dir, 'other.duckdb'))).toBe(false);
  });

  it('cannot read files outside the allowed directories', async () => {
    const error = await run(`SELECT * FROM read_csv('/etc/passwd')`).catch((e: unknown) => e);
    expect(isConnectorError(error, 'QUERY_FAILED')).toBe(true);
    expect((error as Error).message).not.toContain('/etc/passwd');
  });

  it('does not let a query unlock the configuration', async () => {
    const error = await run(
      `SELECT * FROM duckdb_settings() WHERE name = 'lock_configuration' AND value = 'true'`,
    );
    expect(error.rows).toHaveLength(1);
  });
});

describe('duckdb driver: cancel and lifecycle', () => {
  it('interrupts a long CPU-bound query promptly and the session keeps working', async () => {
    const own = await driver.createSession();
    try {
      const pending = run('SELECT sum(hash(range)) AS h FROM range(1000000000000)', [], 10, own).then(
        () => 'finished',
        (e: unknown) => e,
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      await own.cancel?.();
      const outcome = await pending;
      expect(isConnectorError(outcome, 'QUERY_FAILED')).toBe(true);
      expect((outcome as { driverCode?: string }).driverCode).toBe('INTERRUPT');
      expect((await run('SELECT 42 AS x', [], 10, own)).rows).toEqual([[42]]);
    } finally {
      await own.close();
    }
  });

  it('validates locally, and a closed session is invalid; close is idempotent', async () => {
    const own = await driver.createSession();
    expect(await own.validate?.()).toBe(true);
    await own.close();
    await own.close();
    expect(await own.validate?.()).toBe(false);
    const error = await run('SELECT 1', [], 10, own).catch((e: unknown) => e);
    expect(isConnectorError(error, 'CLOSED')).toBe(true);
  });

  it('lets two connectors open the same database file at once', async () => {
    const second = createDuckdbDriver(
      { path: file },
      { logger: noopLogger, destinations: createDestinationGuard(OPERATOR_TRUSTED) },
    );
    try {
      const s = await second.createSession();
      expect((await run('SELECT count(*) AS n FROM sales', [], 10, s)).rows).toEqual([[3n]]);
      await s.close();
    } finally {
      await second.destroy?.();
    }
    expect((await run('SELECT count(*) AS n FROM sales')).rows).toEqual([[3n]]);
  });

  it('fails with CONNECT_FAILED, without the path, for a missing database file', async () => {
    const missing = join(dir, 'secret-name', 'missing.duckdb');
    const broken = createDuckdbDriver(
      { path: missing },
      { logger: noopLogger, destinations: createDestinationGuard(OPERATOR_TRUSTED) },
    );
    const error = await broken.createSession().catch((e: unknown) => e);
    expect(isConnectorError(error, 'CONNECT_FAILED')).toBe(true);
    expect((error as Error).message).not.toContain('secret-name');
    await broken.destroy?.();
  });

  it('refuses new sessions after destroy', async () => {
    const own = createDuckdbDriver(
      { path: file },
      { logger: noopLogger, destinations: createDestinationGuard(OPERATOR_TRUSTED) },
    );
    const s = await own.createSession();
    await own.destroy?.();
    expect(await s.validate?.()).toBe(false);
    await s.close();
    const error = await own.createSession().catch((e: unknown) => e);
    expect(isConnectorError(error, 'CLOSED')).toBe(true);
  });
});
