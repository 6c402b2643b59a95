import { toJsonValue } from '@quarry/sdk-connector';
import { describe, expect, it } from 'vitest';
import { parseTrinoJson } from './trino-json.js';
import { columnTypeOf, parseTrinoType } from './trino-types.js';
import { trinoTimestampToIso, trinoValueConverter } from './trino-values.js';

/** A wire value (JSON text as Trino writes it) through the connector and the runtime, as a caller sees it. */
function roundTrip(type: string, wire: string): unknown {
  const parsed = parseTrinoType(type);
  const raw = trinoValueConverter(parsed)((parseTrinoJson(`[${wire}]`) as unknown[])[0]);
  return toJsonValue(columnTypeOf(parsed), raw);
}

describe('trino types', () => {
  it('parses parametric, multi-word and nested type names', () => {
    expect(parseTrinoType('decimal(18,2)')).toMatchObject({ base: 'decimal', params: [18, 2] });
    expect(parseTrinoType('timestamp(6) with time zone')).toMatchObject({
      base: 'timestamp with time zone',
      params: [6],
    });
    expect(parseTrinoType('interval day to second').base).toBe('interval day to second');
    const row = parseTrinoType(
      'array(row(a bigint, "b ""c""" varchar(3), time with time zone, map(varchar, double)))',
    );
    expect(row.base).toBe('array');
    const inner = row.children[0]!;
    expect(inner.base).toBe('row');
    expect(inner.fields).toEqual(['a', 'b "c"', undefined, undefined]);
    expect(inner.children.map((c) => c.base)).toEqual(['bigint', 'varchar', 'time with time zone', 'map']);
    expect(inner.children[3]!.children.map((c) => c.base)).toEqual(['varchar', 'double']);
  });

  it('maps Trino types onto logical column types', () => {
    const cases: Record<string, string> = {
      boolean: 'boolean',
      tinyint: 'integer',
      bigint: 'integer',
      real: 'number',
      double: 'number',
      'decimal(38,0)': 'decimal',
      'varchar(10)': 'string',
      'char(2)': 'string',
      uuid: 'string',
      varbinary: 'bytes',
      date: 'date',
      'time(3)': 'time',
      timestamp: 'timestamp',
      'timestamp(9) with time zone': 'timestamp',
      'array(integer)': 'array',
      'map(varchar, bigint)': 'json',
      'row(x integer)': 'json',
      json: 'json',
      'interval year to month': 'unknown',
      HyperLogLog: 'unknown',
      unknown: 'unknown',
    };
    for (const [type, logical] of Object.entries(cases))
      expect(columnTypeOf(parseTrinoType(type)), type).toBe(logical);
  });
});

describe('trino values', () => {
  it('keeps 64-bit integers exact, at the top level and nested', () => {
    expect(roundTrip('bigint', '9223372036854775807')).toBe('9223372036854775807');
    expect(roundTrip('bigint', '9007199254740991')).toBe(9007199254740991);
    expect(roundTrip('array(bigint)', '[1,-9223372036854775808]')).toEqual([1, '-9223372036854775808']);
    expect(roundTrip('map(varchar, bigint)', '{"k":9007199254740993,"__proto__":2}')).toEqual(
      JSON.parse('{"k":"9007199254740993","__proto__":2}'),
    );
  });

  it('reads DOUBLE, DECIMAL, DATE, TIME and VARBINARY as Trino sends them', () => {
    expect(roundTrip('double', '1.0E-10')).toBe(1e-10);
    expect(roundTrip('double', '"NaN"')).toBeNull();
    expect(roundTrip('double', '"-Infinity"')).toBeNull();
    expect(roundTrip('array(double)', '[1.5,"Infinity"]')).toEqual([1.5, null]);
    expect(roundTrip('decimal(38,2)', '"-9999999999999999.99"')).toBe('-9999999999999999.99');
    expect(roundTrip('decimal(10,2)', '"1234.50"')).toBe(1234.5);
    expect(roundTrip('date', '"2024-02-29"')).toBe('2024-02-29');
    expect(roundTrip('time(3)', '"12:34:56.789"')).toBe('12:34:56.789');
    expect(roundTrip('varbinary', '"AQL/"')).toBe('AQL/');
  });

  it('turns every timestamp form into ISO-8601 UTC', () => {
    expect(roundTrip('timestamp', '"2024-01-31 12:34:56.789"')).toBe('2024-01-31T12:34:56.789Z');
    expect(roundTrip('timestamp(6)', '"1969-07-20 20:17:40.123456"')).toBe('1969-07-20T20:17:40.123Z');
    expect(roundTrip('timestamp(0)', '"2038-01-19 03:14:08"')).toBe('2038-01-19T03:14:08.000Z');
    expect(roundTrip('timestamp with time zone', '"2024-06-30 23:59:59.999 +02:00"')).toBe(
      '2024-06-30T21:59:59.999Z',
    );
    expect(roundTrip('timestamp(3) with time zone', '"2024-01-31 12:34:56.789 UTC"')).toBe(
      '2024-01-31T12:34:56.789Z',
    );
    // Named zones, on both sides of a daylight-saving change.
    expect(trinoTimestampToIso('2024-01-15 10:00:00.000 America/New_York')).toBe('2024-01-15T15:00:00.000Z');
    expect(trinoTimestampToIso('2024-07-15 10:00:00.000 America/New_York')).toBe('2024-07-15T14:00:00.000Z');
    expect(trinoTimestampToIso('0099-03-01 00:00:00.000')).toBe('0099-03-01T00:00:00.000Z');
    expect(roundTrip('array(timestamp(3) with time zone)', '["1970-01-01 00:00:00.000 UTC",null]')).toEqual([
      '1970-01-01T00:00:00.000Z',
      null,
    ]);
    // What cannot be read stays Trino's text rather than becoming a wrong instant.
    expect(trinoTimestampToIso('+12345-01-01 00:00:00.000')).toBe('+12345-01-01 00:00:00.000');
    expect(trinoTimestampToIso('2024-01-01 00:00:00.000 Mars/Olympus')).toBe(
      '2024-01-01 00:00:00.000 Mars/Olympus',
    );
  });

  it('makes ROW an object by field name, MAP an object, and parses JSON text', () => {
    expect(
      roundTrip('row(x integer, "y z" varchar, ts timestamp)', '[1,"a","2024-01-31 12:34:56.789"]'),
    ).toEqual({
      x: 1,
      'y z': 'a',
      ts: '2024-01-31T12:34:56.789Z',
    });
    expect(roundTrip('row(integer, varchar)', '[1,"a"]')).toEqual({ _col0: 1, _col1: 'a' });
    expect(roundTrip('map(varchar, array(bigint))', '{"a":[9007199254740993]}')).toEqual({
      a: ['9007199254740993'],
    });
    expect(roundTrip('json', '"{\\"a\\":9007199254740993,\\"b\\":[true,null]}"')).toEqual({
      a: '9007199254740993',
      b: [true, null],
    });
    // A JSON string value stays a string, even when it looks like a number.
    expect(roundTrip('json', '"\\"123\\""')).toBe('123');
    expect(roundTrip('array(json)', '["{\\"k\\":1}","\\"123\\""]')).toEqual([{ k: 1 }, '123']);
  });
});
