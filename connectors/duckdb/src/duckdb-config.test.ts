// The DuckDB config schema: what an owner may write, what is refused at creation, and that the
// plugin declares its connections read the gateway host's files.
import { describe, expect, it } from 'vitest';
import { duckdbConfigSchema, readerFor } from './duckdb-config.js';
import { directoryOf, fileViewStatements } from './duckdb-driver.js';
import { duckdbErrorClass, mapDuckdbError } from './duckdb-errors.js';
import { duckdbPlugin } from './duckdb-plugin.js';

describe('duckdbConfigSchema', () => {
  it('accepts a database file, or :memory: with files, threads and a memory limit', () => {
    expect(duckdbConfigSchema.parse({ path: '/data/w.duckdb' })).toEqual({ path: '/data/w.duckdb' });
    const config = {
      path: ':memory:',
      files: { sales: '/d/*.parquet', r: 'r.csv.gz' },
      threads: 2,
      memoryLimit: '512MB',
    };
    expect(duckdbConfigSchema.parse(config)).toEqual(config);
  });

  it('refuses unknown fields, bad view names, unknown file kinds and bad limits', () => {
    for (const bad of [
      {},
      { path: '' },
      { path: 'x', password: 'p' },
      { path: ':memory:', files: { 'sales; DROP': '/d/a.parquet' } },
      { path: ':memory:', files: { sales: '/d/a.xlsx' } },
      { path: 'x', threads: 0 },
      { path: 'x', memoryLimit: 'lots' },
    ]) {
      expect(duckdbConfigSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });
});

describe('duckdbPlugin', () => {
  it("declares that every connection reads the gateway host's own files", () => {
    for (const config of [{ path: '/data/w.duckdb' }, { path: ':memory:', files: { s: '/d/*.parquet' } }]) {
      expect(duckdbPlugin.hostAccess?.(duckdbConfigSchema.parse(config))).toEqual(['files']);
    }
  });
});

describe('file views', () => {
  it('picks the reader by extension and quotes paths as SQL strings', () => {
    expect(readerFor('a.PARQUET')).toBe('read_parquet');
    expect(readerFor('a.tsv.gz')).toBe('read_csv_auto');
    expect(readerFor('a.ndjson')).toBe('read_json_auto');
    expect(fileViewStatements({ v: "/d/o'brien.csv" })).toEqual([
      `CREATE OR REPLACE TEMP VIEW "v" AS SELECT * FROM read_csv_auto('/d/o''brien.csv')`,
    ]);
  });

  it('opens only the fixed directory of a glob', () => {
    expect(directoryOf('/data/sales/*.parquet')).toBe('/data/sales/');
    expect(directoryOf('/data/sales/2024-*/part.parquet')).toBe('/data/sales/');
    expect(directoryOf('/data/x/')).toBe('/data/');
  });
});

describe('mapDuckdbError', () => {
  it('keeps the error class as driverCode and never the message', () => {
    const error = mapDuckdbError(new Error(`Catalog Error: Table with name secret_table does not exist!`));
    expect(error.code).toBe('QUERY_FAILED');
    expect(error.driverCode).toBe('Catalog');
    expect(error.message).not.toContain('secret_table');
    expect(duckdbErrorClass(new Error('Invalid Input Error: x'))).toBe('Invalid Input');
    expect(mapDuckdbError(new Error('boom')).driverCode).toBeUndefined();
  });
});
