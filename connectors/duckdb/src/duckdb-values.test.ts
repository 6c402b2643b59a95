// What DuckDB values look like once the runtime has made them JSON: every DuckDB type family,
// read from a real DuckDB result and passed through columnTypeFor, toRawValue and toJsonValue.
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { type JsonValue, toJsonValue } from '@quarry/sdk-connector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { columnTypeFor } from './duckdb-types.js';
import { isoFromMicros, toRawValue } from './duckdb-values.js';

let instance: DuckDBInstance;
let connection: DuckDBConnection;

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
  await connection.run(`SET TimeZone = 'UTC'`);
});

afterAll(() => {
  connection?.closeSync();
  instance?.closeSync();
});

/** One row of `sql` as the gateway would answer it: column name → [logical type, JSON value]. */
async function asJson(sql: string): Promise<Record<string, [string, JsonValue]>> {
  const result = await connection.run(sql);
  const rows = await result.getRows();
  const out: Record<string, [string, JsonValue]> = {};
  for (let i = 0; i < result.columnCount; i++) {
    const type = result.columnType(i);
    const logical = columnTypeFor(type);
    out[result.columnName(i)] = [logical, toJsonValue(logical, toRawValue(rows[0]?.[i] ?? null, type))];
  }
  return out;
}

describe('duckdb values as JSON', () => {
  it('keeps integers exact: safe ones as numbers, wider ones as strings', async () => {
    expect(
      await asJson(`SELECT 42::TINYINT AS t, 9007199254740993::BIGINT AS big, (-9223372036854775808)::BIGINT AS min,
        18446744073709551615::UBIGINT AS ubig, 170141183460469231731687303715884105727::HUGEINT AS huge`),
    ).toEqual({
      t: ['integer', 42],
      big: ['integer', '9007199254740993'],
      min: ['integer', '-9223372036854775808'],
      ubig: ['integer', '18446744073709551615'],
      huge: ['integer', '170141183460469231731687303715884105727'],
    });
  });

  it('keeps decimals exact and floats finite', async () => {
    expect(
      await asJson(`SELECT 1234.50::DECIMAL(18,2) AS d, 9999999999999999.99::DECIMAL(18,2) AS wide,
        12345678901234567890.123456789::DECIMAL(38,9) AS huge, 0.5::DOUBLE AS f, 'NaN'::DOUBLE AS nan`),
    ).toEqual({
      d: ['decimal', 1234.5],
      wide: ['decimal', '9999999999999999.99'],
      huge: ['decimal', '12345678901234567890.123456789'],
      f: ['number', 0.5],
      nan: ['number', null],
    });
  });

  it('renders dates, timestamps of every precision and times in ISO form, in UTC', async () => {
    expect(
      await asJson(`SELECT DATE '2024-02-29' AS d, DATE '1969-07-20' AS old,
        TIMESTAMP '2024-01-31 12:34:56.789' AS ts, TIMESTAMPTZ '2024-01-31 12:34:56+02' AS tz,
        TIMESTAMP_S '1969-07-20 20:17:40' AS s, TIMESTAMP_MS '2038-01-19 03:14:08.123' AS ms,
        TIMESTAMP_NS '1969-12-31 23:59:59.999999999' AS ns, TIME '12:30:00' AS t,
        'infinity'::TIMESTAMP AS inf`),
    ).toEqual({
      d: ['date', '2024-02-29'],
      old: ['date', '1969-07-20'],
      ts: ['timestamp', '2024-01-31T12:34:56.789Z'],
      tz: ['timestamp', '2024-01-31T10:34:56.000Z'],
      s: ['timestamp', '1969-07-20T20:17:40.000Z'],
      ms: ['timestamp', '2038-01-19T03:14:08.123Z'],
      ns: ['timestamp', '1969-12-31T23:59:59.999Z'],
      t: ['time', '12:30:00'],
      inf: ['timestamp', 'infinity'],
    });
  });

  it('renders text-like, binary and JSON values', async () => {
    expect(
      await asJson(`SELECT 'Zoë 🚀' AS s, 'b'::ENUM('a', 'b') AS e, '00000000-0000-0000-0000-000000000001'::UUID AS u,
        'ab'::BLOB AS bl, true AS flag, '{"a": [1, 2], "b": null}'::JSON AS j, INTERVAL 3 DAY AS iv`),
    ).toEqual({
      s: ['string', 'Zoë 🚀'],
      e: ['string', 'b'],
      u: ['string', '00000000-0000-0000-0000-000000000001'],
      bl: ['bytes', 'YWI='],
      flag: ['boolean', true],
      j: ['json', { a: [1, 2], b: null }],
      iv: ['unknown', '3 days'],
    });
  });

  it('makes nested lists, structs and maps JSON-safe by their element types', async () => {
    expect(
      await asJson(`SELECT [1, 9007199254740993]::BIGINT[] AS ints, [DATE '2024-01-01', NULL] AS days,
        [1.50, 2.25]::DECIMAL(10,2)[] AS decs, {'n': 1::HUGEINT, 'ts': TIMESTAMP '2000-01-01 00:00:00', 'j': '[1]'::JSON} AS st,
        MAP {'k': 2.5::DOUBLE} AS m, MAP {1: 'one'} AS im, [1, 2]::INTEGER[2] AS arr`),
    ).toEqual({
      ints: ['array', [1, '9007199254740993']],
      days: ['array', ['2024-01-01', null]],
      decs: ['array', [1.5, 2.25]],
      st: ['json', { n: 1, ts: '2000-01-01T00:00:00.000Z', j: [1] }],
      m: ['json', { k: 2.5 }],
      im: ['json', [{ key: 1, value: 'one' }]],
      arr: ['array', [1, 2]],
    });
  });

  it('returns NULL as null for every type', async () => {
    const row =
      await asJson(`SELECT NULL::BIGINT AS a, NULL::DECIMAL(10,2) AS b, NULL::DATE AS c, NULL::TIMESTAMP AS d,
      NULL::INTEGER[] AS e, NULL::JSON AS f`);
    expect(Object.values(row).map(([, v]) => v)).toEqual([null, null, null, null, null, null]);
  });
});

describe('isoFromMicros', () => {
  it('floors before the epoch and refuses what a Date cannot hold', () => {
    expect(isoFromMicros(-1n)).toBe('1969-12-31T23:59:59.999Z');
    expect(isoFromMicros(0n)).toBe('1970-01-01T00:00:00.000Z');
    expect(isoFromMicros(9_223_372_036_854_775_807n)).toBeUndefined();
  });
});
