// Param binding: values reach DuckDB as the declared types, so comparisons are exact.
import { DuckDBInstance } from '@duckdb/node-api';
import { type BoundParam, isConnectorError } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { bindParams, microsFromIso } from './duckdb-params.js';

async function echo(sql: string, params: readonly BoundParam[]): Promise<unknown[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(`SET TimeZone = 'UTC'`);
    const prepared = await connection.prepare(sql);
    bindParams(prepared, params);
    const rows = await (await prepared.run()).getRows();
    return (rows[0] ?? []).map((v) => (v === null || typeof v !== 'object' ? v : String(v)));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('bindParams', () => {
  it('binds each param type so DuckDB sees the declared type', async () => {
    const values = await echo(
      'SELECT $1::BIGINT, $2::DOUBLE, $3::VARCHAR, $4::BOOLEAN, $5::DATE, $6::TIMESTAMPTZ = TIMESTAMPTZ $$2024-01-31 12:00:00.123456+00$$, $7::BIGINT',
      [
        { name: 'i', type: 'integer', array: false, value: 9007199254740993n },
        { name: 'n', type: 'number', array: false, value: 0.25 },
        { name: 's', type: 'string', array: false, value: "O'Brien" },
        { name: 'b', type: 'boolean', array: false, value: false },
        { name: 'd', type: 'date', array: false, value: '2024-02-29' },
        { name: 't', type: 'timestamp', array: false, value: '2024-01-31T12:00:00.123456Z' },
        { name: 'x', type: 'integer', array: false, value: null },
      ],
    );
    expect(values).toEqual([9007199254740993n, 0.25, "O'Brien", false, '2024-02-29', true, null]);
  });

  it('binds arrays as typed lists, including an empty and a NULL list', async () => {
    const values = await echo('SELECT len($1::VARCHAR[]), len($2::BIGINT[]), $3::DATE[] IS NULL', [
      { name: 'a', type: 'string', array: true, value: ['x', 'y'] },
      { name: 'b', type: 'integer', array: true, value: [] },
      { name: 'c', type: 'date', array: true, value: null },
    ]);
    expect(values).toEqual([2n, 0n, true]);
  });

  it('refuses a value of the wrong kind with PARAM_INVALID naming the param', async () => {
    const error = await echo('SELECT $1::DATE', [
      { name: 'day', type: 'date', array: false, value: 'yesterday' },
    ]).catch((e: unknown) => e);
    expect(isConnectorError(error, 'PARAM_INVALID')).toBe(true);
    expect((error as { details: { param?: string }[] }).details[0]?.param).toBe('day');
  });
});

describe('microsFromIso', () => {
  it('keeps sub-millisecond digits and honours offsets', () => {
    expect(microsFromIso('1970-01-01T00:00:00.000001Z')).toBe(1n);
    expect(microsFromIso('1969-12-31T23:59:59.5Z')).toBe(-500_000n);
    expect(microsFromIso('1970-01-01T01:00:00+01:00')).toBe(0n);
    expect(microsFromIso('not a time')).toBeUndefined();
  });
});
