// `files` connections through the SDK runtime: Parquet and CSV files written by the test with
// DuckDB's COPY … TO are queryable as views with bound params, and stay read-only.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  type Connector,
  createConnector,
  isConnectorError,
  type ParamValues,
  parseTemplate,
} from '@quarry/sdk-connector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEMORY_DIR_PREFIX } from './duckdb-driver.js';
import { duckdbPlugin } from './duckdb-plugin.js';

let dir: string;
let connector: Connector;

function query(sql: string, params: ParamValues = {}, on = connector) {
  return on.query({ template: parseTemplate(sql, duckdbPlugin.dialect), params });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quarry-duckdb-files-'));
  await mkdir(join(dir, 'sales'));
  await mkdir(join(dir, 'elsewhere'));
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const rows = `SELECT * FROM (VALUES (1, 'EU', 10.50::DECIMAL(10,2), DATE '2024-01-05'),
    (2, 'US', 20.00::DECIMAL(10,2), DATE '2024-02-05'), (3, 'EU', 5.25::DECIMAL(10,2), DATE '2024-03-05'))
    AS t(id, region, amount, day)`;
  await connection.run(`COPY (${rows}) TO '${join(dir, 'sales', 'part-1.parquet')}' (FORMAT parquet)`);
  await connection.run(`COPY (${rows}) TO '${join(dir, 'regions.csv')}' (HEADER)`);
  await connection.run(
    `COPY (SELECT 'hidden' AS secret) TO '${join(dir, 'elsewhere', 'other.csv')}' (HEADER)`,
  );
  connection.closeSync();
  instance.closeSync();
  connector = await createConnector(duckdbPlugin, {
    path: ':memory:',
    files: { sales: join(dir, 'sales', '*.parquet'), regions: join(dir, 'regions.csv') },
    threads: 1,
    memoryLimit: '256MB',
  });
});

afterAll(async () => {
  await connector?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('duckdb files connection', () => {
  it('queries a Parquet glob as a view with bound params', async () => {
    const result = await query(
      'SELECT region, sum(amount) AS revenue FROM sales WHERE day >= :from AND region = :region GROUP BY region',
      {
        from: { type: 'date', array: false, value: '2024-02-01' },
        region: { type: 'string', array: false, value: 'EU' },
      },
    );
    expect(result.columns.map((c) => [c.name, c.type])).toEqual([
      ['region', 'string'],
      ['revenue', 'decimal'],
    ]);
    expect(result.rows).toEqual([{ region: 'EU', revenue: 5.25 }]);
  });

  it('queries a CSV file as a view with an array param', async () => {
    const result = await query('SELECT id, day FROM regions WHERE id = ANY(:ids) ORDER BY id', {
      ids: { type: 'integer', array: true, value: [3, 1] },
    });
    expect(result.rows).toEqual([
      { id: 1, day: '2024-01-05' },
      { id: 3, day: '2024-03-05' },
    ]);
  });

  it('refuses writes and DDL, and writes no file even into an allowed directory', async () => {
    const target = join(dir, 'sales', 'copied.csv');
    for (const sql of [
      'CREATE TABLE t (a INTEGER)',
      'CREATE TEMP TABLE t AS SELECT * FROM sales',
      'INSERT INTO sales VALUES (4, NULL, NULL, NULL)',
      'DROP VIEW sales',
      `COPY (SELECT * FROM sales) TO '${target}'`,
    ]) {
      const error = await query(sql).catch((e: unknown) => e);
      expect(isConnectorError(error, 'QUERY_FAILED'), sql).toBe(true);
    }
    expect(existsSync(target)).toBe(false);
    expect((await query('SELECT count(*) AS n FROM sales')).rows).toEqual([{ n: 3 }]);
  });

  it('cannot read files outside the configured ones', async () => {
    const error = await query(`SELECT * FROM read_csv_auto('${join(dir, 'elsewhere', 'other.csv')}')`).catch(
      (e: unknown) => e,
    );
    expect(isConnectorError(error, 'QUERY_FAILED')).toBe(true);
    expect((error as Error).message).not.toContain('elsewhere');
  });

  it('reads an owner database whose views use files under allowedDirectories', async () => {
    const file = join(dir, 'owner.duckdb');
    const writer = await DuckDBInstance.create(file);
    const connection = await writer.connect();
    await connection.run(
      `CREATE VIEW other AS SELECT * FROM read_csv_auto('${join(dir, 'elsewhere', 'other.csv')}')`,
    );
    connection.closeSync();
    writer.closeSync();
    const denied = await createConnector(duckdbPlugin, { path: file });
    const allowed = await createConnector(duckdbPlugin, {
      path: file,
      allowedDirectories: [join(dir, 'elsewhere')],
    });
    try {
      const error = await query('SELECT secret FROM other', {}, denied).catch((e: unknown) => e);
      expect(isConnectorError(error, 'QUERY_FAILED')).toBe(true);
      expect((await query('SELECT secret FROM other', {}, allowed)).rows).toEqual([{ secret: 'hidden' }]);
    } finally {
      await denied.close();
      await allowed.close();
    }
  });

  it('removes the temporary database of a :memory: connection on close', async () => {
    const before = new Set(await readdir(tmpdir()));
    const own = await createConnector(duckdbPlugin, {
      path: ':memory:',
      files: { r: join(dir, 'regions.csv') },
    });
    expect((await query('SELECT count(*) AS n FROM r', {}, own)).rows).toEqual([{ n: 3 }]);
    // Other suites may open :memory: connections concurrently: look only at dirs born meanwhile.
    const born = (await readdir(tmpdir())).filter(
      (name) => name.startsWith(MEMORY_DIR_PREFIX) && !before.has(name),
    );
    expect(born.length).toBeGreaterThan(0);
    await own.close();
    const after = new Set(await readdir(tmpdir()));
    expect(born.some((name) => !after.has(name))).toBe(true);
  });
});
