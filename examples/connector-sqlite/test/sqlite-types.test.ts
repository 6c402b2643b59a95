// Column types from declared types and stored values: a declared type is kept only while every
// value fits it, so the SDK's conversion never changes what SQLite stored.
import { describe, expect, it } from 'vitest';
import type { WorkerValue } from '../src/sqlite-protocol.js';
import { declaredColumnType, sqliteColumns } from '../src/sqlite-types.js';

/** The logical type of a one-column result. */
function typeOf(declared: string, values: readonly WorkerValue[]): string {
  const [column] = sqliteColumns(
    ['c'],
    [declared],
    values.map((value) => [value]),
  );
  return column!.type;
}

describe('declaredColumnType', () => {
  it('maps declared type names the way SQLite users write them', () => {
    const cases: [string, string | undefined][] = [
      ['INTEGER', 'integer'],
      ['bigint', 'integer'],
      ['UNSIGNED BIG INT', 'integer'],
      ['BOOLEAN', 'boolean'],
      ['DATETIME', 'timestamp'],
      ['timestamp', 'timestamp'],
      ['DATE', 'date'],
      ['TIME', 'time'],
      ['JSON', 'json'],
      ['VARCHAR(200)', 'string'],
      ['NVARCHAR', 'string'],
      ['CLOB', 'string'],
      ['TEXT', 'string'],
      ['BLOB', 'bytes'],
      ['REAL', 'number'],
      ['DOUBLE PRECISION', 'number'],
      ['FLOAT', 'number'],
      ['DECIMAL(10,2)', 'decimal'],
      ['NUMERIC', 'decimal'],
      ['NUM', 'decimal'],
      ['', undefined],
      ['MONEY', undefined],
    ];
    for (const [declared, type] of cases) expect(declaredColumnType(declared), declared).toBe(type);
  });
});

describe('sqliteColumns', () => {
  it('keeps a declared type when every value fits it, NULLs included', () => {
    expect(typeOf('BOOLEAN', [1n, 0n, null])).toBe('boolean');
    expect(typeOf('DATE', ['2024-02-29', null])).toBe('date');
    expect(typeOf('TIMESTAMP', ['2024-01-31 12:34:56.789', '2024-01-31T12:00:00Z', '2024-01-31 12:00'])).toBe(
      'timestamp',
    );
    expect(typeOf('TIME', ['12:34', '12:34:56.5'])).toBe('time');
    expect(typeOf('DECIMAL(10,2)', [12n, 12.5])).toBe('decimal');
    expect(typeOf('REAL', [1n, 1.5])).toBe('number');
    expect(typeOf('BLOB', [new Uint8Array([1])])).toBe('bytes');
    expect(typeOf('INTEGER', [])).toBe('integer');
  });

  it('falls back to the stored values when a value does not fit the declared type', () => {
    // A BOOLEAN column holding 2 would turn into true: report the integers instead.
    expect(typeOf('BOOLEAN', [1n, 2n])).toBe('integer');
    // Unix seconds in a TIMESTAMP column would be read as milliseconds.
    expect(typeOf('TIMESTAMP', [1_700_000_000n])).toBe('integer');
    // A DATE column holding timestamps would be cut to the day.
    expect(typeOf('DATE', ['2024-01-31 12:00:00'])).toBe('string');
    expect(typeOf('INTEGER', [1n, 1.5])).toBe('number');
    // SQLite reports an undeclared column of a view as BLOB.
    expect(typeOf('BLOB', [7n])).toBe('integer');
  });

  it('types expressions by their stored values: integers, reals, text, blobs, mixed, only NULLs', () => {
    expect(typeOf('', [1n, -9223372036854775808n])).toBe('integer');
    expect(typeOf('', [1n, 2.5])).toBe('number');
    expect(typeOf('', ['a'])).toBe('string');
    expect(typeOf('', [new Uint8Array(0)])).toBe('bytes');
    expect(typeOf('', ['a', 1n])).toBe('unknown');
    expect(typeOf('', [null, null])).toBe('unknown');
    expect(typeOf('MONEY', [1n])).toBe('integer');
  });

  it('reports the declared type as nativeType, column by column', () => {
    expect(sqliteColumns(['a', 'b'], ['BIGINT', ''], [[1n, 'x']])).toEqual([
      { name: 'a', type: 'integer', nativeType: 'BIGINT' },
      { name: 'b', type: 'string' },
    ]);
  });
});
